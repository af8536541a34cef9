"""The dialogue suite (dialogue_suite.py) against a real kernel: both splits at 90% or better.

The held-out splits are run, never tuned to; their numbers are what the note reports
(heldout_2.yaml is a second batch, written before the answer-word, undo and help fixes;
heldout_3.yaml a third, written by an outsider while others tuned: only its score is reported)."""

from __future__ import annotations

import pytest
from dialogue_suite import HERE, load, reads_badly, run_suite
from kernelproc import KernelProc

TARGET = 0.9
# Floors just below what the splits measure (side16d, 2026-12-05: tuned 348/350, heldout 57/57,
# heldout_2 41/45), so a fall back shows; docs/PERFORMANCE.md has the numbers.
# heldout_3 (written by an outsider while others tuned, never run while writing, never read):
# 75/115 on main before side16d and side16r, 93/115 (81%) after; short of the 90% target, so
# its floor guards against falling back.
# side16d2 (2026-12-05): tuned_2 (outsider wordings, one family per dialogue mechanism) 79/101 on main's
# dialogue code -> 260/265; heldout_d (its families set aside, only scored) 16/25 -> 18/25; heldout_3 93 -> 98/115.
# side17d (2026-12-05): heldout_4 (the fourth batch, score-only until then: 63/90 on main) released as
# tuning material, 63/90 -> 84/90 on a kernel of its own (83/90 after the other splits ran on the same kernel).
FLOOR = {"tuned": 0.98, "heldout": 0.98, "heldout_2": TARGET, "heldout_3": 0.83, "tuned_2": 0.96, "heldout_d": 0.68,
         "heldout_4": TARGET}
# heldout_7 (the seventh batch, branch heldout7), heldout_8 (the eighth, branch heldout8), heldout_9 (the ninth,
# branch heldout9), heldout_10 (the tenth, branch heldout10), heldout_11 (the eleventh, branch heldout11),
# heldout_12 (the twelfth, branch heldout12, released on 2026-12-07 after its blind scores), heldout_13 (the
# thirteenth, branch heldout13, released on 2026-12-07 after its blind scores), heldout_14 (the fourteenth,
# branch heldout14, score-only), heldout_15 (the fifteenth, branch heldout15, score-only), heldout_16 (the
# sixteenth, branch heldout16, score-only) and heldout_17 (the seventeenth, branch heldout17, score-only) have no
# floor: they are
# not among the splits run below, only loaded (their sizes are checked);
# `dialogue_suite.py heldout_7` / `heldout_8` / `heldout_9` / `heldout_10` / `heldout_11` / `heldout_12` /
# `heldout_13` / `heldout_14` / `heldout_15` / `heldout_16` / `heldout_17` print their scores.
SCORED_ONLY = ("heldout_3", "heldout_d", "heldout_7", "heldout_8", "heldout_9", "heldout_10",
               "heldout_11", "heldout_12", "heldout_13", "heldout_14", "heldout_15", "heldout_16",
               "heldout_17")  # failures not shown


def test_the_suite_is_written_as_families_with_a_held_out_split() -> None:
    tuned, heldout = load(HERE / "tuned.yaml"), load(HERE / "heldout.yaml")
    held = len(heldout) + len(load(HERE / "heldout_2.yaml"))
    # The tuned split grew with stress batches of outsider wordings (side16d): the held-out splits
    # together stay at least 80 conversations and a fifth of all.
    assert len(tuned) + len(heldout) >= 80 and held >= 80 and held >= 0.2 * (len(tuned) + held)
    assert len({c.family for c in tuned}) >= 20 and len({c.family for c in heldout}) >= 10
    assert all(len(c.turns) >= 1 for c in tuned + heldout)


def test_the_third_held_out_batch_is_big_enough() -> None:
    third = load(HERE / "heldout_3.yaml")
    assert len(third) >= 60 and len({c.family for c in third}) >= 17
    assert all(2 <= len(c.turns) <= 4 for c in third)


def test_the_seventh_held_out_batch_is_big_enough() -> None:
    # Loaded only, never run here: the seventh batch is score-only and has no floor.
    seventh = load(HERE / "heldout_7.yaml")
    assert len(seventh) >= 100 and len({c.family for c in seventh}) >= 25
    assert all(1 <= len(c.turns) <= 4 for c in seventh)


