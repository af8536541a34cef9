"""The test kit (dreamer.sdk.testing): a real worker, a real agent database, real or faked
callees, recorded calls, logs and posts, and fakes checked against the real callee."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamer.sdk.errors import CallError
from dreamer.sdk.testing import AgentKit, ContractError

GROCERY = Path(__file__).resolve().parents[2] / "agents" / "grocery"

PLANNER = '''
from dreamer.sdk import Context, function
from dreamer.sdk.errors import CallError


@function(exported=True, examples=["plan dinner with {dish}"])
def plan(ctx: Context, dish: str, needs: list[str]) -> dict:
    """Remember the dish and put what it needs on the grocery list."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS dishes (name TEXT)")
    ctx.db.execute("INSERT INTO dishes (name) VALUES (?)", (dish,))
    added = ctx.call("grocery", "add_items", items=needs)
    ctx.log("planned", dish=dish, added=len(added["added"]))
    ctx.post(f"Dinner: {dish}")
    return {"dish": dish, "added": added["added"]}


@function(examples=["plan with a wrong call"])
def misuse(ctx: Context) -> str:
    """Calls the grocery list with an argument it does not take, and swallows the refusal."""
    try:
        ctx.call("grocery", "add_items", things=["milk"])
    except CallError as exc:
        return exc.kind
    return "accepted"


@function(examples=["ask the recipes agent"])
def undeclared(ctx: Context) -> str:
    """Calls an agent its manifest does not ask for."""
    return ctx.call("recipes", "suggest", dish="soup")


@function(examples=["count the dishes"])
def count(ctx: Context) -> int:
    """How many dishes are remembered."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS dishes (name TEXT)")
    return ctx.db.execute("SELECT count(*) FROM dishes").fetchone()[0]


@function(examples=["fail on purpose"])
def broken(ctx: Context) -> None:
    """Writes a row and then fails: the row must not stay."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS dishes (name TEXT)")
    ctx.db.execute("INSERT INTO dishes (name) VALUES ('ghost')")
    raise ValueError("on purpose")
