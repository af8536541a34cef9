"""Running the routing cases (routing_cases.yaml) through a planner and judging each plan.

    .venv/bin/python tests/sidekick/routing_eval.py            # accuracy and timings, failures listed
    .venv/bin/python tests/sidekick/routing_eval.py --synthetic  # the same with ~50 more tools installed
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from dreamer.sidekick.planner import OfflinePlanner, Plan, PlanContext, Tool, tools_from_agents

HERE = Path(__file__).resolve().parent
CASES = HERE / "routing_cases.yaml"
TOOLS = HERE / "tools.json"


@dataclass(frozen=True)
class Case:
    text: str
    steps: tuple[tuple[str, dict[str, Any]], ...] | None
    ask: str | None
    reply: bool
    held_out: bool


def load_tools() -> list[Tool]:
    return tools_from_agents(json.loads(TOOLS.read_text()))


def load_cases() -> tuple[list[Case], PlanContext]:
    data = yaml.safe_load(CASES.read_text())
    context = PlanContext(now=datetime.fromisoformat(data["now"]), timezone=data["timezone"])
    cases: list[Case] = []
    for group, held_out in (("dev", False), ("held_out", True)):
        for raw in data.get(group) or []:
            steps = None
            if "steps" in raw:
                steps = tuple((name, dict(args or {})) for step in raw["steps"] for name, args in step.items())
            cases.append(Case(raw["text"], steps, raw.get("ask"), bool(raw.get("reply")), held_out))
    return cases, context


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(_same(e, g) for e, g in zip(expected, got))
    if isinstance(expected, str) and isinstance(got, str):
        return " ".join(expected.casefold().split()) == " ".join(got.casefold().split())
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got
    return expected == got


def judge(case: Case, plan: Plan) -> str | None:
    """None when the plan is what the case expects, else what is wrong."""
    got = [(s.name, dict(s.args)) for s in plan.steps]
    shown = f"got steps={got} pending={plan.pending.kind if plan.pending else None} reply={bool(plan.reply)}"
    if case.reply:
        return None if (not plan.steps and plan.pending is None and plan.reply) else f"expected a reply; {shown}"
    if case.ask:
        if plan.pending is None or plan.pending.kind != case.ask:
            return f"expected to ask {case.ask}; {shown}"
    elif plan.pending is not None:
        return f"expected no question; {shown}"
    if case.steps is None:
        return None
    if len(got) != len(case.steps):
        return f"expected {len(case.steps)} step(s) {list(case.steps)}; {shown}"
    for (want_name, want_args), (name, args) in zip(case.steps, got):
        if want_name != name:
            return f"expected {want_name}; {shown}"
        for key, value in want_args.items():
            if key not in args or not _same(value, args[key]):
                return f"expected {want_name} {key}={value!r}; {shown}"
    return None


@dataclass
class Report:
    results: list[tuple[Case, str | None, float]]  # case, failure, milliseconds

    def accuracy(self, held_out: bool | None = None) -> float:
        chosen = [r for r in self.results if held_out is None or r[0].held_out == held_out]
        return sum(1 for _, fail, _ in chosen if fail is None) / max(len(chosen), 1)

    def count(self, held_out: bool | None = None) -> int:
        return sum(1 for r in self.results if held_out is None or r[0].held_out == held_out)

    def failures(self) -> list[str]:
        return [f"{'[held out] ' if c.held_out else ''}{c.text!r}: {fail}" for c, fail, _ in self.results if fail]

    def timing(self) -> tuple[float, float]:
        times = sorted(ms for _, _, ms in self.results)
        return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def run(tools: Sequence[Tool], cases: Sequence[Case], context: PlanContext) -> Report:
    planner = OfflinePlanner()
    planner.plan("warm up", tools, context)  # builds the index once, as the first message after an install would
    results = []
    for case in cases:
        start = time.perf_counter()
        plan = planner.plan(case.text, tools, context)
        ms = (time.perf_counter() - start) * 1000
        results.append((case, judge(case, plan), ms))
    return Report(results)


def main() -> None:
    tools = load_tools()
    if "--synthetic" in sys.argv:
        from synthetic import synthetic_tools

        tools = tools + synthetic_tools()
    cases, context = load_cases()
    report = run(tools, cases, context)
    for line in report.failures():
        print(line)
    median, p95 = report.timing()
    print(
        f"{len(tools)} tools; dev {report.accuracy(False):.1%} of {report.count(False)}, "
        f"held out {report.accuracy(True):.1%} of {report.count(True)}, "
        f"all {report.accuracy():.1%}; median {median:.1f} ms, p95 {p95:.1f} ms"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
