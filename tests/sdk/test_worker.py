"""The worker as a real subprocess (`python -S -m dreamer.sdk.worker`), driven over its pipes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

GROCERY = '''
import os
import sys

from dreamer.sdk import CallError, Context, function

print("grocery imported")  # must not reach the protocol channel


@function(exported=True, examples=["add {items} to my grocery list"])
def add_items(ctx: Context, items: list[str], fail_after: bool = False) -> dict:
    """Add items to the user's grocery list.

    Duplicates are kept.
    """
    print("adding", items)
    sys.stdout.flush()
    os.write(1, b"raw write to fd 1\\n")
    ctx.db.execute("CREATE TABLE IF NOT EXISTS items (name TEXT NOT NULL)")
    ctx.db.executemany("INSERT INTO items (name) VALUES (?)", [(item,) for item in items])
    if fail_after:
        raise RuntimeError("the shop is closed")
    return {"count": ctx.db.execute("SELECT count(*) FROM items").fetchone()[0]}


@function
def count(ctx) -> int:
    try:
        return ctx.db.execute("SELECT count(*) AS n FROM items").fetchone()["n"]
    except Exception:
        return -1


@function
def who(ctx: Context) -> dict:
    return {
        "user": [ctx.user.id, ctx.user.name, ctx.user.timezone],
        "invocation_id": ctx.invocation_id,
        "agent": ctx.agent,
        "caller": ctx.caller,
    }


@function
def boom(ctx: Context, why: str = "bad") -> None:
    raise ValueError(why)


@function
def leave(ctx: Context) -> None:
    sys.exit(3)


@function
def weird(ctx: Context, kind: str):
    if kind == "object":
        return object()
    return "fine"


@function
def infinite(ctx: Context) -> float:
    return float("inf")


@function
def typed_wrong(ctx: Context) -> int:
    return "not a number"


@function
def suggest(ctx: Context, dish: str) -> dict:
    ctx.log("asking recipes", level="debug", dish=dish)
    value = ctx.call("recipes", "suggest", dish=dish)
    return {"got": value}


@function
def suggest_careful(ctx: Context, dish: str) -> dict:
    try:
        return {"got": ctx.call("recipes", "suggest", dish=dish)}
    except CallError as e:
        if e.kind == "permission_denied":
            return {"denied": e.message}
        raise


@function
def suggest_then_write(ctx: Context) -> None:
    ctx.db.execute("CREATE TABLE IF NOT EXISTS items (name TEXT NOT NULL)")
    ctx.db.execute("INSERT INTO items VALUES ('from a failed call')")
    ctx.call("recipes", "suggest", dish="soup")


@function
def use_llm(ctx: Context) -> str:
    return ctx.llm("hello")
'''


def start_grocery(start_worker):
    return start_worker({"grocery/__init__.py": "", "grocery/server.py": GROCERY})


def error_of(response: dict) -> tuple[str, str, dict]:
    assert "error" in response, response
    error = response["error"]
    assert error["code"] == -32000
    return error["data"]["kind"], error["message"], error["data"]


def test_describe_returns_function_specs(start_worker):
    worker = start_grocery(start_worker)
    functions = worker.request("describe")["result"]["functions"]
    by_name = {spec["name"]: spec for spec in functions}
    assert list(by_name)[:3] == ["add_items", "count", "who"]
    spec = by_name["add_items"]
    assert set(spec) == {"name", "description", "parameters", "result", "exported", "background", "confirm", "examples", "retries"}
    assert spec["description"] == "Add items to the user's grocery list.\n\nDuplicates are kept."
    assert spec["exported"] is True and spec["background"] is False and spec["confirm"] is False
    assert spec["examples"] == ["add {items} to my grocery list"]
    assert spec["parameters"]["properties"]["items"] == {"items": {"type": "string"}, "title": "Items", "type": "array"}
    assert spec["parameters"]["required"] == ["items"]
    assert spec["parameters"]["additionalProperties"] is False
    assert by_name["count"]["result"] == {"type": "integer"}
    assert by_name["weird"]["result"] == {}
    # The module printed while being imported; that went to stderr, not into the channel.
    assert worker.request("describe")["result"]["functions"] == functions
    worker.close_stdin()
    assert worker.wait() == 0
    assert "grocery imported" in worker.stderr_with("grocery imported")


def test_invoke_returns_value_and_prints_go_to_stderr(start_worker):
    worker = start_grocery(start_worker)
    response = worker.invoke("add_items", {"items": ["milk", "eggs"]})
    assert response == {"jsonrpc": "2.0", "id": 1, "result": {"value": {"count": 2}}}
    # A second request still parses: nothing the agent printed landed on stdout.
    assert worker.invoke("count")["result"] == {"value": 2}
    worker.send({"jsonrpc": "2.0", "method": "shutdown"})
    assert worker.wait() == 0
    assert "grocery imported" in worker.stderr_with("grocery imported")
    assert "adding ['milk', 'eggs']" in worker.stderr_with("adding ['milk', 'eggs']")
    assert "raw write to fd 1" in worker.stderr_with("raw write to fd 1")


def test_context_carries_invocation_facts(start_worker):
    worker = start_grocery(start_worker)
    response = worker.invoke("who", caller="planner")
    assert response["result"]["value"] == {
        "user": [7, "ada", "Europe/Paris"],
        "invocation_id": f"inv-{response['id']}",
        "agent": "grocery",
        "caller": "planner",
    }


def test_invalid_arguments_name_the_parameter(start_worker):
    worker = start_grocery(start_worker)
    kind, message, data = error_of(worker.invoke("add_items", {"items": "milk"}))
    assert kind == "invalid_argument"
    assert message == "argument 'items': Input should be a valid list"
    kind, message, _ = error_of(worker.invoke("add_items", {}))
    assert (kind, message) == ("invalid_argument", "missing argument 'items'")
    kind, message, _ = error_of(worker.invoke("add_items", {"items": [], "itemz": 1}))
    assert (kind, message) == ("invalid_argument", "unknown argument 'itemz'")
    kind, message, _ = error_of(worker.invoke("add_items", {"items": ["ok", 3]}))
    assert (kind, message) == ("invalid_argument", "argument 'items[1]': Input should be a valid string")
    kind, message, _ = error_of(worker.invoke("add_items", ["milk"]))  # type: ignore[arg-type]
    assert (kind, message) == ("invalid_argument", "arguments must be a JSON object, not an array")
    # The function never ran, so nothing was written.
    assert worker.invoke("count")["result"]["value"] == -1


def test_unknown_function_is_not_found(start_worker):
    worker = start_grocery(start_worker)
    kind, message, _ = error_of(worker.invoke("x"))
    assert (kind, message) == ("not_found", "grocery has no function 'x'")


def test_agent_exception_is_agent_error_with_traceback(start_worker):
    worker = start_grocery(start_worker)
    kind, message, data = error_of(worker.invoke("boom", {"why": "no milk"}))
    assert kind == "agent_error"
    assert message == "boom raised ValueError: no milk"
    assert data["type"] == "ValueError"
    assert 'server.py", line' in data["traceback"] and "raise ValueError(why)" in data["traceback"]
    # The worker's own frames are left out of what the author reads.
    assert "worker.py" not in data["traceback"]
    # The worker lives on.
    assert worker.invoke("count")["result"] == {"value": -1}
    assert "ValueError: no milk" in worker.stderr_with("ValueError: no milk")


def test_sys_exit_in_agent_code_fails_only_the_invocation(start_worker):
    worker = start_grocery(start_worker)
    kind, message, _ = error_of(worker.invoke("leave"))
    assert (kind, message) == ("agent_error", "leave raised SystemExit: 3")
    assert "result" in worker.invoke("count")


def test_results_that_are_not_json_are_result_invalid(start_worker):
    worker = start_grocery(start_worker)
    kind, message, _ = error_of(worker.invoke("weird", {"kind": "object"}))
    assert kind == "result_invalid" and message.startswith("weird returned a value that cannot be sent as JSON")
    kind, message, _ = error_of(worker.invoke("infinite"))
    assert kind == "result_invalid"
    assert message.startswith("infinite returned a value that cannot be sent as JSON")
    kind, message, _ = error_of(worker.invoke("typed_wrong"))
    assert kind == "result_invalid"
    assert message.startswith("typed_wrong returned a value that does not match its result type")
    assert worker.invoke("weird", {"kind": "x"})["result"] == {"value": "fine"}


def test_import_error_reports_the_summary(start_worker):
    worker = start_worker(
        {"grocery/__init__.py": "", "grocery/server.py": "import no_such_module_here\n"}
    )
    response = worker.request("describe")
    kind, message, data = error_of(response)
    assert kind == "import_error"
    assert message == "could not import grocery.server: ModuleNotFoundError: No module named 'no_such_module_here'"
    kind, message2, _ = error_of(worker.invoke("add_items", {"items": []}))
    assert (kind, message2) == ("import_error", message)
    assert "Traceback" in worker.stderr_with("Traceback")


def test_definition_error_surfaces_as_import_error(start_worker):
    source = """
    from dreamer.sdk import function

    @function
    def bad(ctx, *items):
        pass
    """
    worker = start_worker({"grocery/__init__.py": "", "grocery/server.py": source})
    kind, message, _ = error_of(worker.request("describe"))
    assert kind == "import_error"
    assert message.startswith("could not import grocery.server: DefinitionError: bad takes *items")


UNDESCRIBABLE = """
from dreamer.sdk import function

