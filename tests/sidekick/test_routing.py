"""Routing accuracy on everyday requests (routing_cases.yaml): at least 90% to the right function
with the right arguments.

The cases are judged by routing_eval.judge. `dev` cases were looked at while the
engine was built; `held_out` cases were written afterwards and only evaluated.
Both numbers and the timings are printed (pytest -s, or -rA); no test asserts a time.
"""

from __future__ import annotations

import pytest
from routing_eval import Report, load_cases, run
from synthetic import synthetic_tools

from dreamer.sidekick.planner import Tool

TARGET = 0.98  # measured 100% (branch side16r)
# With about fifty more tools installed, some requests fairly become ambiguous (a to-do list
# next to the grocery list): the planner then asks, which counts as a miss here.
TARGET_WITH_MORE_TOOLS = 0.97  # measured 99.1% (branch side16r)


def summary(report: Report, label: str) -> str:
    median, p95 = report.timing()
    cpu_median, cpu_p95 = report.timing(cpu=True)
    return (
        f"{label}: {report.accuracy():.1%} of {report.count()} ({report.by_group()}); per request "
        f"wall median {median:.1f} ms, p95 {p95:.1f} ms; CPU median {cpu_median:.1f} ms, p95 {cpu_p95:.1f} ms"
    )


def test_there_are_enough_cases() -> None:
    cases, _ = load_cases()
    assert len(cases) >= 150
    assert sum(c.held_out for c in cases) >= 30


def test_routing_accuracy(tools: list[Tool]) -> None:
    cases, context = load_cases()
    report = run(tools, cases, context)
    line = summary(report, f"{len(tools)} starter functions")
    print(line)
    failures = "\n".join(report.failures())
    assert report.accuracy() >= TARGET, f"{line}\nmisrouted:\n{failures}"


def test_routing_accuracy_with_many_more_tools(tools: list[Tool]) -> None:
    # Requests that no starter agent serves are left out: another tool may now serve them.
    cases, context = load_cases()
    served = [c for c in cases if not c.reply]
    more = [*tools, *synthetic_tools()]
    report = run(more, served, context)
    line = summary(report, f"{len(more)} functions")
    print(line)
    failures = "\n".join(report.failures())
    assert report.accuracy() >= TARGET_WITH_MORE_TOOLS, f"{line}\nmisrouted:\n{failures}"


@pytest.mark.parametrize("text", ["add milk and eggs to my shopping list", "what's on my calendar tomorrow"])
def test_cases_include_the_issues_examples(text: str) -> None:
    cases, _ = load_cases()
    assert text in {c.text for c in cases}
