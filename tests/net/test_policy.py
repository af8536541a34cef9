"""The address and URL policy: what a URL means, and which addresses a grant may reach."""

from __future__ import annotations

import ipaddress

import pytest

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.policy import (
    MAX_HEADER_BYTES,
    MAX_HEADERS,
    Host,
    address_refusal,
    canonical_host,
    classify,
    clean_headers,
    is_textual,
    names_exactly,
    parse_url,
    redirect_target,
)
from dreamer.kernel.permissions.check import allowed


@pytest.mark.parametrize(
    ("url", "host", "port", "path"),
    [
        ("http://example.com", "example.com", 80, "/"),
        ("HTTPS://API.Example.COM:8443/a/b?q=1#frag", "api.example.com", 8443, "/a/b?q=1"),
        ("http://localhost./x", "localhost", 80, "/x"),
        ("http://LOCALHOST/", "localhost", 80, "/"),
        ("http://127.0.0.1:8080/", "127.0.0.1", 8080, "/"),
        # IPv4 in the number forms URL parsers and inet_aton accept: one address, one spelling.
        ("http://0x7f.1/", "127.0.0.1", 80, "/"),
        ("http://2130706433/", "127.0.0.1", 80, "/"),
        ("http://127.1/", "127.0.0.1", 80, "/"),
        ("http://0177.0.0.1/", "127.0.0.1", 80, "/"),
        ("http://0x7F000001/", "127.0.0.1", 80, "/"),
        ("http://127.0.0.1./", "127.0.0.1", 80, "/"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", 80, "/latest/meta-data/"),
        # International names become their ASCII (punycode) form; full-width forms are mapped.
        ("http://Bücher.example/", "xn--bcher-kva.example", 80, "/"),
        ("http://ＬＯＣＡＬＨＯＳＴ/", "localhost", 80, "/"),
        ("http://１２７．０．０．１/", "127.0.0.1", 80, "/"),
        ("http://[::1]:9000/", "::1", 9000, "/"),
        ("http://[::FFFF:127.0.0.1]/", "::ffff:7f00:1", 80, "/"),
        ("http://example.com/caf\u00e9?q=\u00e9", "example.com", 80, "/caf%C3%A9?q=%C3%A9"),
    ],
)
def test_urls_are_made_canonical(url: str, host: str, port: int, path: str) -> None:
    target = parse_url(url)
    assert (target.host.name, target.port, target.path) == (host, port, path)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("gopher://example.com/", "only http and https"),
        ("http://user:secret@example.com/", "credentials"),
        ("http://@example.com/", "credentials"),
        ("http:///path", "no host"),
        ("http://exa mple.com/", "spaces or control"),
        ("http://example.com/\r\nX-Injected: 1", "spaces or control"),
        ("http://example.com:0/", "port"),
        ("http://example.com:99999/", "port"),
        ("http://example.com:8o/", "port"),
        ("http://1.2.3.4.5/", "not one"),
        ("http://256.1.1.1/", "outside the IPv4"),
        ("http://4294967296/", "outside the IPv4"),
        ("http://foo.0x10/", "not one"),
        ("http://1.2.3.08/", "not one"),
        ("http://a_b.example.com/", "grant can name"),
        ("http://%31%32%37.0.0.1/", "not one"),
        ("http://%6c%6f%63alhost/", "grant can name"),
        ("http://[fe80::1%25eth0]/", "zone"),
        ("http://[::1/", "IPv6"),
        ("http://[not-v6]/", "IPv6"),
        ("http://" + "a" * 64 + ".com/", "grant can name"),
        ("http://example.com/" + "a" * 9000, "longer than"),
    ],
)
def test_bad_urls_are_refused_in_one_sentence(url: str, words: str) -> None:
    with pytest.raises(DreamerError) as caught:
        parse_url(url)
    assert caught.value.code == "invalid_argument"
    assert words in caught.value.message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("8.8.8.8", "public"),
        ("1.1.1.1", "public"),
        ("172.32.0.1", "public"),
        ("100.128.0.1", "public"),
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.1", "reserved"),
        ("198.18.0.1", "reserved"),
        ("2606:4700:4700::1111", "public"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("fec0::1", "private"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "reserved"),
        ("2001::1", "reserved"),  # Teredo
        ("3fff::1", "public"),
        ("4000::1", "reserved"),  # outside global unicast
        # IPv4 hidden in IPv6: mapped, compatible, NAT64 and 6to4 forms reach the IPv4 host.
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:8.8.8.8", "public"),
        ("::127.0.0.1", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::808:808", "public"),
        ("64:ff9b:1::1", "private"),
        ("2002:7f00:1::1", "loopback"),
        ("2002:c0a8:101::1", "private"),
        ("2002:808:808::1", "public"),
    ],
)
def test_addresses_are_classified(address: str, kind: str) -> None:
    assert classify(ipaddress.ip_address(address)) == kind