class Opaque:
    pass

@function
def fine(ctx, n: int) -> int:
    return n + 1

@function
def bad(ctx, thing: Opaque) -> None:
    pass
"""


def test_a_type_that_cannot_be_described_fails_describe_as_at_import(start_worker):
    # A worker builds each function's pydantic shapes on first use (schema.Shapes); describing
    # builds them all, so the bundle is refused at install exactly as when they were built at import.
    worker = start_worker({"grocery/__init__.py": "", "grocery/server.py": UNDESCRIBABLE})
    kind, message, _ = error_of(worker.request("describe"))
    assert kind == "import_error"
    assert message.startswith("could not import grocery.server: DefinitionError: the parameters of bad cannot be described")
    kind, again, _ = error_of(worker.invoke("fine", {"n": 1}))
    assert (kind, again) == ("import_error", message)  # the whole agent failed, as an import would


def test_a_call_builds_its_own_function_only_and_a_bad_one_fails_before_running(start_worker):
    worker = start_worker({"grocery/__init__.py": "", "grocery/server.py": UNDESCRIBABLE})
    assert worker.invoke("fine", {"n": 1})["result"] == {"value": 2}
    kind, message, _ = error_of(worker.invoke("bad", {"thing": {}}))
    assert kind == "import_error" and "DefinitionError: the parameters of bad" in message
    kind, _, _ = error_of(worker.invoke("fine", {"n": 1}))
    assert kind == "import_error"  # from then on the agent is failed, as after a failed import


def test_syntax_error_names_file_and_line(start_worker):
    worker = start_worker({"grocery/__init__.py": "", "grocery/server.py": "def broken(:\n"})
    kind, message, _ = error_of(worker.request("describe"))
    assert kind == "import_error"
    assert "SyntaxError" in message and "server.py, line 1" in message


def test_db_commits_on_success_and_rolls_back_on_failure(start_worker, tmp_path: Path):
    worker = start_grocery(start_worker)
    assert worker.invoke("add_items", {"items": ["milk"]})["result"] == {"value": {"count": 1}}
    kind, message, _ = error_of(worker.invoke("add_items", {"items": ["eggs", "jam"], "fail_after": True}))
    assert (kind, message) == ("agent_error", "add_items raised RuntimeError: the shop is closed")
    assert worker.invoke("count")["result"] == {"value": 1}
    # Committed data is visible to another connection (as `dreamer database` sees it).
    with sqlite3.connect(tmp_path / "data" / "agent.db") as conn:
        assert conn.execute("SELECT name FROM items").fetchall() == [("milk",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_schema_change_in_a_failed_invocation_is_rolled_back(start_worker, tmp_path: Path):
    worker = start_grocery(start_worker)
    error_of(worker.invoke("add_items", {"items": ["eggs"], "fail_after": True}))
    # CREATE TABLE ran inside the failed invocation's transaction, so the table is gone.
    assert worker.invoke("count")["result"] == {"value": -1}


def test_ctx_call_sends_agents_call_and_returns_the_value(start_worker):
    worker = start_grocery(start_worker)
    id_ = worker.start_invoke("suggest", {"dish": "soup"})
    log = worker.recv()
    assert log == {
        "jsonrpc": "2.0",
        "method": "log",
        "params": {"level": "debug", "message": "asking recipes", "fields": {"dish": "soup"}},
    }
    syscall = worker.recv()
    assert syscall == {
        "jsonrpc": "2.0",
        "id": "s1",
        "method": "agents.call",
        "params": {"agent": "recipes", "function": "suggest", "args": {"dish": "soup"}},
    }
    worker.send({"jsonrpc": "2.0", "id": "s1", "result": {"value": ["leek", "potato"], "invocation_id": "inv-9"}})
    response = worker.recv()
    assert response == {"jsonrpc": "2.0", "id": id_, "result": {"value": {"got": ["leek", "potato"]}}}
    # Syscall ids keep counting across invocations.
    worker.start_invoke("suggest", {"dish": "stew"})
    worker.recv()
    assert worker.recv()["id"] == "s2"


def denial(id_: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "error": {
            "code": -32000,
            "message": "grocery may not call recipes.suggest (no grant agent:recipes)",
            "data": {"kind": "permission_denied"},
        },
    }


def test_ctx_call_error_can_be_caught_by_kind(start_worker):
    worker = start_grocery(start_worker)
    id_ = worker.start_invoke("suggest_careful", {"dish": "soup"})
    assert worker.recv()["method"] == "agents.call"
    worker.send(denial("s1"))
    assert worker.recv() == {
        "jsonrpc": "2.0",
        "id": id_,
        "result": {"value": {"denied": "grocery may not call recipes.suggest (no grant agent:recipes)"}},
    }


def test_uncaught_syscall_error_keeps_its_kind_and_rolls_back(start_worker):
    worker = start_grocery(start_worker)
    worker.start_invoke("suggest_then_write")
    assert worker.recv()["id"] == "s1"
    worker.send(denial("s1"))
    kind, message, data = error_of(worker.recv())
    assert kind == "permission_denied"
    assert message == "grocery may not call recipes.suggest (no grant agent:recipes)"
    assert data["type"] == "CallError"
    assert worker.invoke("count")["result"] == {"value": -1}


def test_llm_is_a_syscall_and_its_refusal_keeps_its_kind(start_worker):
    worker = start_grocery(start_worker)
    worker.start_invoke("use_llm")
    asked = worker.recv()
    assert (asked["id"], asked["method"], asked["params"]["prompt"]) == ("s1", "llm.complete", "hello")
    worker.send({"jsonrpc": "2.0", "id": "s1", "error": {
        "code": -32000, "message": "no model is configured", "data": {"kind": "not_available"}}})
    kind, message, _ = error_of(worker.recv())
    assert (kind, message) == ("not_available", "no model is configured")


def test_a_line_that_is_not_the_awaited_answer_ends_the_worker(start_worker):
    worker = start_grocery(start_worker)
    worker.start_invoke("suggest_careful", {"dish": "soup"})
    assert worker.recv()["id"] == "s1"
    worker.send({"jsonrpc": "2.0", "id": 99, "method": "describe", "params": {}})
    assert worker.recv_line() is None
    assert worker.wait() == 2
    assert "expected the answer to agents.call (s1)" in worker.stderr_with("expected the answer to agents.call (s1)")


def test_answer_with_the_wrong_id_ends_the_worker(start_worker):
    worker = start_grocery(start_worker)
    worker.start_invoke("suggest_careful", {"dish": "soup"})
    worker.recv()
    worker.send({"jsonrpc": "2.0", "id": "s7", "result": {"value": 1}})
    assert worker.wait() == 2


def test_eof_while_a_syscall_waits_ends_the_worker_non_zero(start_worker):
    worker = start_grocery(start_worker)
    worker.start_invoke("suggest_careful", {"dish": "soup"})
    worker.recv()
    worker.close_stdin()
    assert worker.wait() == 2


def test_malformed_json_gets_a_parse_error_and_the_worker_goes_on(start_worker):
    worker = start_grocery(start_worker)
    worker.send_raw(b"{not json\n")
    assert worker.recv() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "message is not valid JSON: Expecting property name enclosed in double quotes at column 2"},
    }
    worker.send_raw(b'{"jsonrpc": "2.0", "id": 5, "method": "describe", "params": [1]}\n')
    response = worker.recv()
    assert response["id"] == 5 and response["error"]["code"] == -32600
    worker.send_raw(b'{"jsonrpc": "2.0", "id": 6, "method": "frobnicate"}\n')
    response = worker.recv()
    assert response["id"] == 6 and response["error"]["code"] == -32601
    worker.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": "invoke", "params": {"function": "count"}}\n')
    response = worker.recv()
    assert response["id"] == 7 and response["error"]["code"] == -32602
    assert "result" in worker.invoke("count")


def test_shutdown_notification_exits_zero(start_worker):
    worker = start_grocery(start_worker)
    worker.send({"jsonrpc": "2.0", "method": "shutdown"})
    assert worker.recv_line() is None
    assert worker.wait() == 0


def test_eof_exits_zero(start_worker):
    worker = start_grocery(start_worker)
    assert "result" in worker.request("describe")
    worker.close_stdin()
    assert worker.wait() == 0


def test_stray_response_while_idle_is_a_protocol_error(start_worker):
    worker = start_grocery(start_worker)
    worker.send({"jsonrpc": "2.0", "id": "s1", "result": {}})
    assert worker.wait() == 2


def test_missing_entry_is_an_import_error(start_worker):
    worker = start_worker({"grocery/__init__.py": ""}, entry="")
    kind, message, _ = error_of(worker.request("describe"))
    assert (kind, message) == ("import_error", "DREAMER_ENTRY is not set, so the worker does not know which module to import")


def test_functions_from_several_bundle_modules_are_served(start_worker):
    helper = """
    from dreamer.sdk import function

    @function
    def helper_fn(ctx) -> str:
        return "from helper"
    """
    main = """
    from dreamer.sdk import function
    from grocery import helper

    @function
    def main_fn(ctx) -> str:
        return "from main"
    """
    worker = start_worker({"grocery/__init__.py": "", "grocery/helper.py": helper, "grocery/server.py": main})
    names = [spec["name"] for spec in worker.request("describe")["result"]["functions"]]
    assert names == ["helper_fn", "main_fn"]
    assert worker.invoke("helper_fn")["result"] == {"value": "from helper"}
