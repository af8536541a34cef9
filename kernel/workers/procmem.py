"""What a worker really costs in memory: PSS and USS from /proc/PID/smaps_rollup.

RSS counts every page a process maps, shared ones too: the interpreter binary,
libpython and the .so files of the packages are the same pages in every worker,
so summing RSS over workers counts them once per worker. USS (Private_Clean +
Private_Dirty) is what the machine gets back when the process goes; PSS splits
each shared page among its sharers, so PSS summed over all processes is the
memory they use together. Capacity (how many workers fit on a node) is USS per
worker plus the shared pages once.

A worker is more than its interpreter: bwrap leaves a monitor process outside the
sandbox and an init inside its pid namespace. `tree_memory` sums a process and
its descendants, so a worker is measured whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KIB = 1024
PROC = Path("/proc")


@dataclass(frozen=True)
class ProcMemory:
    """Kilobytes, as the kernel reports them."""

    rss_kb: int
    pss_kb: int
    uss_kb: int  # Private_Clean + Private_Dirty
    swap_pss_kb: int = 0

    def __add__(self, other: ProcMemory) -> ProcMemory:
        return ProcMemory(
            self.rss_kb + other.rss_kb,
            self.pss_kb + other.pss_kb,
            self.uss_kb + other.uss_kb,
            self.swap_pss_kb + other.swap_pss_kb,
        )

    def mb(self) -> dict[str, float]:
        """The figures in MiB, rounded for a report."""
        return {
            "rss_mb": round(self.rss_kb / KIB, 2),
            "pss_mb": round(self.pss_kb / KIB, 2),
            "uss_mb": round(self.uss_kb / KIB, 2),
        }


ZERO = ProcMemory(0, 0, 0, 0)


def parse_rollup(text: str) -> ProcMemory:
    """The fields of one smaps_rollup file (the first line names the address range)."""
    fields: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        parts = rest.split()
        if sep and len(parts) == 2 and parts[1] == "kB" and parts[0].isdigit():
            fields[name] = int(parts[0])
    if "Pss" not in fields or "Rss" not in fields:
        raise ValueError("smaps_rollup has no Rss or Pss line")
    return ProcMemory(
        rss_kb=fields["Rss"],
        pss_kb=fields["Pss"],
        uss_kb=fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0),
        swap_pss_kb=fields.get("SwapPss", 0),
    )


def process_memory(pid: int) -> ProcMemory | None:
    """One process's memory, or None when it is gone or not ours to read."""
    try:
        return parse_rollup((PROC / str(pid) / "smaps_rollup").read_text())
    except (OSError, ValueError):
        return None


def children_of(pid: int) -> list[int]:
    """Direct children, from every thread's children list (Linux ≥ 3.5 with CONFIG_PROC_CHILDREN)."""
    found: list[int] = []
    try:
        threads = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return found
    for tid in threads:
        try:
            text = (PROC / str(pid) / "task" / tid / "children").read_text()
        except OSError:
            continue
        found.extend(int(child) for child in text.split())
    return found


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it, parents before children."""
    order, queue, seen = [], [pid], set()
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        order.append(current)
        queue.extend(children_of(current))
    return order


def tree_memory(pid: int) -> ProcMemory:
    """A process and all its descendants, summed (processes that vanish count nothing)."""
    total = ZERO
    for member in descendants(pid):
        found = process_memory(member)
        if found is not None:
            total = total + found
    return total
