"""What checking a bundle's digest costs each worker start (issue 14, finding 1).

A worker start re-hashes the installed bundle (kernel/install/integrity.py). This times
tree_digest over the starter agents' folders, the same walk the check does.

    .venv/bin/python bench/bench_bundle_digest.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from dreamer.contracts.archive import DEFAULT_EXCLUDES, tree_digest

AGENTS = Path(__file__).resolve().parent.parent / "agents"
ROUNDS = 30


def main() -> None:
    for folder in sorted(p for p in AGENTS.iterdir() if (p / "agent.yaml").is_file()):
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            tree_digest(folder, exclude=DEFAULT_EXCLUDES)
            times.append((time.perf_counter() - start) * 1000)
        files = sum(1 for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        print(f"{folder.name:14} {files:3} files  median {statistics.median(times):6.2f} ms  max {max(times):6.2f} ms")


if __name__ == "__main__":
    main()
