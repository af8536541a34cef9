"""Write docs/API.md, the HTTP API reference, from the kernel's OpenAPI schema.

    .venv/bin/python scripts/openapi_doc.py          # rewrite docs/API.md
    .venv/bin/python scripts/openapi_doc.py --check  # exit 1 when docs/API.md is not current

The schema is the one the running kernel serves at /openapi.json (host/build.py's app,
built without starting it), so the reference cannot drift from the routes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "API.md"
METHODS = ("get", "post", "put", "patch", "delete")


def schema() -> dict[str, Any]:
    from dreamer.host.build import create_app
    from dreamer.kernel.config import load_settings

    with tempfile.TemporaryDirectory() as home:
        # Building the app reads settings only; the kernel starts in the lifespan, which does not run here.
        app = create_app(load_settings(home=Path(home), database_url=f"sqlite:///{home}/kernel.db"))
        spec: dict[str, Any] = app.openapi()
        return spec


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ").replace("|", "\\|")


def _params(op: dict[str, Any]) -> str:
    names = []
    for p in op.get("parameters", []):
        if p.get("in") in ("query", "path"):
            names.append(f"`{p['name']}`" + ("" if p.get("required") else "?"))
    return ", ".join(names)


def _body(op: dict[str, Any]) -> str:
    content = (op.get("requestBody") or {}).get("content") or {}
    for media, body in content.items():
        ref = (body.get("schema") or {}).get("$ref", "")
        return f"`{ref.rsplit('/', 1)[-1]}`" if ref else f"`{media}`"
    return ""


def render(spec: dict[str, Any]) -> str:
    rows: dict[str, list[str]] = {}
    for path, item in sorted(spec.get("paths", {}).items()):
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            tag = (op.get("tags") or ["other"])[0]
            summary = _first_line(op.get("description")) or op.get("summary", "")
            rows.setdefault(tag, []).append(
                f"| `{method.upper()}` | `{path}` | {_params(op)} | {_body(op)} | {summary} |"
            )
    lines = [
        "# HTTP API",
        "",
        "Generated from the kernel's OpenAPI schema by `scripts/openapi_doc.py`; do not edit by hand",
        "(`tests/architecture/test_api_doc.py` fails when this file is not current). The live schema",
        "is served at `/openapi.json` and browsable at `/docs` on a running kernel.",
        "",
        "Every `/v1` route takes `Authorization: Bearer TOKEN` (or the web app's session cookie).",
        'An error is `{"error": {"code", "message"}}`, with the status of its code (`dreamer.contracts.errors.STATUS`).',
        "",
    ]
    for tag in sorted(rows):
        lines += [f"## {tag}", "", "| method | path | parameters | body | what it does |", "|---|---|---|---|---|"]
        lines += rows[tag]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/API.md is not current")
    args = parser.parse_args()
    text = render(schema())
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print("docs/API.md is not current: run `.venv/bin/python scripts/openapi_doc.py`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
