"""Decision 0054: the kernel runs uvloop, which gives a subprocess socketpairs, so no kernel code
starts a process through the loop; every backend goes through kernel/sandbox/spawn.py (pipes)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPAWN = ROOT / "kernel" / "sandbox" / "spawn.py"  # says why, in words that name the loop's way
THROUGH_THE_LOOP = re.compile(r"create_subprocess_(exec|shell)|\.subprocess_(exec|shell)\(")


def test_no_kernel_code_starts_a_process_through_the_event_loop() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "kernel").rglob("*.py")) if path != SPAWN
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if THROUGH_THE_LOOP.search(line) and not line.lstrip().startswith("#")
    ]
    assert found == [], f"start processes with kernel/sandbox/spawn.py (pipes under uvloop too): {found}"
