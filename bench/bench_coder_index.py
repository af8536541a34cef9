"""The coder agent's codebase index on a synthetic repository.

Generates a repository of N files (Python, JavaScript, Markdown; about 60 lines each),
then measures: the first full index, loading the stored index in a new worker, a
refresh with nothing changed, a refresh after a one-file change (the whole walk
included), the single-file update an edit triggers, and query latency (p50/p95 over
a few hundred queries). In-process, as the agent's worker runs it (the sandbox adds
nothing to this work: it is file reads and Python).

    .venv/bin/python bench/bench_coder_index.py              # 5,000 files, about a minute
    .venv/bin/python bench/bench_coder_index.py --files 500 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_calls import pct

WORDS = ["user", "session", "token", "cart", "price", "order", "invoice", "parse", "config", "render", "widget", "cache", "queue", "retry", "schedule", "report", "export", "import", "account", "payment", "refund", "shipping", "address", "email", "notify", "search", "index", "chunk", "stream", "buffer", "socket", "client", "server", "handler", "request", "response", "route", "model", "view"]


def make_repo(root: Path, files: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(files):
        folder = root / f"pkg{i % 50}" / f"sub{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        kind = i % 10
        a, b, c = rng.sample(WORDS, 3)
        if kind < 6:
            body = [f'"""Module {i}: {a} and {b}."""', "import os", ""]
            for f in range(6):
                x, y = rng.sample(WORDS, 2)
                body += [f"def {x}_{y}_{i}_{f}(value, {c}=None):", f'    """{x.capitalize()} the {y} for {c}."""',
                         f"    result = [{x!r}, {y!r}, value]", "    for item in result:",
                         f"        if item == {c}:", "            return item", "    return None", ""]
            body += [f"class {a.capitalize()}{b.capitalize()}{i}:", f"    kind = {c!r}", "",
                     "    def run(self):", f"        return {a}_{b}_helper(self.kind)", ""]
            (folder / f"mod{i}.py").write_text("\n".join(body))
        elif kind < 9:
            body = [f"// {a} {b}", f"export function {a}{b.capitalize()}{i}(value) {{", f"  return value + '{c}';", "}", ""]
            body += [f"export class {c.capitalize()}{i} {{", "  run() {", f"    return '{a}';", "  }", "}", ""] * 4
            (folder / f"file{i}.js").write_text("\n".join(body))
        else:
            (folder / f"notes{i}.md").write_text(f"# {a} {b}\n\n" + " ".join(rng.choices(WORDS, k=300)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="coder-bench-") as tmp:
        root, data = Path(tmp) / "repo", Path(tmp) / "data"
        root.mkdir()
        data.mkdir()
        os.environ["DREAMER_DATA_DIR"] = str(data)
        os.environ["DREAMER_MOUNTS"] = json.dumps({str(root): f"fs:{root}"})
        make_repo(root, args.files)
        from dreamer.agents.coder.coder import index, tools, workspace

        ws = workspace.current()
        out: dict[str, float | int] = {"files": args.files}

        started = time.perf_counter()
        idx = index.index_for(ws)
        idx.refresh(force=True)
        out["full_index_s"] = time.perf_counter() - started
        out["chunks"] = len(idx.docs)
        out["terms"] = len(idx.postings)

        index.forget(ws)
        started = time.perf_counter()
        idx = index.index_for(ws)
        out["load_stored_s"] = time.perf_counter() - started

        started = time.perf_counter()
        assert idx.refresh(force=True)["changed"] == 0
        out["refresh_unchanged_s"] = time.perf_counter() - started

        target = next(p for p in sorted(root.rglob("*.py")))
        rel = str(target.relative_to(root))
        target.write_text(target.read_text() + "\n\ndef freshly_added_needle():\n    return 42\n")
        started = time.perf_counter()
        assert idx.refresh(force=True)["changed"] == 1
        out["refresh_one_change_s"] = time.perf_counter() - started
        assert idx.query("freshly added needle", 1)[0][1].path == rel

        tools.read(ws, rel)
        started = time.perf_counter()
        tools.edit(ws, rel, "freshly_added_needle", "renamed_needle")
        out["edit_with_lint_and_index_s"] = time.perf_counter() - started
        target.write_text(target.read_text() + "\n# one more line\n")
        started = time.perf_counter()
        idx.update(rel)
        out["single_file_update_s"] = time.perf_counter() - started

        rng = random.Random(3)
        samples = []
        for _ in range(args.queries):
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
            started = time.perf_counter()
            idx.query(query, 10)
            samples.append(time.perf_counter() - started)
        out["query_p50_ms"] = statistics.median(samples) * 1000
        out["query_p95_ms"] = pct(samples, 95) * 1000
        out["query_max_ms"] = max(samples) * 1000
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    if args.json:
        print(json.dumps(out, indent=2))
        return
    for key, value in out.items():
        print(f"{key:28} {value:.3f}" if isinstance(value, float) else f"{key:28} {value}")


if __name__ == "__main__":
    sys.exit(main())