'''


def _bundle(root: Path, permissions: str = "[agent:grocery.add_items, notify]") -> Path:
    folder = root / "planner"
    (folder / "planner").mkdir(parents=True)
    (folder / "planner" / "__init__.py").write_text("")
    (folder / "planner" / "server.py").write_text(textwrap.dedent(PLANNER))
    (folder / "agent.yaml").write_text(textwrap.dedent(f"""\
        name: planner
        version: 0.1.0
        title: Planner
        description: Plans dinners and puts what they need on the grocery list.
        entry: planner.server
        permissions:
          required: {permissions}
        """))
    return folder


@pytest.fixture
def planner(tmp_path: Path) -> Path:
    return _bundle(tmp_path)


@pytest.fixture
def kit(planner: Path) -> Iterator[AgentKit]:
    with AgentKit(planner) as made:
        yield made


def test_a_fake_answers_and_calls_logs_posts_and_the_database_are_recorded(kit: AgentKit) -> None:
    kit.fake("grocery", "add_items", returns={"added": ["flour"], "already_there": [], "items": ["flour"]})
    assert kit.call("plan", dish="bread", needs=["flour"]) == {"dish": "bread", "added": ["flour"]}
    call = kit.assert_called("grocery", "add_items", items=["flour"])
    assert call.caller == "planner" and call.value["added"] == ["flour"]
    assert [(log.message, log.fields) for log in kit.logs] == [("planned", {"dish": "bread", "added": 1})]
    assert [post.text for post in kit.posts] == ["Dinner: bread"]
    with kit.db() as conn:
        assert [r["name"] for r in conn.execute("SELECT name FROM dishes")] == ["bread"]
    # The database outlives the call, in the same worker, as on a kernel.
    assert kit.call("count") == 1


def test_a_failed_call_rolls_its_database_writes_back(kit: AgentKit) -> None:
    with pytest.raises(CallError) as caught:
        kit.call("broken")
    assert caught.value.kind == "agent_error" and "ValueError: on purpose" in caught.value.message
    assert kit.call("count") == 0


def test_assertions_fail_with_a_sentence(kit: AgentKit) -> None:
    with pytest.raises(AssertionError, match=r"grocery.add_items was not called \(calls made: none\)"):
        kit.assert_called("grocery", "add_items")
    kit.fake("grocery", "add_items", returns={"added": [], "already_there": [], "items": []})
    kit.call("plan", dish="soup", needs=["leek"])
    with pytest.raises(AssertionError, match="was called with"):
        kit.assert_called("grocery", "add_items", items=["carrot"])


def test_the_real_callee_runs_in_its_own_worker_with_its_own_database(kit: AgentKit) -> None:
    assert kit.install(GROCERY) == "grocery"
    assert kit.call("plan", dish="soup", needs=["leek", "carrot"])["added"] == ["leek", "carrot"]
    assert kit.call("plan", dish="stew", needs=["carrot", "beef"])["added"] == ["beef"]
    with kit.db("grocery") as conn:
        assert sorted(r["name"] for r in conn.execute("SELECT name FROM items")) == ["beef", "carrot", "leek"]
    assert [log.agent for log in kit.logs].count("grocery") == 2


def test_a_fake_of_a_function_the_real_callee_lacks_fails_at_once(kit: AgentKit) -> None:
    with pytest.raises(ContractError, match=r"the fake grocery.add_item does not match grocery: it has no function 'add_item' \(its functions: add_items, clear"):
        kit.fake("grocery", "add_item", returns={}, contract=GROCERY)


def test_a_fake_called_with_arguments_the_real_callee_refuses_fails_the_test(kit: AgentKit, planner: Path) -> None:
    # A copy of the callee's contract kept in the bundle, where `dreamer test` finds it.
    described = AgentKit(GROCERY)
    try:
        functions = described.agent.functions()
    finally:
        described.close()
    (planner / "tests" / "callees" / "grocery").mkdir(parents=True)
    (planner / "tests" / "callees" / "grocery" / "functions.json").write_text(json.dumps({"format": 1, "functions": functions}))
    kit.fake("grocery", "add_items", returns={"added": [], "already_there": [], "items": []})
    with pytest.raises(ContractError, match=r"planner called grocery.add_items with arguments that do not fit grocery's parameters"):
        kit.call("misuse")
    assert kit.calls[-1].error == "invalid_argument"


def test_without_a_contract_a_fake_takes_what_it_is_given(kit: AgentKit) -> None:
    kit.fake("grocery", "add_items", returns=None)
    assert kit.call("misuse") == "accepted"


def test_an_undeclared_call_names_the_line_to_add_and_a_revoked_one_the_grant(planner: Path) -> None:
    with AgentKit(planner) as kit:
        with pytest.raises(CallError) as caught:
            kit.call("undeclared")
    assert caught.value.kind == "permission_denied"
    assert "add `agent:recipes.suggest` under `permissions:` in agent.yaml" in caught.value.message
    with AgentKit(planner, grants=["notify"]) as kit:
        kit.fake("grocery", "add_items", returns={"added": []})
        with pytest.raises(CallError, match="grant it with `dreamer grant planner agent:grocery`"):
            kit.call("plan", dish="soup", needs=["leek"])


def test_a_call_to_an_agent_neither_installed_nor_faked_says_how_to_provide_it(kit: AgentKit) -> None:
    with pytest.raises(CallError, match=r"use kit.install\(folder\) or kit.fake\('grocery', 'add_items'"):
        kit.call("plan", dish="soup", needs=["leek"])


def test_a_callee_bundle_kept_in_tests_callees_is_the_contract(kit: AgentKit, planner: Path) -> None:
    import shutil

    shutil.copytree(GROCERY, planner / "tests" / "callees" / "grocery", ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.raises(ContractError, match="it has no function 'add_item'"):
        kit.fake("grocery", "add_item", returns={})
    with pytest.raises(ContractError, match="list_item"):
        kit.fake("grocery", "list_item", returns={})
    kit.fake("grocery", "add_items", returns={"added": ["leek"], "already_there": [], "items": ["leek"]})
    assert kit.call("plan", dish="soup", needs=["leek"])["added"] == ["leek"]
