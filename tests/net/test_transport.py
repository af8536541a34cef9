"""One exchange with a real local server: pinned addresses, size caps, failures."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from localhttp import LocalServer, local_server

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.policy import parse_url
from dreamer.kernel.net.transport import Exchange, exchange

LOOPBACK = [ipaddress.ip_address("127.0.0.1")]


def run(url: str, method: str = "GET", headers: list[tuple[str, str]] | None = None, body: bytes | None = None,
        addresses: list[Any] | None = None, max_bytes: int = 1 << 20, timeout: float = 5) -> Exchange:
    return asyncio.run(
        exchange(parse_url(url), method, headers or [], body, addresses or LOOPBACK, max_bytes=max_bytes, timeout=timeout)
    )


def failure(**kwargs: Any) -> DreamerError:
    with pytest.raises(DreamerError) as caught:
        run(**kwargs)
    assert "\n" not in caught.value.message
    return caught.value


def test_the_connection_goes_to_the_pinned_address_not_to_the_name(fresh: LocalServer) -> None:
    # "pinned.invalid" has no DNS entry (.invalid never does): reaching the server
    # proves no lookup happened, while Host still carries the name.
    result = run(f"http://pinned.invalid:{fresh.port}/echo?q=1", headers=[("X-Test", "yes")])
    assert result.status == 200 and result.address == "127.0.0.1"
    seen = json.loads(result.body)
    assert seen["headers"]["Host"] == f"pinned.invalid:{fresh.port}"
    assert seen["headers"]["X-Test"] == "yes" and seen["path"] == "/echo?q=1"


def test_later_addresses_are_tried_when_the_first_refuses(fresh: LocalServer) -> None:
    # Nothing listens on ::1 at this port, so the first attempt fails.
    addresses = [ipaddress.ip_address("::1"), ipaddress.ip_address("127.0.0.1")]
    result = run(f"http://localhost:{fresh.port}/text", addresses=addresses)
    assert result.status == 200 and result.address == "127.0.0.1"


def test_bodies_are_sent_with_their_length(fresh: LocalServer) -> None:
    result = run(f"http://127.0.0.1:{fresh.port}/echo", "POST", body=b"\x00payload\xff")
    assert json.loads(result.body)["body"] == "\x00payload\xff"
    assert fresh.seen[-1].headers["Content-Length"] == "9"
    empty = run(f"http://127.0.0.1:{fresh.port}/echo", "POST")
    assert json.loads(empty.body)["body"] == "" and fresh.seen[-1].headers["Content-Length"] == "0"


def test_a_redirect_is_returned_unread(fresh: LocalServer) -> None:
    result = run(f"http://127.0.0.1:{fresh.port}/redirect?to=/text&status=307")
    assert (result.status, result.location, result.body) == (307, "/text", b"")
    assert fresh.paths() == ["/redirect?to=/text&status=307"]


def test_a_declared_length_over_the_cap_is_refused(fresh: LocalServer) -> None:
    error = failure(url=f"http://127.0.0.1:{fresh.port}/big?n=5000", max_bytes=4999)
    assert error.code == "payload_too_large" and "4999 bytes" in error.message
    assert run(f"http://127.0.0.1:{fresh.port}/big?n=5000", max_bytes=5000).body == b"x" * 5000


def test_an_undeclared_length_is_cut_while_streaming(fresh: LocalServer) -> None:
    error = failure(url=f"http://127.0.0.1:{fresh.port}/stream?n={4 * 1024 * 1024}", max_bytes=100_000)
    assert error.code == "payload_too_large"
    assert len(run(f"http://127.0.0.1:{fresh.port}/stream?n=70000", max_bytes=70000).body) == 70000


def test_a_refused_connection_is_fetch_failed(fresh: LocalServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        error = failure(url=f"http://127.0.0.1:{port}/")
    assert error.code == "fetch_failed" and f"could not connect to 127.0.0.1:{port}" in error.message


def test_a_slow_server_is_a_timeout(fresh: LocalServer) -> None:
    error = failure(url=f"http://127.0.0.1:{fresh.port}/slow?s=3", timeout=0.3)
    assert error.code == "timeout"


def test_garbage_from_the_server_is_fetch_failed() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        async def serve_garbage() -> Exchange:
            loop = asyncio.get_running_loop()
            task = asyncio.ensure_future(
                exchange(parse_url(f"http://127.0.0.1:{port}/"), "GET", [], None, LOOPBACK, max_bytes=100, timeout=5)
            )
            listener.setblocking(False)
            conn, _ = await loop.sock_accept(listener)
            with conn:
                await loop.sock_recv(conn, 4096)
                await loop.sock_sendall(conn, b"NOT HTTP AT ALL\r\n\r\n")
                return await task

        with pytest.raises(DreamerError) as caught:
            asyncio.run(serve_garbage())
    assert caught.value.code == "fetch_failed" and "127.0.0.1" in caught.value.message


# ---- TLS: the connection is pinned to an address, the certificate is checked against the name


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=pinned.test",
         "-addext", "subjectAltName=DNS:pinned.test"],
        check=True, capture_output=True,
    )
    return cert, key


@pytest.fixture(scope="module")
def tls_server(certificate: tuple[Path, Path]) -> Iterator[LocalServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with local_server(context) as server:
        yield server


def https(url: str, tls: ssl.SSLContext | None) -> Exchange:
    return asyncio.run(exchange(parse_url(url), "GET", [], None, LOOPBACK, max_bytes=1000, timeout=5, tls=tls))


def test_tls_checks_the_certificate_against_the_name_not_the_address(
    tls_server: LocalServer, certificate: tuple[Path, Path]
) -> None:
    trusting = ssl.create_default_context(cafile=str(certificate[0]))
    assert https(f"https://pinned.test:{tls_server.port}/text", trusting).body == b"hello from the test server"
    with pytest.raises(DreamerError) as caught:
        https(f"https://other.test:{tls_server.port}/text", trusting)
    assert caught.value.code == "fetch_failed" and "certificate was not accepted" in caught.value.message
    assert "other.test" in caught.value.message


def test_tls_refuses_a_certificate_nobody_vouches_for(tls_server: LocalServer) -> None:
    with pytest.raises(DreamerError) as caught:
        https(f"https://pinned.test:{tls_server.port}/text", None)
    assert caught.value.code == "fetch_failed" and "certificate was not accepted" in caught.value.message
