"""Context: what a function receives as its first argument.

Everything that leaves the sandbox (calling another agent, logging) is a
syscall to the kernel over the worker's protocol channel; the kernel checks it
against the agent's grants and answers. A syscall a kernel does not serve (an
older kernel) fails with CallError(kind="not_available").
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_core import PydanticSerializationError, to_jsonable_python

from dreamer.sdk.data import Data
from dreamer.sdk.database import AgentDatabase
from dreamer.sdk.errors import CallError
from dreamer.sdk.fetch import Response, fetch_params, response_from
from dreamer.sdk.llm import llm_answer, llm_params, tool_turn_answer, tool_turn_params
from dreamer.sdk.memory import read_answer, read_params, write_params

LOG_LEVELS = ("debug", "info", "warning", "error")

# The grant each Context member needs, as agent.yaml lists it under `permissions:` (and the
# user grants it at install or with `dreamer grant`). "" means none. docs/SDK.md shows this
# column; tests/sdk/test_sdk_doc.py checks that every public member is listed.
GRANTS: dict[str, str] = {
    "user": "", "invocation_id": "", "agent": "", "caller": "", "function": "", "attempt": "", "trigger": "",
    "db": "",
    "call": "`agent:<agent>` or `agent:<agent>.<function>`",
    "granted": "",
    "log": "",
    "tools": "`tool:<server>` or `tool:<server>.<tool>` (per tool)",
    "data": "`data:<connection>`",
    "mounts": "`fs:<folder>` / `fs.ro:<folder>` (ask for `fs:*`; the user picks the folder)",
    "llm": "`llm`",
    "llm_tools": "`llm`",
    "sidekick": "`memory:read`",
    "remember": "`memory:write`",
    "post": "`notify`",
    "task": "`llm` (and `tool:` grants for the tools named)",
    "fetch": "`net:<host>` (or a pattern such as `net:*.example.com`)",
    "emit_reward": "",
    "emit_event": "none; the event is listed under `events:` in agent.yaml",
}

class Kernel(Protocol):
    """The worker side of the syscall channel (see dreamer.sdk.worker)."""

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a syscall and wait for its answer; raise CallError if the kernel refuses."""
        ...

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a syscall that has no answer."""
        ...


@dataclass(frozen=True)
class User:
    """The person this invocation runs for."""

    id: int | str
    name: str
    timezone: str


class Tools:
    """`ctx.tools.call("server.tool", args)`: tools (MCP servers) granted to the agent.

    A refusal raises CallError: `permission_denied` without a `tool:` grant,
    `tool_disabled` when the user switched the tool off, `invalid_argument` when the
    arguments do not match the tool's input schema, `tool_error`, `timeout`, ...
    """

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Any:
        """Call `server.tool` with `args`; returns the tool's structured result, or its text."""
        if not isinstance(tool, str):
            raise TypeError("ctx.tools.call takes the tool's name as 'server.tool'")
        answer = self._kernel.request("tools.call", {"tool": tool, "args": dict(args or {})})
        return answer.get("value") if isinstance(answer, dict) else None

    def list(self) -> list[dict[str, Any]]:
        """The tools this agent may call: name, description, input_schema, annotations, enabled."""
        answer = self._kernel.request("tools.list", {})
        return list(answer.get("tools", [])) if isinstance(answer, dict) else []


