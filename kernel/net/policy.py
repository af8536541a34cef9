"""What an agent may ask the kernel to fetch: URLs, host names, addresses, headers.

Pure functions, no I/O: the fetch handler (fetch.py) resolves names and talks to
servers; this module decides what a URL means and whether an address may be reached.

Host names are made canonical before anything is compared, so one address has one
spelling for grants and audit: lowercase, no trailing dot, IDNA (UTS #46) for
non-ASCII names, and IPv4 in the URL standard's number forms (`0x7f.1`,
`2130706433`, `127.1`, `0177.0.0.1`) written as the dotted quad they mean.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

import idna

from dreamer.contracts.errors import DreamerError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_CHARS = 8 * 1024
MAX_HEADERS = 64
MAX_HEADER_BYTES = 16 * 1024
# The worker channel carries at most 8 MiB per message and a binary body travels
# as base64 (4/3 larger), so 5 MiB is the largest body that always fits.
MAX_BODY_BYTES = 5 * 1024 * 1024
MAX_AUDIT_PATH = 120

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
SCHEMES = {"http": 80, "https": 443}

# Headers that describe one connection, not the request (RFC 9110 §7.6.1), and
# those the kernel sets itself. An agent's values for them are dropped.
DROPPED_HEADERS = frozenset(
    {
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length", "expect",
    }
)
# Sent to one origin only: a redirect to another origin drops them.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field-name
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # control characters other than tab
_LABEL = re.compile(r"[a-z0-9-]{1,63}")
_NUMBER = {16: re.compile(r"[0-9a-f]*"), 8: re.compile(r"[0-7]*"), 10: re.compile(r"[0-9]+")}


def invalid(message: str) -> DreamerError:
    return DreamerError("invalid_argument", message)


# ---- hosts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Host:
    """A canonical host: `name` is what grants, SNI and the audit log see."""

    name: str  # "example.com", "xn--bcher-kva.example", "127.0.0.1", "::1"
    ip: IPAddress | None = None  # set when the URL names an address, not a host name

    @property
    def in_url(self) -> str:
        return f"[{self.name}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.name

    @property
    def scope(self) -> str:
        """The grant this host needs. Scope syntax cannot spell an IPv6 address, so
        IPv6 literals need `net:*` (which never reaches a non-public address)."""
        return "net:*" if isinstance(self.ip, ipaddress.IPv6Address) else f"net:{self.name}"


def canonical_host(raw: str) -> Host:
    """Parse the host part of a URL (without port); raise invalid_argument if it is not one."""
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1]
        if "%" in inner:
            raise invalid(f"IPv6 zone identifiers are not allowed in a URL host ({raw})")
        try:
            return Host(str(ipaddress.IPv6Address(inner)), ipaddress.IPv6Address(inner))
        except ValueError:
            raise invalid(f"{raw} is not a valid IPv6 address") from None
    if not raw:
        raise invalid("the URL has no host")
    name = raw
    if not name.isascii():
        try:
            name = idna.encode(name, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise invalid(f"{raw!r} is not a valid international host name ({exc})") from None
    name = name.lower()
    if name.endswith(".") and len(name) > 1:
        name = name[:-1]
    labels = name.split(".")
    if _ends_in_number(labels):
        ip = _ipv4(name, raw)
        return Host(str(ip), ip)
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise invalid(
            f"{raw!r} is not a host name a grant can name (letters, digits and hyphens in dot-separated labels)"
        )
    return Host(name)


def _ends_in_number(labels: list[str]) -> bool:
    """The URL standard's test: a host whose last label is a number is an IPv4 address."""
    last = labels[-1]
    if _NUMBER[10].fullmatch(last):
        return True
    return last.startswith("0x") and _NUMBER[16].fullmatch(last[2:]) is not None


def _ipv4(name: str, raw: str) -> ipaddress.IPv4Address:
    """IPv4 the way URL parsers (and inet_aton) read it: 1 to 4 parts, each decimal,
    octal (leading 0) or hex (0x), the last filling the remaining bytes."""
    parts = name.split(".")
    numbers: list[int] = []
    for part in parts if len(parts) <= 4 else []:
        if part.startswith("0x"):
            digits, base = part[2:], 16
        elif len(part) > 1 and part.startswith("0"):
            digits, base = part[1:], 8
        else:
            digits, base = part, 10
        if not _NUMBER[base].fullmatch(digits):
            break
        numbers.append(int(digits, base) if digits else 0)
    if len(numbers) != len(parts) or not numbers:
        raise invalid(f"{raw!r} looks like an IPv4 address but is not one")
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        raise invalid(f"{raw!r} is outside the IPv4 address range")
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


