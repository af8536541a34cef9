"""Which OS account is on the other end of a loopback TCP connection (Linux).

The kernel reads its own network namespace's socket table (/proc/net/tcp, tcp6): the
client's socket is the row whose local address is the connection's remote one and
whose remote address is ours, and that row names its owner's uid. The automatic
sign-in on localhost (web/auth.py) uses it so that another account on the same
machine cannot take the kernel owner's session (issue 14, finding 9).
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def _hex_address(host: str, port: int) -> tuple[str, str] | None:
    """The address as /proc/net/tcp prints it (IPv4 as-is; IPv6 and IPv4-mapped in tcp6)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if ip.version == 4:
        v4 = socket.inet_aton(str(ip))[::-1].hex().upper()
        # The same socket listed in tcp6 as ::ffff:a.b.c.d (a dual-stack listener).
        mapped = ipaddress.IPv6Address(f"::ffff:{ip}").packed
    else:
        v4 = None
        mapped = ip.packed
    v6 = "".join(mapped[i : i + 4][::-1].hex().upper() for i in range(0, 16, 4))
    return (f"{v4}:{port:04X}" if v4 else "", f"{v6}:{port:04X}")


def peer_uid(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid owning the client end of this connection, or None when it cannot be told."""
    theirs, ours = _hex_address(*client), _hex_address(*server)
    if theirs is None or ours is None:
        return None
    for index, table in enumerate(TABLES):
        want = (theirs[index], ours[index])
        if not all(want):
            continue
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 7 and (fields[1], fields[2]) == want:
                try:
                    return int(fields[7])
                except ValueError:
                    return None
    return None


__all__ = ["peer_uid"]
