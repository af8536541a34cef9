"""Framing helpers shared by the worker and the kernel."""

from __future__ import annotations

import io
import json

import pytest

from dreamer.sdk import protocol
from dreamer.sdk.protocol import (
    ErrorObject,
    MessageTooLarge,
    Notification,
    ParseError,
    ProtocolError,
    Request,
    Response,
)


def test_encode_is_one_line_even_with_newlines_in_strings() -> None:
    line = protocol.encode(protocol.request("s1", "log", {"message": "a\nb\u2028c", "é": 1}))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["params"]["message"] == "a\nb\u2028c"


def test_encode_refuses_values_that_are_not_strict_json() -> None:
    with pytest.raises(ValueError, match="cannot be encoded as JSON"):
        protocol.encode(protocol.result(1, float("nan")))
    with pytest.raises(ValueError, match="cannot be encoded as JSON"):
        protocol.encode(protocol.result(1, object()))


def test_builders_follow_json_rpc() -> None:
    assert protocol.notification("shutdown") == {"jsonrpc": "2.0", "method": "shutdown", "params": {}}
    assert protocol.kind_error(3, "not_found", "no such function", extra=1) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32000, "message": "no such function", "data": {"kind": "not_found", "extra": 1}},
    }
    assert protocol.error(None, protocol.PARSE_ERROR, "bad") == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "bad"},
    }


def test_decode_classifies_messages() -> None:
    assert protocol.decode(b'{"jsonrpc":"2.0","id":1,"method":"describe"}\n') == Request(1, "describe", {})
    assert protocol.decode('{"jsonrpc":"2.0","method":"shutdown"}') == Notification("shutdown", {})
    assert protocol.decode('{"jsonrpc":"2.0","id":"s1","result":{"value":2}}') == Response("s1", result={"value": 2})
    response = protocol.decode('{"jsonrpc":"2.0","id":"s1","error":{"code":-32000,"message":"no","data":{"kind":"timeout"}}}')
    assert isinstance(response, Response)
    assert response.error == ErrorObject(-32000, "no", {"kind": "timeout"})
    assert response.error.kind == "timeout"
    assert ErrorObject(-32601, "unknown method").kind is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"{nope", "message is not valid JSON: Expecting property name enclosed in double quotes at column 2"),
        (b"\xff\xfe{}", "message is not UTF-8: invalid start byte at byte 0"),
        (b"\n", "message is empty"),
        (b'{"jsonrpc":"2.0","id":1,"result":NaN}', "message is not valid JSON: NaN is not valid JSON"),
    ],
)
def test_decode_parse_errors(line: bytes, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        protocol.decode(line)
    assert caught.value.code == protocol.PARSE_ERROR
    assert caught.value.message == message
    assert caught.value.id is None


@pytest.mark.parametrize(
    ("obj", "message", "id_"),
    [
        ([1, 2], "message must be a JSON object, not list", None),
        ({"id": 1, "method": "x"}, 'message must have "jsonrpc": "2.0"', 1),
        ({"jsonrpc": "2.0", "id": 4, "method": 5}, "method must be a non-empty string", 4),
        ({"jsonrpc": "2.0", "id": "a", "method": "x", "params": [1]}, "params of x must be an object", "a"),
        ({"jsonrpc": "2.0", "id": True, "method": "x"}, "request id must be a string or an integer", None),
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}, "a response has either result or error, not both", 1),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "error must be an object with an integer code and a string message", 1),
        ({"jsonrpc": "2.0", "id": 1}, "message is neither a request (method) nor a response (result or error)", 1),
        ({"jsonrpc": "2.0", "result": 1}, "response id must be a string, an integer or null", None),
    ],
)
def test_parse_refuses_what_is_not_json_rpc(obj: object, message: str, id_: object) -> None:
    with pytest.raises(ProtocolError) as caught:
        protocol.parse(obj)
    assert not isinstance(caught.value, ParseError)
    assert caught.value.code == protocol.INVALID_REQUEST
    assert caught.value.message == message
    assert caught.value.id == id_


def test_read_line_limits_and_eof() -> None:
    stream = io.BytesIO(b"12345\n123456\n")
    assert protocol.read_line(stream, max_bytes=5) == b"12345\n"
    with pytest.raises(MessageTooLarge, match="message is larger than 5 bytes"):
        protocol.read_line(stream, max_bytes=5)
    assert protocol.read_line(io.BytesIO(b""), max_bytes=5) is None
    assert protocol.read_line(io.BytesIO(b"abc"), max_bytes=5) == b"abc"  # last line without newline
    assert protocol.read_line(io.BytesIO(b"x" * 100 + b"\n")) == b"x" * 100 + b"\n"
