"""Single requests in families (routing_families.yaml) and their held-out splits: at least 95% right.

The tuned file was looked at while building the semantic matcher; the held-out file
(routing_families_held_out.yaml) was written with it and only ever scored, and a second
held-out batch (routing_families_held_out_2.yaml) was written before the meaning veto was
tuned and only ever scored. All numbers are printed (pytest -s). The first held-out split
reached the 95% target without being looked at; the second, used as a development set since
branch side16r (its score read while general mechanisms were built, never a sentence fixed
for itself), is at 93% and asserted just below that. A third held-out batch
(routing_families_held_out_3.yaml) was written by an outsider while others tuned, without
running Sidekick on it: only its summary line is printed, never its failures.
"""

from __future__ import annotations

from datetime import date

import pytest

from dreamer.sidekick.planner import Tool
from routing_eval import (
    FAMILIES,
    FAMILIES_HELD_OUT,
    FAMILIES_HELD_OUT_2,
    FAMILIES_HELD_OUT_3,
    FAMILIES_HELD_OUT_4,
    FAMILIES_HELD_OUT_S,
    same_day,
    held_out_3_line,
    held_out_4_line,
    held_out_families,
    held_out_families_2,
    held_out_families_3,
    held_out_families_7,
    held_out_families_8,
    held_out_families_9,
    held_out_families_10,
    held_out_families_11,
    held_out_families_12,
    held_out_families_13,
    held_out_families_14,
    held_out_families_15,
    held_out_families_16,
    held_out_families_17,
    held_out_families_s,
    load_families,
    run_families,
)

TARGET = 0.97  # the tuned families: measured 98.0% (branch side16r)
HELD_OUT_FLOOR = 0.95
HELD_OUT_2_FLOOR = 0.92  # measured 93.0% (branch side16r); a guard, still short of the target
# written by a helper session without running Sidekick, merged before this round's tuning and
# only scored: 76.9% of 424 before side16s + side16d2, 79.0% of 419 after.
HELD_OUT_4_FLOOR = 0.77
HELD_OUT_3_FLOOR = 0.88  # written by an outsider while others tuned; 79.7% of 488 after side16r, 90.4% of 480 after side16s (its failures' kinds, not sentences, were known then)
HELD_OUT_S_FLOOR = 0.78  # the sixth batch's held-out split (side16s): 57.7% of 97 before that round, 81.4% after


def test_the_sets_are_big_enough_and_split() -> None:
    tuned, _, _ = load_families(FAMILIES, "dev")
    held, _, _ = held_out_families()
    held_2, _, _ = held_out_families_2()
    # Every held-out split counts towards the quarter: the third batch and the sixth's (side16s) too.
    later = len(held_out_families_3()[0]) + len(held_out_families_s()[0])
    assert len(tuned) + len(held) >= 300
    assert len(held) + len(held_2) + later >= 0.25 * (len(tuned) + len(held) + len(held_2) + later)
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


def test_the_third_held_out_batch_is_big_enough_and_apart() -> None:
    seen = {c.text for c in load_families(FAMILIES, "dev")[0]} | {c.text for c in held_out_families()[0]} | {
        c.text for c in held_out_families_2()[0]}
    held_3, _, avoid = held_out_families_3()
    assert len(held_3) >= 300 and not {c.text for c in held_3} & seen
    no_call = sum(c.reply for c in held_3)
    assert no_call >= 0.15 * len(held_3) and len(avoid) >= 5


def test_third_held_out_batch(tools: list[Tool]) -> None:
    # Scored, never read: only the summary line is printed or shown on failure.
    held_3 = run_families(tools, FAMILIES_HELD_OUT_3, "held_out_3")
    line = held_out_3_line(held_3)
    print(line)
    assert held_3.accuracy() >= HELD_OUT_3_FLOOR, line


def test_sixth_batch_held_out_split(tools: list[Tool]) -> None:
    # Scored, never read, like the third batch: only its summary line is shown.
    held_s = run_families(tools, FAMILIES_HELD_OUT_S, "held_out_s")
    line = held_out_3_line(held_s).replace("held_out_3", "held_out_s")
    print(line)
    assert held_s.accuracy() >= HELD_OUT_S_FLOOR, line


def test_fourth_held_out_batch(tools: list[Tool]) -> None:
    # Scored, never read, like the third batch: only its summary line is shown.
    held_4 = run_families(tools, FAMILIES_HELD_OUT_4, "held_out_4")
    line = held_out_4_line(held_4)
    print(line)
    assert held_4.count() >= 300, line
    assert held_4.accuracy() >= HELD_OUT_4_FLOOR, line