# ---- URLs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A URL the kernel is willing to request."""

    scheme: str
    host: Host
    port: int
    path: str  # path and query, ASCII, starts with "/"

    @property
    def default_port(self) -> bool:
        return SCHEMES[self.scheme] == self.port

    @property
    def authority(self) -> str:
        return self.host.in_url if self.default_port else f"{self.host.in_url}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.authority}{self.path}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host.name, self.port)

    @property
    def audit(self) -> str:
        """The URL as the audit log keeps it: query strings often carry keys and
        tokens, so only a marker says one was there; long paths are cut."""
        path, _, query = self.path.partition("?")
        if len(path) > MAX_AUDIT_PATH:
            path = path[: MAX_AUDIT_PATH - 1] + "…"
        return f"{self.scheme}://{self.authority}{path}{'?…' if query else ''}"


def parse_url(url: str) -> Target:
    """An absolute http(s) URL, or invalid_argument saying what is wrong with it."""
    if len(url) > MAX_URL_CHARS:
        raise invalid(f"the URL is longer than {MAX_URL_CHARS} characters")
    if re.search(r"[\x00-\x20\x7f]", url):
        raise invalid("the URL contains spaces or control characters; percent-encode them")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise invalid(f"the URL cannot be parsed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise invalid(f"only http and https URLs can be fetched, not {url[:80]!r}")
    netloc = parts.netloc
    if "@" in netloc:
        raise invalid("credentials in the URL are not allowed; send an Authorization header instead")
    if netloc.startswith("["):
        end = netloc.find("]")
        raw_host, rest = (netloc[: end + 1], netloc[end + 1 :]) if end > 0 else (netloc, "")
    else:
        raw_host, colon, port_text = netloc.partition(":")
        rest = colon + port_text
    if rest and not rest.startswith(":"):
        raise invalid(f"the URL's host {netloc!r} is malformed")
    port_text = rest[1:]
    if port_text and not (port_text.isdigit() and port_text.isascii() and 0 < int(port_text) < 65536):
        raise invalid(f"the URL's port {port_text!r} is not a number from 1 to 65535")
    host = canonical_host(raw_host)
    path = _ascii(parts.path or "/")
    if not path.startswith("/"):
        path = "/" + path
    if parts.query:
        path += "?" + _ascii(parts.query)
    return Target(scheme, host, int(port_text) if port_text else SCHEMES[scheme], path)


def _ascii(text: str) -> str:
    """Percent-encode what is not ASCII (as browsers do), leaving existing escapes alone."""
    return text if text.isascii() else "".join(c if c.isascii() else quote(c, safe="") for c in text)


def redirect_target(current: Target, location: str) -> Target:
    """Where a Location header points, relative to the URL that sent it."""
    location = location.strip()
    if not location:
        raise DreamerError("fetch_failed", f"{current.audit} answered with a redirect without a location")
    try:
        return parse_url(urljoin(current.url, location))
    except DreamerError as exc:
        raise DreamerError("fetch_failed", f"{current.audit} redirected to a URL that cannot be fetched: {exc.message}") from None


# ---- addresses -----------------------------------------------------------------------

PUBLIC = "public"
# Categories no grant can reach: they are not one host an HTTP request could mean.
NEVER = frozenset({"unspecified", "multicast", "broadcast"})

_V4: list[tuple[ipaddress.IPv4Network, str]] = [
    (ipaddress.IPv4Network(net), kind)
    for net, kind in (
        ("0.0.0.0/8", "unspecified"),  # "this network"; 0.0.0.0 reaches the local host on Linux
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),  # includes cloud metadata at 169.254.169.254
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "reserved"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),
        ("198.51.100.0/24", "reserved"),
        ("203.0.113.0/24", "reserved"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    )
]
_V6: list[tuple[ipaddress.IPv6Network, str]] = [
    (ipaddress.IPv6Network(net), kind)
    for net, kind in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"),  # local-use NAT64
        ("100::/64", "reserved"),
        ("2001::/23", "reserved"),  # IETF protocol assignments, Teredo among them
        ("2001:db8::/32", "reserved"),
        ("fc00::/7", "private"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private"),  # the deprecated site-local range
        ("ff00::/8", "multicast"),
    )
]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, compatible, NAT64, 6to4),
    since a connection to it may end at that IPv4 host."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _V4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def classify(ip: IPAddress) -> str:
    """"public", or the kind of address that is not (loopback, private, link-local, ...).

    An explicit table rather than `ipaddress.is_global`, whose answers differ across
    Python patch releases and which ignores IPv4 hidden inside IPv6."""
    if isinstance(ip, ipaddress.IPv6Address):
        for net6, kind in _V6:
            if ip in net6:
                return kind
        inner = embedded_ipv4(ip)
        if inner is not None:
            return classify(inner)
        return PUBLIC if ip in _GLOBAL_UNICAST else "reserved"
    for net4, kind in _V4:
        if ip in net4:
            return kind
    return PUBLIC


