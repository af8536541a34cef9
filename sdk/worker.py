"""The worker: serves one agent's functions to the kernel from inside the sandbox.

Run as `python -S -m dreamer.sdk.worker` with DREAMER_AGENT_DIR, DREAMER_DATA_DIR,
DREAMER_AGENT and DREAMER_ENTRY set (docs/ARCHITECTURE.md, "Worker protocol").

The protocol runs on private copies of fds 0 and 1; fd 1 then points at stderr
and fd 0 at /dev/null, so whatever agent code prints (or a subprocess it starts
writes) lands in the invocation's log and never in the protocol channel.

One request at a time: while an invoke runs, the only lines the kernel may send
are answers to the worker's own syscalls, in order. Anything else means the two
sides disagree about the conversation, and the worker exits (status 2) rather
than guess; the kernel then reports the invocation as failed.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import dreamer.sdk
from dreamer.sdk import protocol
from dreamer.sdk.context import Context, User
from dreamer.sdk.database import AgentDatabase
from dreamer.sdk.errors import KINDS, CallError, DefinitionError, DreamerSDKError, InvalidArgument, ResultInvalid
from dreamer.sdk.registry import REGISTRY, RegisteredFunction
from dreamer.sdk.schema import deferred

EXIT_OK = 0
EXIT_PROTOCOL = 2
MAX_ERROR_MESSAGE = 1000
# Frames in these files are the worker's own; agent tracebacks start below them.
SDK_DIR = os.path.dirname(os.path.abspath(dreamer.sdk.__file__)) + os.sep


def fatal(message: str) -> NoReturn:
    """Leave at once: the channel is unusable, and agent code must not catch this."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os.write(2, f"dreamer worker: {message}\n".encode("utf-8", "replace"))
    # os._exit: no cleanup that could write to the channel; the open database
    # transaction is discarded, which is the rollback a failed invoke needs.
    os._exit(EXIT_PROTOCOL)


@dataclass(frozen=True)
class WorkerEnv:
    agent_dir: Path
    data_dir: Path
    agent: str
    entry: str | None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> WorkerEnv:
        return cls(
            agent_dir=Path(environ.get("DREAMER_AGENT_DIR") or "/agent"),
            data_dir=Path(environ.get("DREAMER_DATA_DIR") or "/data"),
            agent=environ.get("DREAMER_AGENT") or "this agent",
            entry=environ.get("DREAMER_ENTRY") or None,
        )


class Channel:
    """The protocol's two byte streams."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    def take_stdio(cls) -> Channel:
        """Move the protocol off fds 0 and 1 (see the module docstring)."""
        # os.dup makes non-inheritable descriptors, so subprocesses started by
        # agent code do not get the protocol either.
        proto_in = os.dup(0)
        proto_out = os.dup(1)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr at all: prints go nowhere rather than into the protocol
            devnull_out = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull_out, 1)
            os.close(devnull_out)
        devnull_in = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull_in, 0)
        os.close(devnull_in)
        if hasattr(sys.stdout, "reconfigure"):
            # Line-buffered, so prints reach the log of the invocation that made them.
            sys.stdout.reconfigure(line_buffering=True)
        return cls(os.fdopen(proto_in, "rb"), os.fdopen(proto_out, "wb"))

    def read(self) -> bytes | None:
        return protocol.read_line(self._reader)

    def write(self, data: bytes) -> None:
        try:
            self._writer.write(data)
            self._writer.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            fatal(f"cannot write to the kernel: {exc}")


class Syscalls:
    """Requests from agent code to the kernel, made while an invoke runs (context.Kernel)."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._count = 0
        # Agent threads may log while another call waits; one message at a time.
        self._lock = threading.Lock()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            self._count += 1
            id_ = f"s{self._count}"
            self._channel.write(_encode_syscall(protocol.request(id_, method, params)))
            line = self._channel.read()
            if line is None:
                fatal(f"the kernel closed the channel while {method} ({id_}) waited for its answer")
            try:
                message = protocol.decode(line)
            except protocol.ProtocolError as exc:
                fatal(f"the answer to {method} ({id_}) is not a JSON-RPC message: {exc.message}")
            if not isinstance(message, protocol.Response) or message.id != id_:
                fatal(f"expected the answer to {method} ({id_}), got {_describe_message(message)}")
        if message.error is not None:
            raise CallError(_error_kind(message.error), message.error.message, _error_data(message.error))
        return message.result

    def notify(self, method: str, params: dict[str, Any]) -> None:
        with self._lock:
            self._channel.write(_encode_syscall(protocol.notification(method, params)))


