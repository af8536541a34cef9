"""The dialogue suite's tuned splits (tuned.yaml, tuned_2.yaml) against a kernel of their own.

Apart from the held-out splits (test_dialogue_suite.py) only so that two pytest-xdist workers share the
work: the floors and the runner are test_dialogue_suite's."""

from __future__ import annotations

import pytest
from dialogue_suite import KernelProc
from test_dialogue_suite import meets_the_floor


@pytest.mark.timeout(900)
@pytest.mark.parametrize("split", ["tuned", "tuned_2"])
def test_tuned_split_meets_its_floor(suite_kernel: KernelProc, split: str) -> None:
    # One in three of each family's conversations (every family runs): the tuned splits were the suite's longest
    # test, and their fillers repeat one mechanism each. `dialogue_suite.py tuned` runs them all.
    meets_the_floor(suite_kernel, split, every=3)
