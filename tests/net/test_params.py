"""net.fetch params from an untrusted worker: validation, ceilings, the time budget;
and the SDK side that builds them and reads the answer."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.fetch import DEADLINE_RESERVE_S, _redirected, budget, parse_request
from dreamer.kernel.net.policy import MAX_BODY_BYTES, parse_url
from dreamer.sdk.errors import CallError
from dreamer.sdk.fetch import fetch_params, response_from

CEILINGS = {"max_timeout": 60.0, "max_bytes": 10 * 1024 * 1024}


def parse(**params: Any) -> Any:
    return parse_request({"url": "http://example.com/", **params}, **CEILINGS)


def test_defaults_and_ceilings() -> None:
    request = parse()
    assert (request.method, request.body, request.timeout, request.max_bytes) == ("GET", None, 60.0, 10 * 1024 * 1024)
    assert ("User-Agent", "dreamer") in request.headers and ("Accept-Encoding", "identity") in request.headers
    capped = parse(timeout=3600, max_bytes=10**12)
    assert (capped.timeout, capped.max_bytes) == (60.0, 10 * 1024 * 1024)
    small = parse(timeout=2, max_bytes=100, method="post", body="hi", headers={"user-agent": "mine"})
    assert (small.timeout, small.max_bytes, small.method, small.body) == (2, 100, "POST", b"hi")
    assert [h for h in small.headers if h[0].lower() == "user-agent"] == [("user-agent", "mine")]


def test_bytes_bodies_arrive_as_base64() -> None:
    assert parse(method="PUT", body={"base64": base64.b64encode(b"\x00\xff").decode()}).body == b"\x00\xff"


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        ({"url": 5}, "invalid_argument", "url"),
        ({"method": "TRACE"}, "invalid_argument", "method must be one of"),
        ({"method": "CONNECT"}, "invalid_argument", "method must be one of"),
        ({"headers": {"a": 1}}, "invalid_argument", "headers must map"),
        ({"headers": ["a"]}, "invalid_argument", "headers must map"),
        ({"body": 5, "method": "POST"}, "invalid_argument", "body must be"),
        ({"body": {"base64": "not base64!"}, "method": "POST"}, "invalid_argument", "not valid base64"),
        ({"body": {"hex": "00"}, "method": "POST"}, "invalid_argument", "body must be"),
        ({"body": "\ud800", "method": "POST"}, "invalid_argument", "not valid Unicode"),
        ({"body": "x"}, "invalid_argument", "a GET request cannot have a body"),
        ({"body": "x", "method": "HEAD"}, "invalid_argument", "HEAD request cannot"),
        ({"timeout": 0}, "invalid_argument", "timeout"),
        ({"timeout": -1}, "invalid_argument", "timeout"),
        ({"timeout": float("nan")}, "invalid_argument", "timeout"),
        ({"timeout": float("inf")}, "invalid_argument", "timeout"),
        ({"timeout": True}, "invalid_argument", "timeout"),
        ({"timeout": "5"}, "invalid_argument", "timeout"),
        ({"max_bytes": 0}, "invalid_argument", "max_bytes"),
        ({"max_bytes": 1.5}, "invalid_argument", "max_bytes"),
        ({"follow": False}, "invalid_argument", "follow"),
        ({"url": "ftp://example.com/"}, "invalid_argument", "only http and https"),
        ({"body": "x" * (MAX_BODY_BYTES + 1), "method": "POST"}, "payload_too_large", "MiB"),
    ],
)
def test_bad_params_are_refused_in_one_sentence(params: dict[str, Any], code: str, words: str) -> None:
    with pytest.raises(DreamerError) as caught:
        parse(**params)
    assert caught.value.code == code
    assert words in caught.value.message and "\n" not in caught.value.message


def test_the_budget_is_cut_to_the_invocations_deadline() -> None:
    assert budget(30, None, 100.0) == 30
    assert budget(30, 110.0, 100.0) == pytest.approx(10 - DEADLINE_RESERVE_S)
    assert budget(5, 110.0, 100.0) == 5
    with pytest.raises(DreamerError) as caught:
        budget(30, 100.1, 100.0)
    assert caught.value.code == "timeout"


def test_redirects_rewrite_the_method_and_keep_credentials_with_their_origin() -> None:
    here, same, other = parse_url("http://a.example/x"), parse_url("http://a.example/y"), parse_url("http://b.example/")
    headers = [("Authorization", "Bearer t"), ("Cookie", "c=1"), ("Content-Type", "text/plain"), ("X-Keep", "1")]
    assert _redirected(307, "POST", b"body", headers, here, same) == ("POST", b"body", headers)
    assert _redirected(308, "PUT", b"body", headers, here, same) == ("PUT", b"body", headers)
    method, body, kept = _redirected(302, "POST", b"body", headers, here, same)
    assert (method, body) == ("GET", None) and ("Content-Type", "text/plain") not in kept and ("Cookie", "c=1") in kept
    assert _redirected(303, "PUT", b"b", headers, here, same)[:2] == ("GET", None)
    assert _redirected(303, "HEAD", None, headers, here, same)[0] == "HEAD"
    assert _redirected(301, "GET", None, headers, here, other)[2] == [("Content-Type", "text/plain"), ("X-Keep", "1")]


# ---- the SDK side ------------------------------------------------------------------------


def test_sdk_params() -> None:
    assert fetch_params("http://x.example/", "get", None, None, 30, None) == {
        "url": "http://x.example/", "method": "GET", "timeout": 30.0
    }
    sent = fetch_params("http://x.example/", "POST", {"A": "b"}, b"\x00\x01", 2, 10)
    assert sent["body"] == {"base64": "AAE="} and sent["headers"] == {"A": "b"} and sent["max_bytes"] == 10
    assert fetch_params("http://x.example/", "POST", None, "text", 1, None)["body"] == "text"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((b"http://x/", "GET", None, None, 30, None), TypeError),
        (("http://x/", "TRACE", None, None, 30, None), ValueError),
        (("http://x/", "GET", {"a": 1}, None, 30, None), TypeError),
        (("http://x/", "POST", None, {"json": 1}, 30, None), TypeError),
        (("http://x/", "GET", None, None, 0, None), ValueError),
        (("http://x/", "GET", None, None, float("nan"), None), ValueError),
        (("http://x/", "GET", None, None, 30, 0), ValueError),
        (("http://x/", "GET", None, None, 30, True), ValueError),
    ],
)
def test_sdk_refuses_bad_arguments_before_sending(args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error, match="ctx.fetch"):
        fetch_params(*args)


def test_sdk_refuses_a_body_the_channel_cannot_carry() -> None:
    with pytest.raises(CallError) as caught:
        fetch_params("http://x/", "POST", None, b"x" * (MAX_BODY_BYTES + 1), 30, None)
    assert caught.value.kind == "payload_too_large"


def test_sdk_response() -> None:
    text = response_from({"status": 200, "headers": {"content-type": "text/plain"}, "body": "héllo", "url": "u"}, "u")
    assert (text.ok, text.text, text.content) == (True, "héllo", "héllo".encode())
    raw = response_from(
        {"status": 404, "headers": {"content-type": "text/plain; charset=iso-8859-1"},
         "body": {"base64": base64.b64encode("café".encode("latin-1")).decode()}, "url": "u", "elapsed_ms": 3}, "u"
    )
    assert (raw.ok, raw.text, raw.elapsed_ms) == (False, "café", 3)
    data = response_from({"status": 200, "headers": {}, "body": '{"a": [1]}', "url": "u"}, "u")
    assert data.json() == {"a": [1]}
    with pytest.raises(CallError) as caught:
        response_from({"status": 200, "headers": {}, "body": {"base64": "!!"}, "url": "u"}, "u")
    assert caught.value.kind == "protocol_error"
    with pytest.raises(CallError):
        response_from(None, "u")
