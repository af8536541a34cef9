"""Background invocations, the feed and triggers: fixtures and agents shared by the modules here."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS / "e2e"))  # kernelproc
sys.path.insert(0, str(TESTS / "net"))  # localhttp
