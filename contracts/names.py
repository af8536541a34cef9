"""The name rules, written once: agents, tool servers, publishers, connections, functions, versions.

NAME is the bare pattern (for building larger ones: scopes, trigger targets);
NAME_RE and the other *_RE are anchored, for `re.fullmatch` or pydantic's `pattern`.
"""

from __future__ import annotations

import re

# An agent, tool server, publisher or data connection: lower case, digits and '-', 2 to 63 long.
NAME = r"[a-z][a-z0-9-]{1,62}"
# A function (a Python identifier of at most 64 characters).
IDENT = r"[A-Za-z_][A-Za-z0-9_]{0,63}"

NAME_RE = rf"^{NAME}$"
IDENT_RE = rf"^{IDENT}$"
SEMVER_RE = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
MODULE_RE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"

_NAME = re.compile(NAME)


def is_name(value: object) -> bool:
    """Whether `value` is an agent / tool server / publisher / connection name."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None
