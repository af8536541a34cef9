"""docs/SDK.md is what scripts/sdk_doc.py makes of the SDK's docstrings, and those cover
every Context member (with its grant), every manifest field and the test kit."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from typing import Any

from dreamer.contracts import manifest
from dreamer.sdk import testing
from dreamer.sdk.context import GRANTS, Context

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("sdk_doc", ROOT / "scripts" / "sdk_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sdk_reference_is_current() -> None:
    assert (ROOT / "docs" / "SDK.md").read_text() == _script().render(), "run `.venv/bin/python scripts/sdk_doc.py`"


def test_every_context_member_says_which_grant_it_needs() -> None:
    public = {n for n in vars(Context) if not n.startswith("_")}
    attributes = {"user", "invocation_id", "agent", "caller", "function", "attempt", "trigger"}
    assert public | attributes == set(GRANTS), "list each public Context member in dreamer.sdk.context.GRANTS"
    text = (ROOT / "docs" / "SDK.md").read_text()
    for name in GRANTS:
        assert f"| `ctx.{name}` |" in text


def test_every_manifest_field_is_described_in_its_model_docstring() -> None:
    for model in (manifest.Manifest, manifest.Permissions, manifest.AgentLimits, manifest.Trigger, manifest.Server):
        doc = inspect.getdoc(model) or ""
        missing = [name for name in model.model_fields if f"{name}: " not in doc]
        assert not missing, f"{model.__name__}'s docstring does not describe {missing}"


def test_every_public_member_of_the_kit_has_a_docstring() -> None:
    for name, value in vars(testing.AgentKit).items():
        if not name.startswith("_") and callable(value):
            assert inspect.getdoc(value), f"AgentKit.{name} has no docstring"
