"""Runs one SQL statement against the agent's database, inside the agent's sandbox.

`dreamer database` uses this instead of opening agent.db in the kernel: the
statement can then only ever see what the agent itself can see (/data), so
ATTACH, VACUUM INTO and friends cannot reach the kernel's files.
Reads {"query", "write", "max_rows"} as one JSON line; writes one JSON line back.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import sys
from typing import Any


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode()}
    return value


def run(query: str, write: bool, max_rows: int) -> dict[str, Any]:
    path = os.path.join(os.environ.get("DREAMER_DATA_DIR", "/data"), "agent.db")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        if not write:
            # The database refuses changes; the kernel asks the person and retries with write=True.
            conn.execute("PRAGMA query_only = ON")
        else:
            conn.execute("BEGIN")
        cur = conn.execute(query)
        columns = [d[0] for d in cur.description] if cur.description else []
        rows = [[_cell(v) for v in row] for row in cur.fetchmany(max_rows + 1)] if columns else []
        truncated = len(rows) > max_rows
        changes = conn.total_changes
        if write:
            conn.execute("COMMIT")
        return {"columns": columns, "rows": rows[:max_rows], "changes": changes, "truncated": truncated}
    finally:
        conn.close()


def main() -> int:
    try:
        request = json.loads(sys.stdin.readline())
        answer = run(str(request["query"]), bool(request.get("write")), int(request.get("max_rows", 1000)))
    except sqlite3.OperationalError as exc:
        readonly = "readonly" in str(exc) or "read-only" in str(exc)
        code = "confirmation_required" if readonly else "invalid_argument"
        answer = {"error": {"code": code, "message": f"SQL error: {exc}"}}
    except (sqlite3.Error, sqlite3.Warning) as exc:
        answer = {"error": {"code": "invalid_argument", "message": f"SQL error: {exc}"}}
    except (ValueError, KeyError, TypeError) as exc:
        answer = {"error": {"code": "invalid_argument", "message": f"bad request to the database shell: {exc}"}}
    sys.stdout.write(json.dumps(answer, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
