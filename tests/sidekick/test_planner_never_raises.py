"""No request of any batch makes the planner raise.

In a module of its own (not test_routing_families.py) so that pytest-xdist, which keeps a module's tests on
one worker (--dist loadfile), runs it beside the families' scoring: the two together were one long chain.
"""

from __future__ import annotations

SHARES = 5  # each run plans one request in five of every batch


def test_no_request_of_any_batch_makes_the_planner_raise() -> None:
    # The seventh batch's first scoring raised IndexError inside the planner (a request in parts,
    # one of which meaning left with no function). A raise there is a crash of the user's turn.
    # One request in five of each batch is planned (a family's three to six fillers share its shape, so
    # most families are), so the check costs the suite a fifth of its 110 s; `routing_eval.py
    # --families` plans every request, and Sidekick answers a planner's raise with a sentence
    # (sidekick/chat/sidekick.py). A blind batch's text is not printed.
    from routing_eval import (held_out_families_3, held_out_families_6, held_out_families_7, held_out_families_8,
                              held_out_families_9, held_out_families_10, held_out_families_11,
                              held_out_families_12, held_out_families_13, held_out_families_14,
                              held_out_families_s, load_tools)

    from dreamer.sidekick.planner import OfflinePlanner

    tools = load_tools()
    planner = OfflinePlanner()
    for name, batch in (("held_out_3", held_out_families_3), ("held_out_s", held_out_families_s),
                        ("held_out_6", held_out_families_6), ("held_out_7", held_out_families_7),
                        ("held_out_8", held_out_families_8), ("held_out_9", held_out_families_9),
                        ("held_out_10", held_out_families_10), ("held_out_11", held_out_families_11),
                        ("held_out_12", held_out_families_12), ("held_out_13", held_out_families_13),
                        ("held_out_14", held_out_families_14)):
        cases, context, _ = batch()
        raised = []
        for case in cases[::SHARES]:
            try:
                planner.plan(case.text, tools, context)
            except Exception as error:  # noqa: BLE001 - any raise is the failure being looked for
                raised.append(type(error).__name__)
        assert not raised, f"{name}: the planner raised on {len(raised)} requests ({', '.join(sorted(set(raised)))})"
