"""The dialogue suite (dialogue_suite.py) against a real kernel: both splits at 90% or better.

The held-out splits are run, never tuned to; their numbers are what the note reports
(heldout_2.yaml is a second batch, written before the answer-word, undo and help fixes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dialogue_suite import HERE, load, reads_badly, run_suite
from kernelproc import KernelProc, start_kernel

TARGET = 0.9
# heldout_2 (written before the answer-word, undo and help fixes, never read) is below the target:
# its floor guards against falling back; docs/PERFORMANCE.md has the number.
FLOOR = {"tuned": TARGET, "heldout": TARGET, "heldout_2": 0.8}


@pytest.fixture(scope="module")
def suite_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("dialogues") / "home", wait_s=300)
    yield k
    k.stop()


def test_the_suite_is_written_as_families_with_a_held_out_split() -> None:
    tuned, heldout = load(HERE / "tuned.yaml"), load(HERE / "heldout.yaml")
    assert len(tuned) + len(heldout) >= 80 and len(heldout) >= 0.25 * (len(tuned) + len(heldout))
    assert len({c.family for c in tuned}) >= 20 and len({c.family for c in heldout}) >= 10
    assert all(len(c.turns) >= 1 for c in tuned + heldout)


def test_field_dumps_and_exception_names_are_caught() -> None:
    # The check every reply goes through must fail on what the issue saw.
    assert reads_badly("✓ Add items: added: milk; already there: none; items: milk, eggs")
    assert reads_badly("notes: 10 fields")
    assert reads_badly("date: 2026-12-01; weekday: Tuesday; timezone: UTC; recipe: French Onion Soup")
    assert reads_badly("already_there: none")
    assert reads_badly("Sorry (KeyError)")
    assert reads_badly("Added milk to your grocery list.") is None


@pytest.mark.timeout(900)
@pytest.mark.parametrize("split", ["tuned", "heldout", "heldout_2"])
def test_split_meets_the_target(suite_kernel: KernelProc, split: str) -> None:
    passed, total, failures, _ = run_suite(suite_kernel, HERE / f"{split}.yaml")
    print(f"{split}: {passed}/{total}")
    assert passed / total >= FLOOR[split], "\n".join(failures)