class Context:
    """The first argument of every `@function`.

    Attributes:
        user: the person the invocation runs for (id, name, timezone).
        invocation_id: the id of this invocation (as in `dreamer logs --run ID`).
        agent: the name of this agent.
        caller: the agent that called this function through the kernel, or None
            when a person or Sidekick did.
        function: the name of the function being run.
        attempt: 1 for the first run; a background function the kernel runs again
            (after a failure or a kernel restart, per its `retries`) sees 2, 3, ...
        trigger: what started this invocation when a trigger did: {"type", "name"}
            (type cron, webhook, input or event); None for a direct call.
    """

    def __init__(
        self,
        *,
        user: User,
        invocation_id: str,
        agent: str,
        function: str,
        kernel: Kernel,
        database: AgentDatabase,
        caller: str | None = None,
        attempt: int = 1,
        trigger: dict[str, Any] | None = None,
    ) -> None:
        self.user = user
        self.attempt = attempt
        self.trigger = trigger
        self.invocation_id = invocation_id
        self.agent = agent
        self.function = function
        self.caller = caller
        self._kernel = kernel
        self._database = database
        self._active = True
        self._tools = Tools(kernel)
        self._data = Data(kernel, self._check_active)

    def __repr__(self) -> str:
        return f"<Context {self.agent}.{self.function} invocation={self.invocation_id} user={self.user.name}>"

    def _end(self) -> None:
        """Called by the worker when the invocation is over."""
        self._active = False

    def _check_active(self, what: str) -> None:
        if not self._active:
            raise RuntimeError(f"{what} was used after invocation {self.invocation_id} ended")

    @property
    def db(self) -> sqlite3.Connection:
        """The agent's own SQLite database ($DREAMER_DATA_DIR/agent.db).

        Opened on first use, in WAL mode, with `row_factory = sqlite3.Row` and
        foreign keys on. The whole invocation is ONE transaction: the worker
        commits it after the function returns successfully and rolls it back if
        the function raises (or returns a value that cannot be sent), so do not
        call BEGIN yourself. `ctx.db.commit()` commits early if you must keep
        work done so far even when a later step fails; a new transaction then
        starts on the next use of `ctx.db`.
        """
        self._check_active("ctx.db")
        return self._database.connection()

    def call(self, agent: str, function: str, /, **args: Any) -> Any:
        """Call an exported function of another agent; return its result.

        Needs the grant `agent:<agent>` or `agent:<agent>.<function>`. Raises
        CallError when the kernel refuses or the callee fails; `e.kind` says
        why (permission_denied, not_found, call_cycle, depth_exceeded, timeout,
        agent_error, invalid_argument, ...). Left uncaught, the error fails
        this invocation with the same kind.
        """
        self._check_active("ctx.call")
        if not isinstance(agent, str) or not isinstance(function, str):
            raise TypeError("ctx.call(agent, function, **args) takes the agent and function names as strings")
        payload: dict[str, Any] = {}
        for name, value in args.items():
            try:
                payload[name] = to_jsonable_python(value)
                json.dumps(payload[name], allow_nan=False)
            except (PydanticSerializationError, TypeError, ValueError) as exc:
                raise TypeError(f"ctx.call({agent!r}, {function!r}): argument '{name}' cannot be sent as JSON: {exc}") from None
        answer = self._kernel.request("agents.call", {"agent": agent, "function": function, "args": payload})
        if not isinstance(answer, dict) or "value" not in answer:
            raise CallError("protocol_error", f"the kernel's answer to agents.call of {agent}.{function} has no value")
        return answer["value"]

    def granted(self, scope: str) -> bool:
        """Whether the user granted this agent `scope` (or a broader scope that covers it).

        For optional permissions: check first and skip the step, instead of trying it
        and leaving a refusal in the user's audit log. Revocations apply at once, so
        the answer holds for this moment only; the use itself is checked again.

        When the missing scope is what the user asked for (watching a page needs
        `net:HOST`), say so at once: put the scope in the result as `needs_grant`
        and the `dreamer grant` command in a reply template. The web app's chat shows
        a one-click Grant button under the answer (the watch agent's add_watch does this).
        """
        self._check_active("ctx.granted")
        if not isinstance(scope, str):
            raise TypeError("ctx.granted(scope) takes a scope string such as 'memory:read'")
        answer = self._kernel.request("grants.check", {"scope": scope})
        return bool(isinstance(answer, dict) and answer.get("granted"))

    def log(self, message: str, level: str = "info", **fields: Any) -> None:
        """Write a line to this invocation's log (`dreamer logs --run ID`).

        `level` is one of debug, info, warning, error. `fields` go on the line as
        `name=value` (`ctx.log("greeting someone", name="Ada")` reads
        `greeting someone name=Ada` in `dreamer logs` and `dreamer dev`); a value
        that is not a plain word is written as JSON, one that is not JSON as its repr.
        Needs no grant.
        """
        self._check_active("ctx.log")
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        self._kernel.notify("log", {"level": level, "message": str(message), "fields": _jsonable_fields(fields)})

    @property
    def tools(self) -> Tools:
        """Tools (MCP servers) granted to this agent: `ctx.tools.call("server.tool", args)`."""
        return self._tools

    @property
    def data(self) -> Data:
        """Databases the administrator connected (grant `data:<connection>`): `ctx.data.query("hr", sql)`.

        catalog, schema, distinct, query and page; the kernel keeps the credentials and
        lets the user see only the rows their role allows. See dreamer.sdk.data.
        """
        return self._data

    @property
    def mounts(self) -> dict[str, str]:
        """Folders of the user's granted to this agent: {where to find it: the grant}.

        For example `{"/mnt/notes": "fs.ro:/home/me/notes"}`. A grant starting
        with `fs:` may be changed, one with `fs.ro:` only read. Empty when
        nothing is granted; a folder whose grant is revoked is gone from the
        next call on. (In the unconfined `none` sandbox the folder is found at
        its own path on the host, which is then the key.)
        """
        try:
            found = json.loads(os.environ.get("DREAMER_MOUNTS") or "{}")
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def llm(
        self,
        prompt: str,
        schema: dict[str, Any] | type[Any] | None = None,
        variant: str = "standard",
        system: str | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> Any:
        """Ask the installation's model; return its text, or with `schema` its answer as data.

        Needs the grant `llm`. `variant` is fast, standard or powerful (which
        models those are is the installation's choice). `schema` is a JSON
        schema (the answer comes back as the dict/list/value it describes) or a
        pydantic model class (an instance comes back); the kernel validates the
        answer and asks the model again, a few times, when it does not match.
        `max_tokens` is capped by the installation. Raises CallError with `kind`
        permission_denied (no `llm` grant), not_available (no model is
        configured), budget_exceeded (the user's monthly model budget is spent),
        timeout, or model_error (the provider failed, or no answer matched the schema).
        """
        self._check_active("ctx.llm")
        params, model = llm_params(prompt, schema, variant, system, max_tokens, temperature)
        return llm_answer(self._kernel.request("llm.complete", params), "schema" in params, model)

    def llm_tools(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        system: str | None = None,
        variant: str = "standard",
        max_tokens: int = 1024,
    ) -> dict[str, Any]:
        """One turn of a tool-use conversation with the installation's model (grant `llm`).

        `messages`: {"role": "user"|"assistant", "content"} turns; an assistant turn
        may carry "tool_calls" [{"id", "name", "arguments"}], answered by
        {"role": "tool", "tool_call_id", "content", "is_error"} turns. `tools`:
        [{"name", "description", "parameters": JSON schema}]. Returns {"text",
        "tool_calls": [{"id", "name", "arguments", "error"}], "usage", "stop_reason",
        "model"}. Running the tools is the agent's own business, in its sandbox.
        Raises CallError like `ctx.llm`.
        """
        self._check_active("ctx.llm_tools")
        params = tool_turn_params(messages, tools, system, variant, max_tokens)
        return tool_turn_answer(self._kernel.request("llm.complete", params))

    def sidekick(self, question: str, schema: dict[str, Any] | type[Any] | None = None) -> Any:
        """Ask what Sidekick remembers about the user ("I'm vegetarian", "I live in Lyon").

        Needs the grant `memory:read`. Without `schema`, returns the remembered
        facts as a list of strings, the most relevant to `question` first (every
        fact is there; an empty list when there are none). With `schema` (a JSON
        schema or a pydantic model class) and a model configured, the model
        answers `question` from the facts and that answer comes back as data
        (an instance for a pydantic class); with no model, or no facts, the list
        of facts comes back instead, so check which you got. Raises CallError
        with `kind` permission_denied (no grant), budget_exceeded, timeout or
        model_error.
        """
        self._check_active("ctx.sidekick")
        params, model = read_params(question, schema)
        return read_answer(self._kernel.request("memory.read", params), "schema" in params, model)

    def remember(self, fact: str) -> None:
        """Add a fact about the user to Sidekick's memory ("prefers aisle seats").

        Needs the grant `memory:write`. At most 1000 characters; a fact the
        memory already holds (in the same words, give or take case and
        contractions) is not stored twice. The user sees where each fact came
        from and can delete it. Raises CallError with `kind` permission_denied
        or invalid_argument.
        """
        self._check_active("ctx.remember")
        self._kernel.request("memory.write", write_params(fact))

    def post(self, text: str, priority: str = "normal", attachments: list[Any] | None = None) -> int:
        """Put a message in the user's feed (`dreamer feed`); return the post's id.

        Needs the grant `notify`. `priority` is "normal" or "urgent". `attachments`
        is a list of JSON values (links as {"url": ..., "title": ...}, small data);
        text and attachments together are capped by the kernel. Raises CallError
        with `kind` permission_denied or invalid_argument.
        """
        self._check_active("ctx.post")
        answer = self._kernel.request(
            "posts.create", {"text": text, "priority": priority, "attachments": _jsonable(attachments or [], "attachments")}
        )
        return int(answer["id"]) if isinstance(answer, dict) and "id" in answer else 0

    def task(self, prompt: str, tools: list[str] | None = None, on_complete: str | None = None) -> str:
        """Hand Sidekick a job in words; returns the task's id at once.

        Sidekick works on it in the kernel with the model, calling this agent's own
        exported functions and the tools (`server.tool`) named in `tools`, which this
        agent must hold `tool:` grants for, as Sidekick for the user. When it ends,
        `on_complete` (a function of this agent taking one argument) runs in the
        background with {"task_id", "ok", "reply", "calls", "needs_user"}; `needs_user`
        holds the question or confirmation the task stopped at, since nobody is there
        to answer. Needs the `llm` grant and a configured model. Raises CallError
        (permission_denied, not_available without a model, invalid_argument, not_found).
        """
        self._check_active("ctx.task")
        if not isinstance(prompt, str):
            raise TypeError("ctx.task(prompt, ...) takes the task as a string")
        answer = self._kernel.request("tasks.create", {"prompt": prompt, "tools": tools, "on_complete": on_complete})
        if not isinstance(answer, dict) or not isinstance(answer.get("task_id"), str):
            raise CallError("protocol_error", "the kernel's answer to tasks.create has no task_id")
        task_id: str = answer["task_id"]
        return task_id

    def fetch(
        self,
        url: str,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        body: str | bytes | None = None,
        timeout: float = 30,
        max_bytes: int | None = None,
    ) -> Response:
        """Make an HTTP request through the kernel; return the server's Response.

        Needs the grant `net:<host>` (or a pattern such as `net:*.example.com`).
        Loopback, private and link-local addresses are refused unless a grant
        names the address (`net:192.168.1.20`) or a local name (`net:localhost`)
        exactly; `net:*` never reaches them. Redirects are followed (at most 5),
        each to a granted host only. `body` is text (sent as UTF-8) or bytes;
        `timeout` (seconds) and `max_bytes` are capped by the installation.
        A 404 or 500 is a Response; a refusal or failure raises CallError with
        `kind` permission_denied, timeout, payload_too_large, invalid_argument
        or fetch_failed (no connection, unknown host, too many redirects).
        """
        self._check_active("ctx.fetch")
        params = fetch_params(url, method, headers, body, timeout, max_bytes)
        return response_from(self._kernel.request("net.fetch", params), url)

    def emit_reward(self, value: float, note: str | None = None) -> None:
        """Record how well this invocation went, from -1 (bad) to 1 (good), with an optional note.

        Kept with the invocation (`GET /v1/invocations/{id}`) for evaluating agents over
        time; needs no grant. Raises CallError(invalid_argument) for a value outside -1..1.
        """
        self._check_active("ctx.emit_reward")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("ctx.emit_reward(value) takes a number from -1 to 1")
        self._kernel.request("rewards.emit", {"value": value, "note": note})

    def emit_event(self, name: str, data: Any = None) -> list[str]:
        """Emit an event this agent declares in agent.yaml (`events: [article.saved]`).

        Every agent of the user with an `event` trigger on `<this agent>.<name>`
        (and the `schedule` grant) gets a background invocation of its entrypoint
        with {"event", "agent", "data"}; returns their invocation ids. Raises
        CallError with `kind` invalid_argument (an undeclared event) or depth_exceeded
        (events that keep setting each other off).
        """
        self._check_active("ctx.emit_event")
        answer = self._kernel.request("events.emit", {"event": name, "data": _jsonable(data, "data")})
        return list(answer.get("invocations", [])) if isinstance(answer, dict) else []


def _jsonable(value: Any, what: str) -> Any:
    try:
        converted = to_jsonable_python(value)
        json.dumps(converted, allow_nan=False)
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise TypeError(f"{what} cannot be sent as JSON: {exc}") from None
    return converted


def _jsonable_fields(fields: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        try:
            converted = to_jsonable_python(value)
            json.dumps(converted, allow_nan=False)
        except (PydanticSerializationError, TypeError, ValueError):
            converted = repr(value)
        out[name] = converted
    return out