def test_the_seventh_held_out_batch_is_big_enough_and_apart() -> None:
    # Loaded only, never planned here: the seventh batch (branch heldout7) is score-only and has no floor;
    # `routing_eval.py --families` prints its `held_out_7:` line.
    held_7, context, _ = held_out_families_7()
    assert len(held_7) >= 320 and len({c.text for c in held_7}) == len(held_7)
    assert sum(c.reply for c in held_7) >= 0.18 * len(held_7)
    assert str(context.timezone) == "America/Chicago"


def test_the_eighth_held_out_batch_is_big_enough_and_apart() -> None:
    # Loaded only, never planned here: the eighth batch (branch heldout8) is score-only and has no floor;
    # `routing_eval.py --families` prints its `held_out_8:` line.
    held_8, context, _ = held_out_families_8()
    assert len(held_8) >= 320 and len({c.text for c in held_8}) == len(held_8)
    assert sum(c.reply for c in held_8) >= 0.2 * len(held_8)
    assert str(context.timezone) == "Europe/London"


def test_the_ninth_held_out_batch_is_big_enough_and_apart() -> None:
    # Loaded only, never planned here: the ninth batch (branch heldout9) is score-only and has no floor;
    # `routing_eval.py --families` prints its `held_out_9:` line.
    held_9, context, _ = held_out_families_9()
    assert len(held_9) >= 420 and len({c.text for c in held_9}) == len(held_9)
    assert sum(c.reply for c in held_9) >= 0.2 * len(held_9)
    assert str(context.timezone) == "Asia/Kolkata"


def test_the_tenth_held_out_batch_is_big_enough_and_apart() -> None:
    # Loaded only, never planned here: the tenth batch (branch heldout10) is score-only and has no floor;
    # `routing_eval.py --families` prints its `held_out_10:` line.
    held_10, context, avoid = held_out_families_10()
    assert len(held_10) >= 450 and len({c.text for c in held_10}) == len(held_10)
    assert sum(c.reply for c in held_10) >= 0.2 * len(held_10) and len(avoid) >= 5
    assert str(context.timezone) == "Australia/Sydney"


# The later batches (loaded only, never planned here; each score-only or released after its blind score, with no
# floor; `routing_eval.py --families` prints their summary lines): least requests, least families, the share
# with no call, and the timezone of their "now".
LATER_BATCHES = {
    11: (held_out_families_11, 600, 70, 0.22, 0.25, "America/Chicago"),
    12: (held_out_families_12, 600, 110, 0.21, 0.25, "Pacific/Auckland"),
    13: (held_out_families_13, 600, 110, 0.21, 0.25, "Australia/Sydney"),
    14: (held_out_families_14, 650, 120, 0.22, 0.24, "America/Toronto"),
    15: (held_out_families_15, 650, 120, 0.22, 0.24, "America/Chicago"),
    16: (held_out_families_16, 800, 180, 0.22, 0.24, "Australia/Perth"),
    17: (held_out_families_17, 950, 180, 0.22, 0.24, "Africa/Nairobi"),
}


@pytest.mark.parametrize("n", sorted(LATER_BATCHES))
def test_a_later_held_out_batch_is_big_enough_and_apart(n: int) -> None:
    import routing_eval
    import yaml

    loader, requests, families, low, high, timezone = LATER_BATCHES[n]
    cases, context, avoid = loader()
    assert len(cases) >= requests and len({c.text for c in cases}) == len(cases)
    path = getattr(routing_eval, f"FAMILIES_HELD_OUT_{n}")
    assert len(yaml.safe_load(path.read_text())["families"]) >= families
    assert low * len(cases) <= sum(c.reply for c in cases) <= high * len(cases) and len(avoid) >= 10
    assert str(context.timezone) == timezone


def test_a_day_passed_as_a_word_is_the_iso_day_it_names() -> None:
    # The contracts take "today", "tomorrow", a weekday or a date; the planner passes the first two as words.
    today = date(2026, 3, 27)
    assert same_day("2026-03-28", "tomorrow", today) and same_day("2026-03-27", "Today", today)
    assert not same_day("2026-03-29", "tomorrow", today) and not same_day("2026-03-28", "tomorrow", None)
    assert not same_day("milk", "today", today) and not same_day("2026-03-28", "saturday", today)


def test_the_scorer_takes_one_instant_written_with_or_without_seconds() -> None:
    from routing_eval import _same

    assert _same("2026-11-23T15:00:00-06:00", "2026-11-23T15:00-06:00")
    assert not _same("2026-11-23T15:00:00-06:00", "2026-11-23T15:00-05:00")  # another offset: another argument
    assert not _same("2026-11-23T15:00:00-06:00", "2026-11-23T16:00-06:00")
    assert not _same("2026-11-23", "2026-11-23T00:00")  # a day is not a time of day