# Names that can only mean a machine on the user's own network (RFC 6761, 6762,
# 8375 and ICANN's .internal). A grant naming one of these, or naming an address,
# may reach a non-public address; a grant naming an ordinary domain may not,
# because whoever runs that domain's DNS could point it at the user's router.
_LOCAL_NAMES = ("localhost",)
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")


def may_name_private(host: Host) -> bool:
    return host.ip is not None or host.name in _LOCAL_NAMES or host.name.endswith(_LOCAL_SUFFIXES)


def names_exactly(grants: Iterable[str], host: Host) -> bool:
    """Whether one of the grants is `net:<this host>` itself, not a pattern covering it."""
    return "*" not in host.scope and any(g.lower() == host.scope for g in grants)


def address_refusal(host: Host, addresses: list[IPAddress], named: bool) -> str | None:
    """Why these resolved addresses may not be reached, or None. `named` is whether a
    grant names this host exactly. Every address must pass: the resolver's order is
    not ours to trust."""
    for ip in addresses:
        kind = classify(ip)
        if kind == PUBLIC or (kind not in NEVER and named and may_name_private(host)):
            continue
        what = f"{host.in_url} is" if host.ip is not None else f"{host.name} resolves to {ip}, which is"
        article = "an" if kind[0] in "aeiou" else "a"
        if kind in NEVER:
            hint = "no grant can reach it"
        elif isinstance(host.ip, ipaddress.IPv6Address):
            hint = "an IPv6 address in a URL can only reach public hosts"
        elif may_name_private(host):
            hint = f"only a grant naming it exactly ({host.scope}) can reach it, never a pattern such as net:*"
        elif isinstance(ip, ipaddress.IPv4Address):
            hint = f"only a grant naming the address itself (net:{ip}) can reach it"
        else:
            hint = "no grant can reach it through a host name"
        return f"{what} {article} {kind} address; {hint}"
    return None


# ---- headers and bodies -------------------------------------------------------------


def clean_headers(headers: dict[str, str] | None) -> list[tuple[str, str]]:
    """Validated request headers, without hop-by-hop ones and those the kernel sets."""
    if not headers:
        return []
    if len(headers) > MAX_HEADERS:
        raise invalid(f"at most {MAX_HEADERS} headers may be sent, not {len(headers)}")
    total = 0
    out: list[tuple[str, str]] = []
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise invalid(f"{name[:60]!r} is not a valid header name")
        if _BAD_VALUE.search(value):
            raise invalid(f"the value of header {name} contains control characters")
        try:
            value.encode("latin-1")
        except UnicodeEncodeError:
            raise invalid(f"the value of header {name} has characters HTTP headers cannot carry; encode it") from None
        total += len(name) + len(value)
        if total > MAX_HEADER_BYTES:
            raise invalid(f"the headers are larger than {MAX_HEADER_BYTES // 1024} KiB in total")
        if name.lower() not in DROPPED_HEADERS:
            out.append((name, value.strip(" \t")))
    return out


_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/ecmascript",
     "application/x-www-form-urlencoded", "application/yaml", "application/x-ndjson"}
)


def is_textual(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml"))
