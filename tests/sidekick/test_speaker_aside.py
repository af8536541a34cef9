"""Why the user asks, said of themselves after a comma, is no part of the value (values._SPEAKER_ASIDE):
families of asides, each after several values; a clause that says what happened stays."""

from __future__ import annotations

import pytest

from dreamer.sidekick.planner.language.values import tidy_text

VALUES = ["Nonna's birthday is on the 14th", "the wifi password is on the router", "rent", "date night"]
ASIDES = [", I will forget it otherwise", ", I can't remember", ", I'm sick", ", it's been bugging me for weeks",
          ", I'm swamped today", ", it keeps slipping my mind otherwise"]


@pytest.mark.parametrize("aside", ASIDES)
@pytest.mark.parametrize("value", VALUES)
def test_the_speakers_reason_after_a_comma_goes(value: str, aside: str) -> None:
    assert tidy_text(value + aside) == value


@pytest.mark.parametrize("text", ["the meeting went well, I think we got the contract",
                                  "call the plumber, I mean the one from last year",
                                  "Sam's number, ask him for the new one"])
def test_a_clause_that_is_no_reason_stays(text: str) -> None:
    assert tidy_text(text) == text