def test_the_eighth_held_out_batch_is_big_enough() -> None:
    # Loaded only, never run here: the eighth batch is score-only and has no floor.
    eighth = load(HERE / "heldout_8.yaml")
    assert len(eighth) >= 120 and len({c.family for c in eighth}) >= 30
    assert all(1 <= len(c.turns) <= 4 for c in eighth)


def test_the_ninth_held_out_batch_is_big_enough() -> None:
    # Loaded only, never run here: the ninth batch is score-only and has no floor.
    ninth = load(HERE / "heldout_9.yaml")
    assert len(ninth) >= 150 and len({c.family for c in ninth}) >= 30
    assert all(1 <= len(c.turns) <= 4 for c in ninth)


def test_the_tenth_held_out_batch_is_big_enough() -> None:
    # Loaded only, never run here: the tenth batch is score-only and has no floor.
    tenth = load(HERE / "heldout_10.yaml")
    assert len(tenth) >= 150 and len({c.family for c in tenth}) >= 35
    assert all(1 <= len(c.turns) <= 4 for c in tenth)


# The later batches' sizes (conversations, families): loaded only, never run here; each is score-only or was
# released after its blind score, and none has a floor.
LATER_BATCHES = {11: (150, 35), 12: (150, 40), 13: (180, 50), 14: (180, 50), 15: (180, 50), 16: (220, 65),
                 17: (250, 65)}


@pytest.mark.parametrize("n", sorted(LATER_BATCHES))
def test_a_later_held_out_batch_is_big_enough(n: int) -> None:
    batch = load(HERE / f"heldout_{n}.yaml")
    conversations, families = LATER_BATCHES[n]
    assert len(batch) >= conversations and len({c.family for c in batch}) >= families
    assert all(1 <= len(c.turns) <= 4 for c in batch)
    # Users of their own are one per conversation ("h<batch>...{n}"); the main user's are grocery or read-only.
    own = [c.user for c in batch if c.user != "main"]
    assert len(own) == len(set(own)) and all(u.startswith(f"h{n}") for u in own)


def test_the_side16d2_splits_are_families_with_a_quarter_held_out() -> None:
    tuned, held = load(HERE / "tuned_2.yaml"), load(HERE / "heldout_d.yaml")
    families = {c.family for c in tuned}, {c.family for c in held}
    assert len(families[0]) >= 30 and len(families[1]) >= 10 and not families[0] & families[1]


def test_field_dumps_and_exception_names_are_caught() -> None:
    # The check every reply goes through must fail on what the issue saw.
    assert reads_badly("✓ Add items: added: milk; already there: none; items: milk, eggs")
    assert reads_badly("notes: 10 fields")
    assert reads_badly("date: 2026-12-01; weekday: Tuesday; timezone: UTC; recipe: French Onion Soup")
    assert reads_badly("already_there: none")
    assert reads_badly("Sorry (KeyError)")
    assert reads_badly("Added milk to your grocery list.") is None


# The tuned splits run in a module of their own (test_dialogue_tuned.py), on a kernel of their own, so that
# pytest-xdist (--dist loadfile) gives the two halves to two workers: together they were the suite's longest chain.
@pytest.mark.timeout(900)
# (heldout_4, released as tuning material like the fifth to the thirteenth, is scored by `dialogue_suite.py heldout_4`,
# not here: the suite's time is over its bar, and the tuned splits and the blind ones guard the floors)
@pytest.mark.parametrize("split", ["heldout", "heldout_2", "heldout_3", "heldout_d"])
def test_split_meets_the_target(suite_kernel: KernelProc, split: str) -> None:
    # heldout_3 (115 conversations, the longest of these) on one in two of each family's: every family runs,
    # and `dialogue_suite.py heldout_3` scores them all; the floor guards a fall back either way.
    meets_the_floor(suite_kernel, split, every=2 if split == "heldout_3" else 1)


def meets_the_floor(kernel: KernelProc, split: str, every: int = 1) -> None:
    """The split run against `kernel` scores at least its floor (on one conversation in `every` of each family);
    a blind split's failures are not shown."""
    passed, total, failures, _ = run_suite(kernel, HERE / f"{split}.yaml", every)
    print(f"{split}: {passed}/{total}")
    shown = "" if split in SCORED_ONLY else "\n".join(failures)
    assert passed / total >= FLOOR[split], shown or f"{split}: {passed}/{total}"


