"""What a bundle's examples may cost at install (issue 24, finding 3): counted like the planner, bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from costly_examples import costly_functions, costly_text
from dreamer.contracts import examples as cost
from dreamer.contracts.functions import load_functions, parse_functions
from dreamer.contracts.errors import DreamerError
from dreamer.sidekick.planner.offline import templates

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = [
    "add {items} to my list",
    "(add|put) {items} (on|to) [my|the] [grocery|shopping] list",  # one-word groups stay one element
    "how (do I|to|can we) (make|cook) {name}",
    "(please do|kindly go) (add the|put the) {x} (on the|to the)",
    "((a b|c) d|e) f",
    "[(x y|z w)] q {s}",
    "(a b|c d) (e f|g h|i) [x y|z] {s}",
    " ".join(["(one two|three four)"] * 6) + " {text}",  # 64: past the planner's cap
    "(unclosed alternatives {x}",
    "stray ) bracket",
]


@pytest.mark.parametrize("example", FAMILIES)
def test_the_kernel_counts_what_the_planner_builds(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates, "MAX_EXPANSIONS", 10**6)
    assert cost.expansions(example) == len(templates.expand(example))


def test_the_starter_agents_are_well_within_the_limits() -> None:
    for path in ROOT.glob("tests/sidekick/tools.json"):
        for agent in json.loads(path.read_text()):
            total = sum(cost.expansions(e) for f in agent["functions"] for e in f.get("examples") or [])
            assert total < cost.MAX_PATTERNS_PER_BUNDLE // 10, agent["name"]


def test_the_reviews_bundle_is_refused_quickly_naming_the_limit() -> None:
    text = costly_text()
    assert 370_000 < len(text) < 400_000  # the review's 388 KB
    start = time.perf_counter()
    with pytest.raises(DreamerError) as caught:
        parse_functions(text)
    assert time.perf_counter() - start < 2.0  # indexing it took 33 s
    message = caught.value.message
    assert caught.value.code == "invalid_bundle" and "\n" not in message
    assert f"limit of {cost.MAX_EXPANSIONS_PER_EXAMPLE}" in message and "'fn_0'" in message


@pytest.mark.parametrize(
    ("shape", "limit"),
    [
        ({"functions": 20, "examples": 40, "groups": 1}, f"limit of {cost.MAX_EXAMPLES_PER_BUNDLE}"),  # 800 examples
        ({"functions": 12, "examples": 50, "groups": 3}, f"limit of {cost.MAX_PATTERNS_PER_BUNDLE}"),  # 600 x 8 phrases
    ],
)
def test_each_limit_is_enforced(shape: dict[str, int], limit: str, tmp_path: Path) -> None:
    (tmp_path / "functions.json").write_text(json.dumps(costly_functions(**shape)))
    with pytest.raises(DreamerError) as caught:
        load_functions(tmp_path)
    assert limit in caught.value.message


def test_a_bundle_within_the_limits_is_accepted() -> None:
    specs = parse_functions(json.dumps(costly_functions(functions=10, examples=30, groups=2)))  # 300 x 4
    assert len(specs) == 10
