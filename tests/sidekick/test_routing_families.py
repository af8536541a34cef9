"""Single requests in families (routing_families.yaml) and their held-out splits: at least 95% right.

The tuned file was looked at while building the semantic matcher; the held-out file
(routing_families_held_out.yaml) was written with it and only ever scored, and a second
held-out batch (routing_families_held_out_2.yaml) was written before the meaning veto was
tuned and only ever scored. All numbers are printed (pytest -s). The first held-out split
reached the 95% target without being looked at; the second is far from it (phrasings no
tuned family covers) and is asserted only against falling back.
"""

from __future__ import annotations

from dreamer.sidekick.planner import Tool
from routing_eval import (
    FAMILIES,
    FAMILIES_HELD_OUT,
    FAMILIES_HELD_OUT_2,
    held_out_families,
    held_out_families_2,
    load_families,
    run_families,
)

TARGET = 0.95
HELD_OUT_FLOOR = 0.95
HELD_OUT_2_FLOOR = 0.65  # a guard against regressions, well below the target: see the note in docs/PERFORMANCE.md


def test_the_sets_are_big_enough_and_split() -> None:
    tuned, _, _ = load_families(FAMILIES, "dev")
    held, _, _ = held_out_families()
    held_2, _, _ = held_out_families_2()
    assert len(tuned) + len(held) >= 300
    assert len(held) + len(held_2) >= 0.25 * (len(tuned) + len(held) + len(held_2))
    assert not {c.text for c in tuned} & {c.text for c in held}
    assert sum(c.reply for c in tuned) >= 20 and sum(c.reply for c in held) >= 15  # out of scope: no call
    assert len(held_2) >= 120 and sum(c.reply for c in held_2) >= 30
    assert not {c.text for c in held_2} & ({c.text for c in tuned} | {c.text for c in held})


def test_routing_families(tools: list[Tool]) -> None:
    tuned = run_families(tools, FAMILIES, "dev")
    held = run_families(tools, FAMILIES_HELD_OUT, "held_out")
    held_2 = run_families(tools, FAMILIES_HELD_OUT_2, "held_out_2")
    line = (f"families: tuned {tuned.accuracy():.1%} of {tuned.count()}, held out {held.accuracy():.1%} of "
            f"{held.count()}, held out 2 {held_2.accuracy():.1%} of {held_2.count()}; "
            f"CPU median {tuned.timing(cpu=True)[0]:.1f} ms")
    print(line)
    assert tuned.accuracy() >= TARGET, line + "\n" + "\n".join(tuned.failures())
    assert held.accuracy() >= HELD_OUT_FLOOR, line
    assert held_2.accuracy() >= HELD_OUT_2_FLOOR, line
