"""The coder agent through a real kernel: its tools run in its bwrap sandbox on a real
git repository the user granted, its loop talks to the scripted model through the
kernel's gateway (the real openai client), and an agent it scaffolds is installed
through the normal review."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from coder_repos import CALC, make_repo
from kernelproc import KernelProc, start_kernel
from llm_server import Call, FakeLLMServer, Text, ToolCalls

CODER = Path(__file__).resolve().parents[2] / "agents" / "coder"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("coder") / "home", fake.kernel_env(model="coder-1"))
    done = k.cli("install", str(CODER), "--yes")
    assert done.returncode == 0, done.stderr
    assert k.cli("grant", "coder", "llm").returncode == 0
    yield k
    k.stop()


@pytest.fixture(scope="module")
def repo(kernel: KernelProc, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("user") / "calc", CALC)
    done = kernel.cli("grant", "coder", f"fs:{root}")
    assert done.returncode == 0, done.stderr
    return root


def answer(kernel: KernelProc, function: str, **args: Any) -> tuple[int, dict]:
    # As the user who asked for it: commit is confirm=True, so the request says it is confirmed.
    with kernel.client() as client:
        response = client.post(f"/v1/agents/coder/functions/{function}", json={"args": args, "confirm": True})
    return response.status_code, response.json()


def call(kernel: KernelProc, function: str, **args: Any) -> Any:
    status, body = answer(kernel, function, **args)
    assert status == 200, body
    return body["result"]


def error(kernel: KernelProc, function: str, **args: Any) -> str:
    status, body = answer(kernel, function, **args)
    assert status >= 400, body
    return body["error"]["message"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_every_tool_on_a_granted_git_repository(kernel: KernelProc, repo: Path) -> None:
    listed = call(kernel, "workspaces")
    assert listed["current"] == "calc" and listed["workspaces"][0]["root"] == "/mnt/calc"
    assert call(kernel, "glob", pattern="*.py")["files"] == ["calc.py", "test_calc.py"]
    assert call(kernel, "grep", pattern=r"def \w+", glob="calc.py")["count"] == 2
    assert call(kernel, "search", query="add numbers")["results"][0]["name"] == "add"
    assert call(kernel, "test")["summary"].startswith("1 failed")
    read = call(kernel, "read", path="calc.py", limit=2)
    assert read["content"] == "1\tdef add(a, b):\n2\t    return a - b"
    broken = call(kernel, "edit", path="calc.py", old="return a - b", new="return a + bb")
    assert [d["code"] for d in broken["lint"]["introduced"]] == ["F821"]
    fixed = call(kernel, "edit", path="calc.py", old="a + bb", new="a + b")
    assert fixed["lint"]["ok"] and call(kernel, "test")["passed"]
    assert call(kernel, "write", path="notes/plan.md", content="# plan\n")["created"]
    assert call(kernel, "lint", paths=["calc.py"])["count"] == 0
    ran = call(kernel, "run", cmd="git status --porcelain && ls /mnt && echo $HOME")
    assert ran["exit_code"] == 0 and "?? notes/" in ran["output"] and " M calc.py" in ran["output"]
    assert call(kernel, "todo", items=[{"text": "fix add", "status": "done"}])["open"] == 0
    changes = call(kernel, "diff")
    assert set(changes["files"]) == {"calc.py", "notes/plan.md"} and "+    return a + b" in changes["diff"]
    done = call(kernel, "finish", summary="add adds")
    assert done["summary"] == "add adds" and done["diff"] == changes["diff"]
    assert git(repo, "log", "--oneline").count("\n") == 1  # nothing committed by any of that
    committed = call(kernel, "commit", message="Fix add")
    assert git(repo, "log", "-1", "--format=%s").strip() == "Fix add" and len(committed["commit"]) == 40
    assert git(repo, "status", "--porcelain") == ""


def test_the_shipped_functions_json_matches_the_code(kernel: KernelProc) -> None:
    from dreamer.contracts.archive import pack

    with kernel.client() as client:
        built = client.post("/v1/build", content=pack(CODER), headers={"content-type": "application/gzip"})
    assert built.status_code == 200, built.text
    shipped = json.loads((CODER / "functions.json").read_text())
    assert built.json()["functions"] == shipped["functions"], "run `dreamer build agents/coder` and bump its version"


def test_folders_are_granted_one_by_one_under_fs_star(kernel: KernelProc, repo: Path) -> None:
    refused = kernel.cli("grant", "coder", "fs:*")
    assert refused.returncode != 0 and "names no folder" in refused.stderr
    rows = {r["scope"]: r for r in kernel.cli_json("permissions", "coder")}
    assert rows["fs:*"]["granted"] is False and "folders you grant it later" in rows["fs:*"]["sentence"]
    assert rows[f"fs:{repo}"]["granted"] is True
    assert kernel.cli("grant", "coder", "tool:x").returncode != 0  # still only what the manifest declares
    # Reinstalling (an upgrade) keeps the folders the user chose while fs:* stays declared.
    assert kernel.cli("install", str(CODER), "--yes").returncode == 0
    rows = {r["scope"]: r for r in kernel.cli_json("permissions", "coder")}
    assert rows[f"fs:{repo}"]["granted"] is True and rows["fs:*"]["granted"] is False


def test_bad_input_gets_clear_answers_in_bounded_time(kernel: KernelProc, repo: Path, tmp_path: Path) -> None:
    assert "outside the workspace" in error(kernel, "read", path="/etc/passwd")
    assert "outside the workspace" in error(kernel, "write", path="../escape.txt", content="x")
    assert not (repo.parent / "escape.txt").exists()
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 1000)
    assert "binary" in error(kernel, "read", path="blob.bin")
    call(kernel, "read", path="calc.py")
    (repo / "calc.py").write_text((repo / "calc.py").read_text() + "# the user's own change\n")
    assert "changed since it was last read" in error(kernel, "edit", path="calc.py", old="a * b", new="b * a")
    endless = call(kernel, "run", cmd="while true; do :; done", timeout=1)
    assert endless["timed_out"] and endless["exit_code"] != 0
    flood = call(kernel, "run", cmd="head -c 200000000 /dev/zero | tr '\\0' x", timeout=25)
    assert flood["stopped"] or flood["output_bytes"] == 200_000_000
    assert len(flood["output"]) < 20_000
    # The kernel and the agent keep serving.
    assert call(kernel, "glob", pattern="calc.py")["count"] == 1


def test_a_scripted_model_fixes_a_failing_test_through_the_kernel(kernel: KernelProc, fake: FakeLLMServer,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    root = make_repo(tmp_path_factory.mktemp("task") / "shop", {
        "shop/__init__.py": "",
        "shop/cart.py": "def total(prices):\n    return sum(prices[1:])\n",
        "tests/test_cart.py": "from shop.cart import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n",
        "pytest.ini": "[pytest]\npythonpath = .\n",
    })
    assert kernel.cli("grant", "coder", f"fs:{root}").returncode == 0
    call(kernel, "open_workspace", source="shop")
    fake.reset()
    fake.script(
        ToolCalls([Call("search", {"query": "cart total"}), Call("read", {"path": "shop/cart.py"}),
                   Call("read", {"path": "tests/test_cart.py"})]),
        ToolCalls([Call("edit", {"path": "shop/cart.py", "old": "sum(prices[1:])", "new": "sum(prices)"})]),
        ToolCalls([Call("test", {})]),
        ToolCalls([Call("finish", {"summary": "total skipped the first price"})]),
    )
    status, body = answer(kernel, "run_task", instruction="make tests/test_cart.py pass")
    assert status == 200, body
    result = body["result"]
    assert result["status"] == "finished" and result["files"] == ["shop/cart.py"]
    assert result["stats"]["parallel_batches"] == 1 and result["stats"]["tool_calls"] == 6
    assert fake.pending == 0 and len(fake.requests) == 4
    first = fake.requests[0].body
    assert {t["function"]["name"] for t in first["tools"]} >= {"read", "edit", "search", "test", "finish"}
    tool_results = [m for m in fake.requests[3].body["messages"] if m["role"] == "tool"]
    assert '"passed": true' in tool_results[-1]["content"]
    assert (root / "shop/cart.py").read_text() == "def total(prices):\n    return sum(prices)\n"
    assert git(root, "log", "--oneline").count("\n") == 1  # not committed
    # The user can follow the steps in the invocation's log (dreamer logs --run ID).
    with kernel.client() as client:
        logs = client.get(f"/v1/invocations/{body['invocation_id']}").json()["logs"]
    said = json.dumps(logs)
    assert "step 1: search, read, read" in said and "finished after 4 steps" in said


def test_start_task_runs_the_loop_in_the_background(kernel: KernelProc, fake: FakeLLMServer,
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    root = make_repo(tmp_path_factory.mktemp("bgtask") / "greet", {
        "greet.py": "def hello(name):\n    return 'Hi ' + name\n",
    })
    assert kernel.cli("grant", "coder", f"fs:{root}").returncode == 0
    call(kernel, "open_workspace", source="greet")
    fake.reset()
    fake.script(
        ToolCalls([Call("read", {"path": "greet.py"})]),
        ToolCalls([Call("edit", {"path": "greet.py", "old": "'Hi '", "new": "'Hello, '"})]),
        ToolCalls([Call("finish", {"summary": "friendlier greeting"})]),
    )
    status, body = answer(kernel, "start_task", instruction="greet with Hello")
    assert status == 200 and body["status"] == "queued" and body["result"] is None, body
    deadline = time.monotonic() + 90
    with kernel.client() as client:
        while True:
            run = client.get(f"/v1/invocations/{body['invocation_id']}").json()
            if run["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
                break
            time.sleep(0.3)
    assert run["status"] == "succeeded", run
    assert run["result"]["status"] == "finished" and run["result"]["files"] == ["greet.py"]
    assert "Hello, " in (root / "greet.py").read_text()
    assert "finished after 3 steps" in json.dumps(run["logs"])


def test_a_scaffolded_agent_builds_tests_and_installs_through_the_review(kernel: KernelProc,
                                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("agents") / "mine"
    root.mkdir()
    assert kernel.cli("grant", "coder", f"fs:{root}").returncode == 0
    call(kernel, "open_workspace", source="mine")
    made = call(kernel, "scaffold_agent", name="reminders", functions=["add_reminder", "list_reminders"], workspace="mine")
    assert made["functions"] == ["add_reminder", "list_reminders"] and made["tests"]["passed"], made["tests"]
    assert made["host_path"] == str(root / "reminders") and made["workspace"] == "mine"
    # The examples name the agent: installed, it does not take "add milk" from grocery.
    spec = json.loads((root / "reminders/functions.json").read_text())["functions"][0]
    assert spec["examples"] == ["add reminder with reminders: {text}", "ask reminders to add reminder: {text}"]
    assert json.loads((root / "reminders/functions.json").read_text())["format"] == 1
    assert "not a valid agent name" in error(kernel, "scaffold_agent", name="Bad Name")
    assert "exists already" in error(kernel, "scaffold_agent", name="reminders", workspace="mine")
    # The review a person sees: nothing is installed until they approve it.
    reviewed = kernel.cli("install", made["host_path"])
    assert reviewed.returncode != 0 and "Functions: add_reminder, list_reminders" in reviewed.stdout
    assert kernel.cli("call", "reminders", "list_reminders").returncode != 0
    approved = kernel.cli("install", made["host_path"], "--yes")
    assert approved.returncode == 0, approved.stderr
    installed = kernel.cli_json("call", "reminders", "add_reminder", '{"text": "water the plants"}')
    assert installed["result"] == {"function": "add_reminder", "text": "water the plants"}


def test_a_new_agent_goes_to_coders_own_workspace_unless_the_user_names_one(kernel: KernelProc,
                                                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("repo") / "repo"
    root.mkdir()
    assert kernel.cli("grant", "coder", f"fs:{root}").returncode == 0
    call(kernel, "open_workspace", source="repo")  # the user's repository is the current workspace
    made = call(kernel, "scaffold_agent", name="birdlog", functions=["log_bird"])
    assert made["workspace"] == "new-agents" and made["host_path"] is None and made["tests"]["passed"], made
    assert list(root.iterdir()) == []  # nothing written into the repository
    own = kernel.home / "users" / "me" / "agents" / "coder" / "data" / "workspaces" / "new-agents" / "birdlog"
    assert (own / "agent.yaml").is_file()
    assert "/users/me/agents/coder/data/workspaces/new-agents/birdlog" in made["install"]
    assert "no workspace 'nowhere'" in error(kernel, "scaffold_agent", name="owls", workspace="nowhere")
    # From coder's data, on the kernel's machine, the bundle installs through the usual review.
    installed = kernel.cli("install", str(own), "--yes")
    assert installed.returncode == 0, installed.stderr
    assert kernel.cli_json("call", "birdlog", "log_bird", '{"text": "a wren"}')["result"] == {"function": "log_bird", "text": "a wren"}


def test_a_local_repository_is_cloned_into_the_agents_data(kernel: KernelProc, repo: Path) -> None:
    opened = call(kernel, "open_workspace", source="/mnt/calc", name="calc-copy")
    assert opened["root"] == "/data/workspaces/calc-copy" and opened["source"].startswith("clone:git clone")
    assert call(kernel, "read", path="calc.py")["total_lines"] >= 6
    call(kernel, "write", path="scratch.py", content="X = 1\n")
    assert not (repo / "scratch.py").exists()  # the clone is the agent's, not the user's folder
    assert "cloning a git URL is not built yet" in error(kernel, "open_workspace", source="https://example.com/repo.git")
    call(kernel, "open_workspace", source="calc")


def test_create_agent_scaffolds_then_lets_the_model_implement_it(kernel: KernelProc, fake: FakeLLMServer,
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("made") / "made"
    root.mkdir()
    assert kernel.cli("grant", "coder", f"fs:{root}").returncode == 0
    call(kernel, "open_workspace", source="made")
    server, test = "echo/echo/server.py", "echo/tests/test_server.py"
    fake.reset()
    fake.script(
        Text('{"name": "echo", "functions": ["shout"]}'),  # the model names the agent and its functions
        ToolCalls([Call("read", {"path": server}), Call("read", {"path": test})]),
        ToolCalls([Call("edit", {"path": server, "old": '"text": text}', "new": '"text": text.upper()}'}),
                   Call("edit", {"path": test, "old": '"text": "some text"}', "new": '"text": "SOME TEXT"}'})]),
        ToolCalls([Call("finish", {"summary": "shout answers in capitals"})]),
    )
    made = call(kernel, "create_agent", description="repeat what I say in capitals", workspace="made")
    assert made["task"]["status"] == "finished" and made["functions"] == ["shout"]
    assert made["tests"]["passed"], made["tests"]
    assert "text.upper()" in (root / server).read_text() and made["host_path"] == str(root / "echo")
