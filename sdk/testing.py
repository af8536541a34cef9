"""The test kit: run an agent's functions in a real worker, as the kernel would, from pytest.

`dreamer test` runs a bundle's tests/ with pytest inside the agent's sandbox and loads
this module as a plugin, so every test can take the `kit` fixture::

    def test_adds_the_ingredients(kit):
        kit.fake("grocery", "add_items", returns={"added": ["flour"], "items": ["flour"]})
        assert kit.call("plan_dinner", dish="bread")["added"] == ["flour"]
        kit.assert_called("grocery", "add_items", items=["flour"])
        assert kit.logs[-1].message == "planned"

What is real: the agent's code runs in its own worker process (`python -S -m
dreamer.sdk.worker`, the program the kernel starts, seeing only the SDK and the bundle),
spoken to over the worker protocol, with its own SQLite database in a throw-away folder
(`kit.db()` reads it). Under `dreamer test` that worker is inside the sandbox too.
The kit plays the kernel's side of the channel: it serves `ctx.call`, `ctx.log`,
`ctx.post` and `ctx.granted`, and records each of them (`kit.calls`, `kit.logs`,
`kit.posts`). Other agents are either real, started from their folder
(`kit.install(folder)`), or declared fakes (`kit.fake(agent, function, returns=...)`).

Grants are what agent.yaml asks for (required and optional), unless the test says
otherwise (`AgentKit(grants=[...])`); a `ctx.call` the manifest does not declare is
refused with the same sentence the kernel writes.

A fake's contract is checked against the real callee when the kit can find it: an
installed folder, a folder (or functions.json) passed as `contract=`, or
`tests/callees/<agent>/` inside the bundle (a copy of the callee's functions.json, or its
whole bundle). A fake of a function the callee does not have, or not exported, fails at
once; a call whose arguments do not fit the callee's parameters fails the test with
ContractError when `kit.call` returns, even if the agent caught the refusal.

What is not served (the kit says so with `not_available`): ctx.llm, ctx.sidekick,
ctx.remember, ctx.fetch, ctx.tools, ctx.data, ctx.task, ctx.emit_event. Those need the
kernel; try them with `dreamer dev`.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dreamer.sdk import protocol
from dreamer.sdk.database import FILENAME as DB_FILENAME
from dreamer.sdk.errors import CallError

__all__ = ["AgentKit", "ContractError", "Call", "Log", "Post", "Fake"]

MAX_DEPTH = 8  # the kernel's default max_call_depth


class ContractError(AssertionError):
    """A fake does not match the real callee: unknown or unexported function, or
    arguments that do not fit its parameters. An AssertionError, so pytest reports it
    as a failed test with its sentence."""


@dataclass(frozen=True)
class Call:
    """One `ctx.call` an agent made: who called, what, with which arguments, and the outcome."""

    caller: str
    agent: str
    function: str
    args: dict[str, Any]
    value: Any = None
    error: str | None = None  # the refusal's kind (permission_denied, invalid_argument, ...)


@dataclass(frozen=True)
class Log:
    """One `ctx.log` line: the agent that wrote it, level, message and fields."""

    agent: str
    level: str
    message: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Post:
    """One `ctx.post` to the user's feed."""

    agent: str
    text: str
    priority: str
    attachments: list[Any]


@dataclass
class Fake:
    """A declared stand-in for another agent's function (see `AgentKit.fake`)."""

    agent: str
    function: str
    returns: Any = None
    raises: tuple[str, str] | None = None  # (kind, message) given back as a CallError
    handler: Callable[..., Any] | None = None  # called with the arguments; its value is the answer
    parameters: dict[str, Any] | None = None  # the real callee's JSON schema, when known

    def answer(self, args: dict[str, Any]) -> Any:
        if self.raises is not None:
            raise CallError(*self.raises)
        if self.handler is not None:
            return self.handler(**args)
        return self.returns


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / "agent.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"there is no agent.yaml in {folder}; the test kit needs a bundle folder")
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML ships with dreamer
        raise RuntimeError("the test kit needs PyYAML to read agent.yaml; install it (pip install pyyaml)") from None
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError(f"{path} has no name; is it an agent.yaml?")
    return data


