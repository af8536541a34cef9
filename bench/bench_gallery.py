"""What the gallery's in-memory search costs as the catalogue grows, and what a publish costs.

Fills a gallery store (SQLite in a temporary folder) with N synthetic packages (each with
3 versions, 5 functions with 2 examples each), then times `Gallery.search` (load the
catalogue + rapidfuzz ranking) for a few queries; and times one real signed publish of a
small bundle (hash, safe unpack, signature, write).

    .venv/bin/python bench/bench_gallery.py --packages 500 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dreamer.contracts.gallery_upload import signed_upload
from dreamer.gallery.rules import Gallery, GallerySettings
from dreamer.contracts.signing import public_key_text
from dreamer.gallery.store import Package, Publisher, Version
from dreamer.contracts.archive import pack

WORDS = ("grocery list notes recipe calendar weather travel budget email music photo fitness sleep "
         "reading garden pets movies news translate summarize invoice meeting reminder").split()
QUERIES = ["grocery", "summarize emails", "wether", "plan a trip budget"]


def fill(gallery: Gallery, count: int) -> None:
    with gallery.store.session() as s:
        pub = Publisher(name="bench", public_key="x", fingerprint="f", token_sha256="t")
        s.add(pub)
        s.flush()
        for i in range(count):
            w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)]
            pkg = Package(name=f"{w[0]}-{i}", publisher_id=pub.id, kind="agent")
            s.add(pkg)
            s.flush()
            functions = [{"name": f"{w[1]}_{j}", "description": f"Do {w[j % 3]} things for {w[2]}.",
                          "examples": [f"{w[1]} my {w[2]}", f"show {w[0]}"]} for j in range(5)]
            manifest = {"name": pkg.name, "title": f"{w[0].title()} {w[1]}", "description": f"Helps with {' and '.join(w)}."}
            for v in ("1.0.0", "1.1.0", "2.0.0"):
                s.add(Version(package_id=pkg.id, version=v, sha256="0" * 64, size=1, signature="s", scopes=[],
                              manifest=manifest, functions=functions))


def publish_once(root: Path) -> float:
    gallery = Gallery(GallerySettings.at(root / "pub"))
    key = Ed25519PrivateKey.generate()
    token = gallery.register("alice", public_key_text(key.public_key()))["token"]
    folder = root / "bundle"
    (folder / "hello").mkdir(parents=True)
    (folder / "hello" / "__init__.py").write_text("")
    (folder / "hello" / "server.py").write_text("X = 1\n" * 2000)
    (folder / "functions.json").write_text(json.dumps({"format": 1, "functions": [{"name": "hi"}]}))
    (folder / "agent.yaml").write_text("name: hello\nversion: 1.0.0\ntitle: Hello\ndescription: Hi.\npublisher: alice\nentry: hello.server\n")
    data = pack(folder)
    upload, _ = signed_upload(data, key)
    start = time.perf_counter()
    gallery.publish(token, upload, data)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.packages:
            gallery = Gallery(GallerySettings.at(Path(tmp) / f"g{count}"))
            fill(gallery, count)
            times = []
            for _ in range(args.runs):
                for query in QUERIES:
                    start = time.perf_counter()
                    gallery.search(query)
                    times.append((time.perf_counter() - start) * 1000)
            results[f"search, {count} packages"] = {"p50_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}
        results["publish (small bundle, SQLite)"] = {"ms": round(publish_once(Path(tmp)), 1)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
