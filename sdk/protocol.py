"""JSON-RPC 2.0 framing for the kernel ⇄ worker channel: one JSON object per line.

Shared by the worker (inside the sandbox) and the kernel (which reads what an
untrusted worker writes), so it is stdlib only and every decoding failure is a
ProtocolError with one sentence. See docs/ARCHITECTURE.md, "Worker protocol".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeGuard

VERSION = "2.0"

# JSON-RPC 2.0 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Application errors; the kernel error code travels in error.data.kind.
APPLICATION_ERROR = -32000

MessageId = str | int


class ProtocolError(Exception):
    """A line that is not a well-formed JSON-RPC 2.0 message."""

    code = INVALID_REQUEST

    def __init__(self, message: str, id: MessageId | None = None) -> None:
        super().__init__(message)
        self.message = message
        # The id of the offending request when it could be read, so the error
        # response can still be matched by the peer.
        self.id = id


class ParseError(ProtocolError):
    """The line is not UTF-8 JSON."""

    code = PARSE_ERROR


class MessageTooLarge(ProtocolError):
    """A line longer than the reader's limit; the channel cannot be resynchronised."""

    code = INVALID_REQUEST


@dataclass(frozen=True)
class ErrorObject:
    code: int
    message: str
    data: Any = None

    @property
    def kind(self) -> str | None:
        """The kernel error code carried in data.kind, if any."""
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if isinstance(kind, str) else None


@dataclass(frozen=True)
class Request:
    id: MessageId
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    id: MessageId | None
    result: Any = None
    error: ErrorObject | None = None


Message = Request | Notification | Response


# ---- building messages (plain dicts, ready for encode) ----------------------


def request(id: MessageId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": VERSION, "id": id, "method": method, "params": params or {}}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": VERSION, "method": method, "params": params or {}}


def result(id: MessageId | None, value: Any) -> dict[str, Any]:
    return {"jsonrpc": VERSION, "id": id, "result": value}


def error(id: MessageId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": VERSION, "id": id, "error": body}


def kind_error(id: MessageId | None, kind: str, message: str, **data: Any) -> dict[str, Any]:
    """An application error whose data.kind is a kernel error code."""
    return error(id, APPLICATION_ERROR, message, {"kind": kind, **data})


# ---- encoding and decoding ---------------------------------------------------


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line. Raises ValueError if it is not strict JSON (NaN, objects)."""
    try:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"message cannot be encoded as JSON: {exc}") from None
    # json.dumps escapes control characters inside strings, so the only
    # newline in the output is the frame terminator added here.
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8; as a \ud800 escape it is still valid JSON,
        # and the receiver decides what to do with it.
        return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode() + b"\n"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_json(line: bytes | str) -> Any:
    """Parse one line as strict JSON (no NaN/Infinity); raise ParseError otherwise."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"message is not UTF-8: {exc.reason} at byte {exc.start}") from None
    line = line.rstrip("\r\n")
    if not line.strip():
        raise ParseError("message is empty")
    try:
        return json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(f"message is not valid JSON: {exc.msg} at column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"message is not valid JSON: {exc}") from None


def _valid_id(value: Any) -> TypeGuard[str | int]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse(obj: Any) -> Message:
    """Classify a decoded JSON value as a Request, Notification or Response."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"message must be a JSON object, not {type(obj).__name__}")
    id_ = obj.get("id")
    known_id = id_ if _valid_id(id_) else None
    if obj.get("jsonrpc") != VERSION:
        raise ProtocolError('message must have "jsonrpc": "2.0"', known_id)
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str) or not method:
            raise ProtocolError("method must be a non-empty string", known_id)
        params = obj.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ProtocolError(f"params of {method} must be an object", known_id)
        if "id" not in obj:
            return Notification(method, params)
        if not _valid_id(id_):
            raise ProtocolError("request id must be a string or an integer")
        return Request(id_, method, params)
    if "result" in obj and "error" in obj:
        raise ProtocolError("a response has either result or error, not both", known_id)
    if "id" not in obj or not (id_ is None or _valid_id(id_)):
        raise ProtocolError("response id must be a string, an integer or null")
    if "result" in obj:
        return Response(id_, result=obj["result"])
    if "error" in obj:
        err = obj["error"]
        if (
            not isinstance(err, dict)
            or not isinstance(err.get("code"), int)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("message"), str)
        ):
            raise ProtocolError("error must be an object with an integer code and a string message", known_id)
        return Response(id_, error=ErrorObject(err["code"], err["message"], err.get("data")))
    raise ProtocolError("message is neither a request (method) nor a response (result or error)", known_id)


def decode(line: bytes | str) -> Message:
    """decode_json + parse: raises ParseError (-32700) or ProtocolError (-32600)."""
    return parse(decode_json(line))


def read_line(stream: BinaryIO, max_bytes: int | None = None) -> bytes | None:
    """Read one framed line; None at end of stream.

    With max_bytes, a line longer than that (newline excluded) raises
    MessageTooLarge without reading the rest of it, so a hostile peer cannot
    make the reader buffer an unbounded line.
    """
    if max_bytes is None:
        line = stream.readline()
    else:
        line = stream.readline(max_bytes + 1)
        if len(line) > max_bytes and not (len(line) == max_bytes + 1 and line.endswith(b"\n")):
            raise MessageTooLarge(f"message is larger than {max_bytes} bytes")
    return line or None
