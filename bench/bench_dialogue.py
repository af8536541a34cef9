"""How long Sidekick takes to understand one turn of a conversation (offline planner, no model).

    .venv/bin/python bench/bench_dialogue.py

Every message of the dialogue suite (tests/sidekick/dialogues/*.yaml) is read the way a turn
reads it: small talk, undo and follow-ups against the conversation's state, then the
offline planner over the six starter agents' functions. Agent calls are not timed (they are
the agents' time, and bench_calls.py measures them); the state carries the calls the
conversation would have made, with results shaped like the agents' own.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "sidekick"), str(ROOT / "tests" / "sidekick" / "dialogues")]

from dialogue_suite import load  # noqa: E402
from routing_eval import load_tools  # noqa: E402

from dreamer.sidekick.dialogue.state import DialogueState  # noqa: E402
from dreamer.sidekick.dialogue.understand import understand  # noqa: E402
from dreamer.sidekick.planner import OfflinePlanner, PlanContext  # noqa: E402


def main() -> None:
    tools = load_tools()
    planner = OfflinePlanner()
    undo_of = {t.name: t.undo for t in tools}
    times: list[float] = []
    convs = load(ROOT / "tests/sidekick/dialogues/tuned.yaml") + load(ROOT / "tests/sidekick/dialogues/heldout.yaml")
    planner.plan("warm up the index", tools, PlanContext())
    for conv in convs:
        state, pending = DialogueState(), None
        for turn in conv.turns:
            started = time.perf_counter()
            seen = understand(turn["say"], tools, PlanContext(), state, pending, planner.plan, lambda _: [])
            times.append(time.perf_counter() - started)
            plan = seen.plan
            pending = plan.pending if plan is not None else None
            done = [{"agent": s.agent, "function": s.function, "args": dict(s.args), "ok": True,
                     "result": {"added": s.args.get("items", []), "items": s.args.get("items", [])}}
                    for s in (plan.steps if plan is not None and plan.pending is None else ())]
            state = state.with_calls(done, undo_of)
    times.sort()
    print(f"{len(times)} turns of {len(convs)} conversations: median {statistics.median(times) * 1000:.1f} ms, "
          f"p90 {times[int(len(times) * 0.9)] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
