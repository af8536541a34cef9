import sys
from pathlib import Path

# clusterproc is imported by its own name, by the test here and by bench/bench_cluster.py.
sys.path.insert(0, str(Path(__file__).parent))