def _declared(manifest: dict[str, Any]) -> list[str]:
    permissions = manifest.get("permissions") or {}
    return [str(s) for s in [*(permissions.get("required") or []), *(permissions.get("optional") or [])]]


def _covers(grant: str, wanted: str) -> bool:
    """The `agent:` part of the kernel's scope rules: `agent:x` covers `agent:x.f`."""
    if grant == wanted:
        return True
    return wanted.startswith(grant + ".") and grant.startswith("agent:") and "." not in grant[len("agent:"):]


def _worker_pythonpath(tmp: Path) -> str:
    """Only the SDK and the interpreter's packages, as in the sandbox: a private folder
    holding dreamer/sdk (the worker runs with -S, so no .pth or editable hook is read)."""
    import dreamer.sdk

    root = tmp / "sdk-root"
    if not root.exists():
        (root / "dreamer").mkdir(parents=True)
        (root / "dreamer" / "sdk").symlink_to(Path(dreamer.sdk.__file__).resolve().parent, target_is_directory=True)
    paths = sysconfig.get_paths()
    return os.pathsep.join(dict.fromkeys([str(root), paths["purelib"], paths["platlib"]]))


class _Worker:
    """One agent's worker process and the kernel side of its channel."""

    def __init__(self, kit: AgentKit, folder: Path, manifest: dict[str, Any]) -> None:
        self.kit = kit
        self.folder = folder
        self.name: str = manifest["name"]
        self.manifest = manifest
        self.grants: list[str] = _declared(manifest)
        self.data_dir = kit.tmp / "data" / self.name
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(kit.tmp), "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "PYTHONPATH": _worker_pythonpath(kit.tmp),
            "DREAMER_AGENT_DIR": str(folder), "DREAMER_DATA_DIR": str(self.data_dir),
            "DREAMER_AGENT": self.name, "DREAMER_ENTRY": str(manifest.get("entry") or ""),
        }
        self.stderr_path = kit.tmp / f"{self.name}.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-S", "-m", "dreamer.sdk.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=env, cwd=self.data_dir,
        )
        self._ids = itertools.count(1)
        self._functions: list[dict[str, Any]] | None = None

    @property
    def _in(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def _out(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self._in.write(protocol.encode(message))
            self._in.flush()
        except (BrokenPipeError, OSError):
            raise RuntimeError(f"{self.name}'s worker is gone; what it printed:\n{self.stderr()}") from None

    def request(self, method: str, params: dict[str, Any], chain: tuple[str, ...]) -> Any:
        """Send one request and serve the worker's syscalls until its answer comes."""
        id_ = f"k{next(self._ids)}"
        self._send(protocol.request(id_, method, params))
        while True:
            line = self._out.readline() or None
            if line is None:
                raise RuntimeError(f"{self.name}'s worker exited during {method}; what it printed:\n{self.stderr()}")
            message = protocol.decode(line)
            if isinstance(message, protocol.Response):
                if message.id != id_:
                    raise RuntimeError(f"{self.name}'s worker answered {message.id!r}, not {id_!r}")
                if message.error is not None:
                    data = dict(message.error.data) if isinstance(message.error.data, dict) else {}
                    raise CallError(message.error.kind or "internal", message.error.message, data)
                return message.result
            if isinstance(message, protocol.Notification):
                self.kit._notified(self, message.method, message.params or {})
                continue
            self._send(self.kit._syscall(self, message.id, message.method, message.params or {}, chain))

    def functions(self) -> list[dict[str, Any]]:
        """The bundle's functions.json when it has one, else what the worker describes."""
        if self._functions is None:
            path = self.folder / "functions.json"
            if path.is_file():
                self._functions = list(json.loads(path.read_text(encoding="utf-8"))["functions"])
            else:
                self._functions = list(self.request("describe", {}, ())["functions"])
        return self._functions

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._send(protocol.notification("shutdown"))
                self.process.wait(timeout=5)
            except (RuntimeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


class AgentKit:
    """The agent under test, in a real worker, with its callees real or faked.

    `bundle`: the bundle folder (default: $DREAMER_AGENT_DIR, which `dreamer test` sets, or
    the current folder). `grants`: the scopes this agent holds (default: every permission its
    agent.yaml asks for). `user`: the name the functions see in `ctx.user.name`.
    `callees`: extra folders to look in for `<agent>/functions.json` (after the bundle's
    own tests/callees/). Close it (or use it as a context manager) to stop the workers.
    """

    def __init__(
        self,
        bundle: str | Path | None = None,
        *,
        grants: Sequence[str] | None = None,
        user: str = "tester",
        timezone: str = "UTC",
        callees: Sequence[str | Path] = (),
    ) -> None:
        folder = Path(bundle or os.environ.get("DREAMER_AGENT_DIR") or ".").resolve()
        manifest = _manifest(folder)
        self.tmp = Path(tempfile.mkdtemp(prefix="dreamer-kit-"))
        self.user = {"id": 1, "name": user, "timezone": timezone}
        self.calls: list[Call] = []
        self.logs: list[Log] = []
        self.posts: list[Post] = []
        self._fakes: dict[tuple[str, str], Fake] = {}
        self._broken: list[str] = []
        self._runs = itertools.count(1)
        self._posts = itertools.count(1)
        self._search = [folder / "tests" / "callees", *(Path(p) for p in callees)]
        self.agent = _Worker(self, folder, manifest)
        if grants is not None:
            self.agent.grants = list(grants)
        self.name = self.agent.name
        self._workers: dict[str, _Worker] = {self.name: self.agent}

    # ---- setting up ----------------------------------------------------------

    def __enter__(self) -> AgentKit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker and delete the throw-away folder (databases included)."""
        for worker in self._workers.values():
            worker.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def install(self, folder: str | Path, grants: Sequence[str] | None = None) -> str:
        """Run another agent for real, from its bundle folder; returns its name.

        Its calls are then served by its own worker, with its own database and the grants
        its agent.yaml asks for (or `grants`). Fakes for it are checked against its functions.
        """
        path = Path(folder).resolve()
        manifest = _manifest(path)
        name = manifest["name"]
        if name in self._workers:
            raise ValueError(f"{name} is already running in this kit")
        worker = _Worker(self, path, manifest)
        if grants is not None:
            worker.grants = list(grants)
        self._workers[name] = worker
        return str(name)

    def fake(
        self,
        agent: str,
        function: str,
        *,
        returns: Any = None,
        raises: tuple[str, str] | None = None,
        handler: Callable[..., Any] | None = None,
        contract: str | Path | None = None,
    ) -> Fake:
        """Answer `ctx.call(agent, function, ...)` without running that agent.

        The answer is `returns`, or `handler(**args)`, or the CallError `raises=(kind, message)`.
        When the real callee's functions are known (an installed folder, `contract=` a folder
        or functions.json, or tests/callees/<agent>/ in the bundle), a function it does not
        have or does not export raises ContractError here, and the arguments of each call are
        checked against its parameters.
        """
        specs = self._contract(agent, contract)
        parameters: dict[str, Any] | None = None
        if specs is not None:
            spec = next((s for s in specs if s.get("name") == function), None)
            if spec is None:
                names = ", ".join(sorted(str(s.get("name")) for s in specs)) or "none"
                raise ContractError(f"the fake {agent}.{function} does not match {agent}: it has no function "
                                    f"{function!r} (its functions: {names})")
            if not spec.get("exported"):
                raise ContractError(f"the fake {agent}.{function} does not match {agent}: {function} is not "
                                    f"exported, so other agents cannot call it")
            parameters = spec.get("parameters") or {"type": "object"}
        made = Fake(agent, function, returns, raises, handler, parameters)
        self._fakes[(agent, function)] = made
        return made

    def _contract(self, agent: str, contract: str | Path | None) -> list[dict[str, Any]] | None:
        if agent in self._workers:
            return self._workers[agent].functions()
        candidates = [Path(contract)] if contract is not None else [d / agent for d in self._search]
        for path in candidates:
            file = path if path.is_file() else path / "functions.json"
            if file.is_file():
                return list(json.loads(file.read_text(encoding="utf-8"))["functions"])
            if (path / "agent.yaml").is_file():
                # A whole bundle without functions.json: its own worker describes it, and stops.
                describer = _Worker(self, path.resolve(), _manifest(path))
                try:
                    return describer.functions()
                finally:
                    describer.close()
        if contract is not None:
            raise FileNotFoundError(f"no functions.json at {contract}; pass the callee's bundle folder or its functions.json")
        return None

    # ---- running -------------------------------------------------------------

    def call(self, function: str, /, **args: Any) -> Any:
        """Invoke one of the agent's functions as the user would; return its value.

        Raises CallError with the kind the kernel would report (invalid_argument,
        agent_error with the traceback in `e.data`, permission_denied, ...), and
        ContractError when the function called a fake with arguments that do not fit
        the real callee.
        """
        self._broken.clear()
        try:
            return self._invoke(self.agent, function, args, caller=None, chain=(self.name,))
        finally:
            if self._broken:
                raise ContractError("; ".join(self._broken))

    def _invoke(self, worker: _Worker, function: str, args: dict[str, Any], caller: str | None, chain: tuple[str, ...]) -> Any:
        params = {
            "invocation_id": f"test-{next(self._runs)}", "function": function, "args": args,
            "user": self.user, "caller": caller,
        }
        answer = worker.request("invoke", params, chain)
        return answer.get("value") if isinstance(answer, dict) else None

    def db(self, agent: str | None = None) -> sqlite3.Connection:
        """A connection to the agent's own database (or another running agent's), to look at
        or seed rows between calls; commit what you write, close it when done."""
        worker = self._workers[agent or self.name]
        conn = sqlite3.connect(worker.data_dir / DB_FILENAME)
        conn.row_factory = sqlite3.Row
        return conn

    def stderr(self, agent: str | None = None) -> str:
        """What the agent's worker printed (print() and tracebacks go there, as in the kernel)."""
        return self._workers[agent or self.name].stderr()

    # ---- assertions ----------------------------------------------------------

    def calls_to(self, agent: str, function: str | None = None) -> list[Call]:
        """The calls made to `agent` (and `function`), oldest first."""
        return [c for c in self.calls if c.agent == agent and (function is None or c.function == function)]

    def assert_called(self, agent: str, function: str, /, **args: Any) -> Call:
        """The last call to agent.function; with `args`, it must have had exactly those arguments."""
        made = self.calls_to(agent, function)
        if not made:
            seen = ", ".join(f"{c.agent}.{c.function}" for c in self.calls) or "none"
            raise AssertionError(f"{agent}.{function} was not called (calls made: {seen})")
        last = made[-1]
        if args and last.args != args:
            raise AssertionError(f"{agent}.{function} was called with {last.args!r}, not {args!r}")
        return last

    def assert_not_called(self, agent: str, function: str | None = None) -> None:
        """No call was made to `agent` (or to agent.function)."""
        made = self.calls_to(agent, function)
        if made:
            raise AssertionError(f"{agent}{'.' + function if function else ''} was called: {made[-1].args!r}")

    # ---- the kernel's side of the channel ------------------------------------

    def _notified(self, worker: _Worker, method: str, params: dict[str, Any]) -> None:
        if method == "log":
            self.logs.append(Log(worker.name, str(params.get("level", "info")), str(params.get("message", "")),
                                 dict(params.get("fields") or {})))

    def _syscall(self, worker: _Worker, id_: Any, method: str, params: dict[str, Any], chain: tuple[str, ...]) -> dict[str, Any]:
        try:
            if method == "agents.call":
                value = self._agents_call(worker, params, chain)
                return protocol.result(id_, {"value": value, "invocation_id": f"test-{next(self._runs)}"})
            if method == "posts.create":
                self._require(worker, "notify", "post your feed")
                post = Post(worker.name, str(params.get("text", "")), str(params.get("priority", "normal")),
                            list(params.get("attachments") or []))
                self.posts.append(post)
                return protocol.result(id_, {"id": next(self._posts)})
            if method == "grants.check":
                scope = str(params.get("scope", ""))
                granted = any(_covers(g, scope) for g in worker.grants)
                return protocol.result(id_, {"granted": granted, "by": scope if granted else None})
        except CallError as exc:
            return protocol.kind_error(id_, exc.kind, exc.message, **exc.data)
        return protocol.kind_error(
            id_, "not_available",
            f"the test kit does not serve {method}; fake the step in your test, or try it on a kernel with `dreamer dev`",
        )

    def _require(self, worker: _Worker, scope: str, doing: str, grant: str | None = None) -> None:
        if any(_covers(g, scope) for g in worker.grants):
            return
        if not any(_covers(g, scope) for g in _declared(worker.manifest)):
            raise CallError("permission_denied", (
                f"{worker.name} may not {doing}: its agent.yaml does not ask for {scope} "
                f"(add `{scope}` under `permissions:` in agent.yaml, then reinstall)"))
        raise CallError("permission_denied", (
            f"{worker.name} may not {doing}: the user has not granted {scope} "
            f"(grant it with `dreamer grant {worker.name} {grant or scope}`)"))

    def _agents_call(self, worker: _Worker, params: dict[str, Any], chain: tuple[str, ...]) -> Any:
        agent, function = str(params.get("agent")), str(params.get("function"))
        args = dict(params.get("args") or {})
        try:
            self._require(worker, f"agent:{agent}.{function}", f"call {agent}.{function}", grant=f"agent:{agent}")
            if agent in chain:
                raise CallError("call_cycle", f"call cycle refused: {' → '.join((*chain, agent))}")
            if len(chain) >= MAX_DEPTH:
                raise CallError("depth_exceeded", f"call chain deeper than {MAX_DEPTH} agents refused at {worker.name} → {agent}")
            value = self._answer(worker, agent, function, args, chain)
        except CallError as exc:
            self.calls.append(Call(worker.name, agent, function, args, error=exc.kind))
            raise
        self.calls.append(Call(worker.name, agent, function, args, value=value))
        return value

    def _answer(self, worker: _Worker, agent: str, function: str, args: dict[str, Any], chain: tuple[str, ...]) -> Any:
        fake = self._fakes.get((agent, function))
        if fake is not None:
            problem = _misfit(fake.parameters, args) if fake.parameters is not None else None
            if problem is not None:
                sentence = f"{worker.name} called {agent}.{function} with arguments that do not fit {agent}'s parameters: {problem}"
                self._broken.append(sentence)
                raise CallError("invalid_argument", sentence)
            return fake.answer(args)
        callee = self._workers.get(agent)
        if callee is None:
            raise CallError("not_found", (
                f"{agent} is neither installed in the test kit nor faked; use kit.install(folder) "
                f"or kit.fake({agent!r}, {function!r}, returns=...)"))
        spec = next((s for s in callee.functions() if s.get("name") == function), None)
        if spec is not None and not spec.get("exported"):
            raise CallError("permission_denied", f"{agent}.{function} is not exported, so other agents cannot call it")
        return self._invoke(callee, function, args, caller=worker.name, chain=(*chain, agent))


def _misfit(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `schema` (a function's parameters), or None when they do."""
    try:
        import jsonschema
    except ImportError:  # names only, then
        known = set((schema.get("properties") or {}).keys())
        unknown = sorted(set(args) - known) if schema.get("additionalProperties") is False else []
        missing = sorted(set(schema.get("required") or []) - set(args))
        if unknown:
            return f"no parameter named {', '.join(unknown)}"
        return f"{', '.join(missing)} is required" if missing else None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = ".".join(str(p) for p in first.absolute_path)
    return f"{where}: {first.message}" if where else first.message


try:
    import pytest
except ImportError:  # pragma: no cover - the kit itself works without pytest
    pass
else:

    @pytest.fixture
    def kit() -> Iterator[AgentKit]:
        """The agent of the bundle under test in a fresh AgentKit (see dreamer.sdk.testing)."""
        with AgentKit() as made:
            yield made
