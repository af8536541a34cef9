"""Browser waits are written as functions, never as bare expressions.

Playwright evaluates a bare `wait_for_function("expr")` with `eval` on every poll. The
first poll runs inside the debugger's evaluate, which the page's CSP (`script-src 'self'`)
does not cover; a later poll runs from a frame callback, where CSP refuses `eval`. So a
bare expression passes when the page is already there and fails when the test has to
wait — a flake that only load shows. A function (`"() => expr"`) is evaluated once and
then called, so CSP never sees an `eval` again.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
_WAIT = re.compile(r"wait_for_function\(\s*f?[\"']([^\"']*)")


def test_every_wait_for_function_is_given_a_function() -> None:
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in _WAIT.finditer(line):
                if not match.group(1).lstrip().startswith(("() =>", "(", "function")):
                    bare.append(f"{path.relative_to(TESTS)}:{number}")
    assert not bare, f"write these waits as '() => …' (CSP refuses eval on a later poll): {bare}"
