"""`dreamer test` with the test kit (and `dreamer dev` showing log fields): a bundle's tests take the `kit` fixture and run in the
real sandbox, against a fake whose contract is a copy of grocery's functions, and against the
real grocery agent started from a folder inside the bundle."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path

from kernelproc import DREAMER, KernelProc, write_bundle

GROCERY = Path(__file__).resolve().parents[2] / "agents" / "grocery"

SERVER = '''
from dreamer.sdk import Context, function


@function(exported=True, examples=["plan dinner with {dish}"])
def plan(ctx: Context, dish: str, needs: list[str]) -> dict:
    """Remember the dish and put what it needs on the grocery list."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS dishes (name TEXT)")
    ctx.db.execute("INSERT INTO dishes (name) VALUES (?)", (dish,))
    added = ctx.call("grocery", "add_items", items=needs)
    ctx.log("planned", dish=dish)
    return {"dish": dish, "added": added["added"]}


@function(examples=["plan with the wrong argument"])
def misuse(ctx: Context) -> None:
    """Calls grocery with an argument it does not take."""
    ctx.call("grocery", "add_items", things=["milk"])
'''

TESTS = '''
import os
from pathlib import Path

import pytest
from dreamer.sdk.testing import ContractError

CALLEES = Path(__file__).parent / "callees"


def test_in_the_sandbox_with_a_fake(kit):
    assert os.environ["DREAMER_AGENT_DIR"] == "/agent"
    kit.fake("grocery", "add_items", returns={"added": ["flour"], "already_there": [], "items": ["flour"]})
    assert kit.call("plan", dish="bread", needs=["flour"])["added"] == ["flour"]
    kit.assert_called("grocery", "add_items", items=["flour"])
    assert kit.logs[-1].fields == {"dish": "bread"}
    with kit.db() as conn:
        assert conn.execute("SELECT count(*) FROM dishes").fetchone()[0] == 1


def test_with_the_real_grocery(kit):
    kit.install(CALLEES / "grocery-bundle")
    assert kit.call("plan", dish="soup", needs=["leek"])["added"] == ["leek"]
    assert kit.call("plan", dish="stew", needs=["leek", "beef"])["added"] == ["beef"]


def test_contract(kit):
    kit.fake("grocery", "add_items", returns={"added": []})
    with pytest.raises(ContractError, match="do not fit grocery's parameters"):
        kit.call("misuse")


def test_contract_unchecked(kit):
    kit.fake("grocery", "add_items", returns={"added": []})
    kit.call("misuse")
'''


def test_dreamer_test_runs_the_kit_in_the_sandbox(kernel: KernelProc, tmp_path: Path) -> None:
    folder = tmp_path / "planner"
    (folder / "planner").mkdir(parents=True)
    (folder / "planner" / "__init__.py").write_text("")
    (folder / "planner" / "server.py").write_text(textwrap.dedent(SERVER))
    (folder / "agent.yaml").write_text(textwrap.dedent("""\
        name: planner
        version: 0.1.0
        title: Planner
        description: Plans dinners and puts what they need on the grocery list.
        publisher: me
        entry: planner.server
        permissions:
          required: [agent:grocery.add_items]
        """))
    callees = folder / "tests" / "callees"
    shutil.copytree(GROCERY, callees / "grocery-bundle", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tests" / "test_plan.py").write_text(textwrap.dedent(TESTS))
    # grocery's contract, where the kit looks for it: its functions, as `dreamer build` writes them.
    built = kernel.cli("build", str(callees / "grocery-bundle"))
    assert built.returncode == 0, built.stderr
    (callees / "grocery").mkdir()
    shutil.copy(callees / "grocery-bundle" / "functions.json", callees / "grocery" / "functions.json")
    assert json.loads((callees / "grocery" / "functions.json").read_text())["functions"]

    answer = kernel.cli("test", str(folder), "--json")
    report = json.loads(answer.stdout)
    output = report["output"]
    # Everything but the deliberately unchecked call passes; that one fails on the contract.
    assert "1 failed, 3 passed" in output, output
    assert "FAILED" in output and "test_contract_unchecked" in output
    assert "planner called grocery.add_items with arguments that do not fit grocery's parameters" in output


GREETER = '''
from dreamer.sdk import Context, function


@function(exported=True, examples=["greet {name} warmly"])
def greet(ctx: Context, name: str) -> str:
    """Greets someone, and logs whom."""
    ctx.log("greeting someone", name=name, times=2, note="two words")
    return f"Hello, {name}!"
'''


def test_dev_shows_the_fields_of_each_log_line(kernel: KernelProc, tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, "greeter", textwrap.dedent(GREETER))
    dev = subprocess.Popen([DREAMER, "dev", str(folder), "--interval", "0.3", "--stop-after", "90"],
                           env=dict(kernel.env, COLUMNS="200", PYTHONUNBUFFERED="1"),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    # dev's output is read as it comes, so the test stops it once the call is printed instead of
    # guessing how long a loaded machine takes to print it.
    def read() -> None:
        assert dev.stdout is not None
        for line in dev.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        with kernel.client() as api:
            deadline = time.monotonic() + 120
            while dev.poll() is None and time.monotonic() < deadline:
                r = api.post("/v1/agents/greeter/functions/greet", json={"args": {"name": "Ada"}})
                if r.status_code == 200:
                    break
                time.sleep(1.0)
            while dev.poll() is None and time.monotonic() < deadline and not any("greeting someone" in x for x in lines):
                time.sleep(0.2)
    finally:
        dev.send_signal(signal.SIGINT)
        dev.wait(timeout=60)
        reader.join(timeout=10)
    output = "".join(lines)
    assert 'greeting someone name=Ada times=2 note="two words"' in output, output
