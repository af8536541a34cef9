"""Misbehaving stdio tool servers, in process: each gets a clear error, a good server keeps
answering meanwhile, and nothing hangs (servers run in the real sandbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import get_sandbox
from dreamer.kernel.tools.registry import ToolRegistry, validate_args
from dreamer.kernel.tools.sessions import ToolSession, result_value

BUNDLES = Path(__file__).resolve().parent / "bundles"


def _registry(tmp_path: Path) -> ToolRegistry:
    return ToolRegistry(Settings(home=tmp_path, database_url="sqlite://", sandbox="bwrap"), None, get_sandbox("bwrap"))  # type: ignore[arg-type]


def _session(registry: ToolRegistry, tmp_path: Path, mode: str) -> ToolSession:
    data = tmp_path / mode
    data.mkdir(exist_ok=True)
    return ToolSession("echo", registry.stdio_transport("echo", BUNDLES / "echo", ["python", "-m", "echo_server", mode], data))


async def _open_error(session: ToolSession, timeout: float = 20) -> DreamerError:
    with pytest.raises(DreamerError) as caught:
        await session.open(timeout)
    return caught.value


@pytest.mark.parametrize(
    ("mode", "code", "text"),
    [
        ("crash_on_start", "worker_crashed", "the echo tool server exited with status 3 (echo: cannot open my database)"),
        ("garbage", "protocol_error", "wrote something that is not JSON-RPC"),
        ("flood", "payload_too_large", "sent a message larger than"),
        ("silent", "timeout", "did not answer within 3 s"),
    ],
)
def test_a_bad_server_fails_clearly_while_a_good_one_answers(tmp_path: Path, mode: str, code: str, text: str) -> None:
    async def main() -> None:
        registry = _registry(tmp_path)
        good = _session(registry, tmp_path, "ok")
        await good.open(20)
        bad = _session(registry, tmp_path, mode)
        # Only the silent server should meet the timeout; the others fail by themselves first.
        opening = asyncio.ensure_future(_open_error(bad, timeout=3 if mode == "silent" else 30))
        # While the bad one starts (or hangs), the good one serves calls.
        answer = await good.call("say", {"text": "still here"}, 10)
        assert result_value(answer, "echo.say")["text"] == "still here"
        error = await opening
        assert error.code == code and text in error.message
        await good.close()

    asyncio.run(main())


def test_colliding_tool_names_are_reported_and_the_rest_work(tmp_path: Path) -> None:
    async def main() -> None:
        session = _session(_registry(tmp_path), tmp_path, "collide")
        await session.open(20)
        assert "say" not in session.tools and "write_note" in session.tools
        assert any("more than one tool named 'Say'" in p for p in session.problems)
        assert session.refused["say"] == "echo declares more than one tool named 'say'; none of them can be used"
        await session.close()

    asyncio.run(main())


def test_a_hung_call_times_out_and_the_server_is_stopped(tmp_path: Path) -> None:
    async def main() -> None:
        session = _session(_registry(tmp_path), tmp_path, "ok")
        await session.open(20)
        with pytest.raises(DreamerError) as caught:
            await session.call("hang", {}, 1)
        assert caught.value.code == "timeout"
        assert not session.alive

    asyncio.run(main())


def test_arguments_are_validated_against_the_input_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    validate_args("x.y", schema, {"n": 1})
    with pytest.raises(DreamerError, match=r"^x.y: the arguments: 'n' is a required property$"):
        validate_args("x.y", schema, {})
    with pytest.raises(DreamerError) as caught:
        validate_args("x.y", {"type": "nonsense"}, {})
    assert caught.value.code == "tool_error"


def test_a_stdio_server_in_the_docker_sandbox(tmp_path: Path) -> None:
    from docker_engine import engine_unavailable

    reason = engine_unavailable()
    if reason is not None:
        pytest.skip(reason)

    async def main() -> None:
        sandbox = get_sandbox("docker")
        registry = ToolRegistry(Settings(home=tmp_path, database_url="sqlite://", sandbox="docker"), None, sandbox)  # type: ignore[arg-type]
        (tmp_path / "data").mkdir()
        session = ToolSession("echo", registry.stdio_transport("echo", BUNDLES / "echo", ["python", "-m", "echo_server"], tmp_path / "data"))
        await session.open(120)
        try:
            answer = await session.call("write_note", {"text": "in a container"}, 30)
            assert result_value(answer, "echo.write_note") == "in a container\n"
            assert (tmp_path / "data" / "note.txt").read_text() == "in a container\n"
        finally:
            await session.close()
            sandbox.close()  # type: ignore[attr-defined]

    asyncio.run(main())


@pytest.mark.parametrize("name", ["calendar", "files"])
def test_shipped_tools_json_matches_the_live_server(tmp_path: Path, name: str) -> None:
    """The built-in tools ship tools.json (so installing them starts no server); it must be
    what the server declares, or `dreamer build agents/tools/NAME` was forgotten."""
    import json

    from dreamer.agents.bundles import starter_tools
    from dreamer.contracts.manifest import load_manifest

    (bundle,) = [b for b in starter_tools() if b.name == name]
    command = load_manifest(bundle).server.command  # type: ignore[union-attr]

    async def main() -> dict:
        session = ToolSession(name, _registry(tmp_path).stdio_transport(name, bundle, command, tmp_path))
        await session.open(30)
        await session.close()
        return {"format": 1, "tools": [t.as_dict() for t in session.tools.values()]}

    assert asyncio.run(main()) == json.loads((bundle / "tools.json").read_text())