def ips(*addresses: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    return [ipaddress.ip_address(a) for a in addresses]


def test_public_addresses_need_no_naming() -> None:
    assert address_refusal(Host("example.com"), ips("93.184.216.34", "2606:2800:220:1::1"), named=False) is None


@pytest.mark.parametrize(
    ("url", "addresses", "grants", "refused"),
    [
        # A grant naming the address or a local-only name exactly reaches it ...
        ("http://127.0.0.1/", [], ["net:127.0.0.1"], None),
        ("http://2130706433/", [], ["net:127.0.0.1"], None),
        ("http://localhost/", ["127.0.0.1", "::1"], ["net:localhost"], None),
        ("http://LOCALHOST./", ["127.0.0.1"], ["net:localhost"], None),
        ("http://printer.local/", ["192.168.1.9"], ["net:printer.local"], None),
        ("http://nas.home.arpa/", ["10.0.0.2"], ["net:nas.home.arpa"], None),
        ("http://169.254.169.254/", [], ["net:169.254.169.254"], None),
        ("http://10.0.0.5/", [], ["net:*", "net:10.0.0.5"], None),
        # ... a pattern never does, whatever it covers ...
        ("http://127.0.0.1/", [], ["net:*"], "loopback"),
        ("http://0x7f.1/", [], ["net:*"], "loopback"),
        ("http://localhost/", ["127.0.0.1"], ["net:*"], "loopback"),
        ("http://localhost/", ["127.0.0.1"], ["net:*.localhost", "net:*"], "loopback"),
        ("http://169.254.169.254/", [], ["net:*"], "link-local"),
        ("http://100.64.1.1/", [], ["net:*"], "carrier-grade"),
        ("http://[::1]/", [], ["net:*"], "loopback"),
        ("http://[::ffff:127.0.0.1]/", [], ["net:*"], "loopback"),
        ("http://[fd00::1]/", [], ["net:*"], "private"),
        # ... an ordinary domain cannot reach a private address even when named exactly,
        # since its owner controls where it points (DNS rebinding) ...
        ("http://api.example.com/", ["127.0.0.1"], ["net:api.example.com"], "net:127.0.0.1"),
        ("http://api.example.com/", ["10.0.0.1"], ["net:api.example.com"], "private"),
        ("http://api.example.com/", ["fd00::1"], ["net:api.example.com"], "no grant can reach"),
        # ... one bad address among good ones is enough to refuse ...
        ("http://mixed.example.com/", ["93.184.216.34", "127.0.0.1"], ["net:*"], "loopback"),
        ("http://localhost/", ["127.0.0.1", "0.0.0.0"], ["net:localhost"], "unspecified"),
        # ... and some addresses are not one host at all.
        ("http://0.0.0.0/", [], ["net:0.0.0.0"], "unspecified"),
        ("http://224.0.0.1/", [], ["net:224.0.0.1"], "multicast"),
        ("http://255.255.255.255/", [], ["net:255.255.255.255"], "broadcast"),
    ],
)
def test_non_public_addresses_need_a_grant_that_names_them(
    url: str, addresses: list[str], grants: list[str], refused: str | None
) -> None:
    target = parse_url(url)
    assert allowed(grants, target.host.scope) is not None  # the grant check itself passes
    resolved = [target.host.ip] if target.host.ip is not None else ips(*addresses)
    reason = address_refusal(target.host, resolved, names_exactly(grants, target.host))
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason


def test_ipv6_literals_need_the_wildcard_grant() -> None:
    host = canonical_host("[2606:4700::1111]")
    assert host.scope == "net:*" and host.in_url == "[2606:4700::1111]"
    assert allowed(["net:*.example.com", "net:2606"], host.scope) is None
    assert allowed(["net:*"], host.scope) == "net:*"
    assert not names_exactly(["net:*"], host)


def test_scopes_of_canonical_hosts_match_grants() -> None:
    assert allowed(["net:*.example.com"], parse_url("https://API.EXAMPLE.COM./x").host.scope) == "net:*.example.com"
    assert allowed(["net:xn--bcher-kva.example"], parse_url("http://bücher.example/").host.scope) is not None
    assert allowed(["net:127.0.0.1"], parse_url("http://127.1/").host.scope) == "net:127.0.0.1"
    assert allowed(["net:localhost"], parse_url("http://127.0.0.1/").host.scope) is None


def test_the_audited_url_leaves_out_queries_and_long_paths() -> None:
    assert parse_url("https://api.example.com/v1/items?api_key=SECRET#x").audit == "https://api.example.com/v1/items?…"
    assert parse_url("http://example.com:8080/").audit == "http://example.com:8080/"
    long = parse_url("http://example.com/" + "p" * 500).audit
    assert len(long) < 160 and long.endswith("…")


def test_redirect_targets_resolve_relative_locations() -> None:
    here = parse_url("https://example.com/a/b?x=1")
    assert redirect_target(here, "/c").url == "https://example.com/c"
    assert redirect_target(here, "d").url == "https://example.com/a/d"
    assert redirect_target(here, "//other.example/e").url == "https://other.example/e"
    assert redirect_target(here, "http://127.1:81/").url == "http://127.0.0.1:81/"
    with pytest.raises(DreamerError) as caught:
        redirect_target(here, "file:///etc/passwd")
    assert caught.value.code == "fetch_failed" and "only http and https" in caught.value.message


def test_headers_are_checked_and_connection_headers_dropped() -> None:
    kept = clean_headers(
        {"Accept": "text/plain", "X-Api-Key": "k", "Host": "evil.example", "Connection": "upgrade",
         "Transfer-Encoding": "chunked", "Content-Length": "5", "Proxy-Authorization": "Basic x", "Upgrade": "h2c"}
    )
    assert kept == [("Accept", "text/plain"), ("X-Api-Key", "k")]
    assert clean_headers(None) == [] and clean_headers({}) == []


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"Bad Name": "x"}, "not a valid header name"),
        ({"X-A:": "x"}, "not a valid header name"),
        ({"": "x"}, "not a valid header name"),
        ({"X-A": "one\r\nX-Injected: two"}, "control characters"),
        ({"X-A": "nul\x00"}, "control characters"),
        ({"X-A": "snowman ☃"}, "cannot carry"),
        ({f"X-{i}": "v" for i in range(MAX_HEADERS + 1)}, f"at most {MAX_HEADERS}"),
        ({"X-Big": "v" * MAX_HEADER_BYTES}, "KiB in total"),
    ],
)
def test_bad_headers_are_refused(headers: dict[str, str], words: str) -> None:
    with pytest.raises(DreamerError) as caught:
        clean_headers(headers)
    assert caught.value.code == "invalid_argument" and words in caught.value.message


@pytest.mark.parametrize(
    ("content_type", "textual"),
    [
        ("text/plain; charset=utf-8", True),
        ("TEXT/HTML", True),
        ("application/json", True),
        ("application/problem+json", True),
        ("application/atom+xml; charset=utf-8", True),
        ("application/octet-stream", False),
        ("image/png", False),
        (None, False),
    ],
)
def test_textual_content_types(content_type: str | None, textual: bool) -> None:
    assert is_textual(content_type) is textual
