"""The embedding model loads from the wheel alone: no network, no download, no cache folder.

Each check runs in a fresh process inside a network namespace of its own (no
interface but a downed loopback) with an empty HOME, so a loader that reached for
Hugging Face or a user cache would fail here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0,
                                reason="needs unshare and root for a network namespace")

LOAD = """
import json, time
t = time.perf_counter()
from dreamer.sidekick.planner.language import embeddings
vectors = embeddings.embed(["add milk to my grocery list", "put eggs on the shopping list", "turn on the lights"])
same = embeddings.model() is embeddings.model()
print(json.dumps({"seconds": time.perf_counter() - t, "shape": list(vectors.shape), "same": same,
                  "near": float(vectors[0] @ vectors[1]), "far": float(vectors[0] @ vectors[2])}))
"""

LIBRARY_DEFAULT = """
from wordllama import WordLlama
WordLlama.load()  # the library's own lookup: the tokenizer under tokenizer/, then a download
"""


def _offline(code: str, tmp_path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.run(["unshare", "--net", sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env=env, timeout=120)


def test_the_model_loads_with_the_network_unreachable(tmp_path) -> None:
    done = _offline(LOAD, tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"embedding model loaded in {got['seconds']:.2f} s")
    assert got["shape"] == [3, 256]
    assert got["same"], "the model is loaded once per process"
    assert got["near"] > got["far"] + 0.2, got  # the vectors mean something
    assert got["seconds"] < 10  # a generous bound: about 1 s on a quiet machine; a download attempt hangs
    assert not (tmp_path / ".cache").exists(), "nothing was written to a user cache"


SAME_AS_LIBRARY = """
import json
from wordllama import WordLlama
from dreamer.sidekick.planner.language import embeddings
texts = ["plan a vegetarian dinner for tomorrow", "how many absences in october", "x"]
theirs = WordLlama.load(cache_dir=embeddings.package_folder(), disable_download=True).embed(texts, norm=True)
print(json.dumps(float(abs(theirs - embeddings.embed(texts)).max())))
"""


def test_our_loader_gives_the_librarys_vectors(tmp_path) -> None:
    # The library pointed at its packaged files (downloads off) and our direct loader agree.
    done = _offline(SAME_AS_LIBRARY, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) < 1e-5


def test_the_librarys_default_lookup_would_have_gone_to_the_network(tmp_path) -> None:
    # Why embeddings.py points the loader at the packaged files: without that it tries Hugging Face.
    done = _offline(LIBRARY_DEFAULT, tmp_path)
    assert done.returncode != 0
    assert "huggingface" in done.stderr.lower() or "download" in done.stderr.lower(), done.stderr[-2000:]
