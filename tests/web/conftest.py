"""The web tests import their helpers from browser_kit (a conftest module name is shared
by every test folder, so nothing is imported from here)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "e2e"))  # kernelproc
sys.path.insert(0, str(Path(__file__).resolve().parent))  # browser_kit
