"""docs/API.md is what scripts/openapi_doc.py makes of the current OpenAPI schema."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script() -> object:
    spec = importlib.util.spec_from_file_location("openapi_doc", ROOT / "scripts" / "openapi_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_reference_is_current() -> None:
    doc = _script()
    current = doc.render(doc.schema())  # type: ignore[attr-defined]
    assert (ROOT / "docs" / "API.md").read_text() == current, "run `.venv/bin/python scripts/openapi_doc.py`"


def test_every_route_is_in_the_reference() -> None:
    doc = _script()
    spec = doc.schema()  # type: ignore[attr-defined]
    text = (ROOT / "docs" / "API.md").read_text()
    for path, item in spec["paths"].items():
        for method in item:
            assert f"| `{method.upper()}` | `{path}` |" in text