class _InvokeUser(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: int | str
    name: str
    timezone: str = "UTC"


class _InvokeParams(BaseModel):
    model_config = ConfigDict(extra="ignore")
    invocation_id: str
    function: str
    args: Any = Field(default_factory=dict)
    user: _InvokeUser
    caller: str | None = None
    attempt: int = 1
    trigger: dict[str, Any] | None = None


@dataclass(frozen=True)
class _ImportFailure:
    message: str
    type: str
    traceback: str


class Worker:
    def __init__(self, channel: Channel, env: WorkerEnv) -> None:
        self.channel = channel
        self.env = env
        self.syscalls = Syscalls(channel)
        self.database = AgentDatabase(env.data_dir)
        self._loaded = False
        self._import_failure: _ImportFailure | None = None

    def serve(self) -> int:
        """Answer requests until shutdown or end of input; return the exit status."""
        try:
            while True:
                line = self.channel.read()
                if line is None:
                    return EXIT_OK
                try:
                    message = protocol.decode(line)
                except protocol.ProtocolError as exc:
                    self.channel.write(protocol.encode(protocol.error(exc.id, exc.code, exc.message)))
                    continue
                if isinstance(message, protocol.Response):
                    _warn(f"the kernel sent {_describe_message(message)} while no syscall was waiting")
                    return EXIT_PROTOCOL
                if isinstance(message, protocol.Notification):
                    if message.method == "shutdown":
                        return EXIT_OK
                    _warn(f"ignoring unknown notification {message.method!r}")
                    continue
                if message.method == "shutdown":
                    self.channel.write(protocol.encode(protocol.result(message.id, None)))
                    return EXIT_OK
                self.channel.write(self.handle(message))
        finally:
            self.database.close()

    def handle(self, request: protocol.Request) -> bytes:
        """One request -> one encoded response line."""
        handlers = {"describe": self.describe, "invoke": self.invoke}
        handler = handlers.get(request.method)
        if handler is None:
            return protocol.encode(
                protocol.error(request.id, protocol.METHOD_NOT_FOUND, f"unknown method {request.method!r}")
            )
        try:
            return handler(request)
        except Exception as exc:  # noqa: BLE001 - a worker bug must not kill the conversation
            _warn(traceback.format_exc())
            return protocol.encode(
                protocol.kind_error(request.id, "internal", f"the worker failed: {type(exc).__name__}: {exc}")
            )

    # ---- describe ----------------------------------------------------------

    def describe(self, request: protocol.Request) -> bytes:
        failure = self.load() or self.shape(*REGISTRY, described=True)
        if failure is not None:
            return _import_error(request.id, failure)
        try:
            return protocol.encode(protocol.result(request.id, {"functions": REGISTRY.specs()}))
        except ValueError as exc:
            return protocol.encode(
                protocol.kind_error(request.id, "import_error", f"the functions cannot be described as JSON: {exc}")
            )

    def load(self) -> _ImportFailure | None:
        """Import the entry module once; remember a failure (the bundle is read-only)."""
        if self._loaded or self._import_failure is not None:
            return self._import_failure
        entry = self.env.entry
        if entry is None:
            self._import_failure = _ImportFailure(
                "DREAMER_ENTRY is not set, so the worker does not know which module to import", "", ""
            )
            return self._import_failure
        sys.path.insert(0, str(self.env.agent_dir))
        try:
            with deferred():  # each function's pydantic shapes wait for their first use: see Shapes
                importlib.import_module(entry)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is a failure too
            text = traceback.format_exc()
            _warn(text)
            # A half-imported agent must not serve the functions it got to.
            REGISTRY.clear()
            self._import_failure = _ImportFailure(
                f"could not import {entry}: {_summary(exc)}", type(exc).__name__, text
            )
            return self._import_failure
        self._loaded = True
        return None

    def shape(self, *entries: RegisteredFunction, described: bool = False) -> _ImportFailure | None:
        """Build the deferred shapes of these functions; a type that cannot be described fails the
        whole agent, as it would have at import (which is where describing a bundle finds it)."""
        try:
            for entry in entries:
                entry.shapes.described() if described else entry.shapes.build()
        except DefinitionError as exc:
            text = traceback.format_exc()
            _warn(text)
            REGISTRY.clear()
            self._loaded = False
            self._import_failure = _ImportFailure(
                f"could not import {self.env.entry}: {_summary(exc)}", type(exc).__name__, text
            )
            return self._import_failure
        return None

    # ---- invoke ------------------------------------------------------------

    def invoke(self, request: protocol.Request) -> bytes:
        try:
            params = _InvokeParams.model_validate(request.params)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            return protocol.encode(
                protocol.error(request.id, protocol.INVALID_PARAMS, f"invoke params: {where}: {first['msg']}")
            )
        failure = self.load()
        if failure is not None:
            return _import_error(request.id, failure)
        entry = REGISTRY.get(params.function)
        if entry is None:
            return protocol.encode(
                protocol.kind_error(request.id, "not_found", f"{self.env.agent} has no function '{params.function}'")
            )
        # Both shapes before the call: a result type that cannot be built must not fail after the function ran.
        failure = self.shape(entry)
        if failure is not None:
            return _import_error(request.id, failure)
        try:
            kwargs = entry.validate(params.args)
        except InvalidArgument as exc:
            return protocol.encode(
                protocol.kind_error(request.id, exc.kind, exc.message, **exc.data)
            )
        ctx = Context(
            user=User(id=params.user.id, name=params.user.name, timezone=params.user.timezone),
            invocation_id=params.invocation_id,
            agent=self.env.agent,
            function=entry.name,
            kernel=self.syscalls,
            database=self.database,
            caller=params.caller,
            attempt=params.attempt,
            trigger=params.trigger,
        )
        try:
            return self._run(request.id, entry, ctx, kwargs)
        finally:
            # After a success this finds nothing to undo; after any failure,
            # including one in the worker itself, it discards the invocation's writes.
            self._rollback()
            ctx._end()
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass

    def _run(self, id_: protocol.MessageId, entry: RegisteredFunction, ctx: Context, kwargs: dict[str, Any]) -> bytes:
        """Call the function and commit; the caller rolls back whatever was not committed."""
        try:
            value = entry.call(ctx, kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - sys.exit() in agent code fails the invocation only
            return self._failure(id_, entry, exc)
        try:
            data = entry.result.dump(value, entry.name)
            try:
                line = protocol.encode(protocol.result(id_, {"value": data}))
            except ValueError as exc:
                raise ResultInvalid(f"{entry.name} returned a value that cannot be sent as JSON: {exc}") from None
        except ResultInvalid as exc:
            return protocol.encode(protocol.kind_error(id_, exc.kind, exc.message))
        # Commit only once the answer is ready to send: a result that cannot
        # be sent fails the invocation, and so must leave no changes behind.
        try:
            self.database.commit()
        except sqlite3.Error as exc:
            return protocol.encode(
                protocol.kind_error(
                    id_, "agent_error", f"{entry.name} could not commit its database changes: {_summary(exc)}",
                    type=type(exc).__name__, traceback="",
                )
            )
        return line

    def _failure(self, id_: protocol.MessageId, entry: RegisteredFunction, exc: BaseException) -> bytes:
        text = _agent_traceback(exc)
        _warn(text)
        if isinstance(exc, DreamerSDKError) and exc.kind in KINDS and exc.kind != "import_error":
            # A refused syscall (or an InvalidArgument the agent raised) keeps
            # its kind, so the caller learns *why*, e.g. permission_denied.
            data = {**exc.data, "type": type(exc).__name__, "traceback": text}
            return protocol.encode(protocol.kind_error(id_, exc.kind, _clip(exc.message), **data))
        return protocol.encode(
            protocol.kind_error(
                id_, "agent_error", _clip(f"{entry.name} raised {_summary(exc)}"),
                type=type(exc).__name__, traceback=text,
            )
        )

    def _rollback(self) -> None:
        try:
            self.database.rollback()
        except sqlite3.Error as exc:
            _warn(f"rollback failed: {exc}")


# ---- helpers -----------------------------------------------------------------


def _encode_syscall(message: dict[str, Any]) -> bytes:
    try:
        return protocol.encode(message)
    except ValueError as exc:
        raise TypeError(f"{message.get('method')}: {exc}") from None


def _error_kind(error: protocol.ErrorObject) -> str:
    if error.kind is not None:
        return error.kind
    if error.code == protocol.METHOD_NOT_FOUND:
        return "not_available"
    if error.code == protocol.INVALID_PARAMS:
        return "invalid_argument"
    return "internal"


def _error_data(error: protocol.ErrorObject) -> dict[str, Any]:
    return dict(error.data) if isinstance(error.data, dict) else {}


def _describe_message(message: protocol.Message) -> str:
    if isinstance(message, protocol.Response):
        return f"a response with id {message.id!r}"
    if isinstance(message, protocol.Request):
        return f"a {message.method!r} request"
    return f"a {message.method!r} notification"


def _import_error(id_: protocol.MessageId, failure: _ImportFailure) -> bytes:
    data: dict[str, Any] = {}
    if failure.type:
        data = {"type": failure.type, "traceback": failure.traceback}
    return protocol.encode(protocol.kind_error(id_, "import_error", failure.message, **data))


def _summary(exc: BaseException) -> str:
    """`Type: first line of the message` (SyntaxError's str names file and line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_MESSAGE else text[: MAX_ERROR_MESSAGE - 1] + "…"


def _agent_traceback(exc: BaseException) -> str:
    """The traceback from the agent's own frames down, without the worker's."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(SDK_DIR):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def _warn(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def _strip_cwd_from_path() -> None:
    # `-m` puts the current directory first on sys.path; agent imports must
    # come from the bundle (and the runtime), not from wherever we were started.
    try:
        cwd = os.getcwd()
    except OSError:  # started in a directory that is not visible in the sandbox
        cwd = ""
    if sys.path and sys.path[0] in ("", cwd):
        del sys.path[0]


def main() -> int:
    channel = Channel.take_stdio()
    _strip_cwd_from_path()
    return Worker(channel, WorkerEnv.from_environ(os.environ)).serve()


if __name__ == "__main__":
    sys.exit(main())
