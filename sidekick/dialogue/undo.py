""""Undo that": the inverse of the user's last reversible call, as the function declared it.

A function declares its inverse with @function(undo="remove_items", undo_args={...},
undo_when=...) (dreamer.sdk.replies). The inverse is a call like any other: it goes
through the kernel's grant check, and a confirm=True inverse is asked about first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dreamer.contracts.reply_text import result_words
from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, inverse_step
from dreamer.sidekick.planner.base import Step, Tool, addressed

UNDO = re.compile(
    # At most two filler words ("oops, sorry, undo that"), each optional: no repeated group
    # around a quantifier, so nothing here can backtrack.
    r"^\s*(?:(?:oops|whoops|oh no|uh oh|sorry|wait|no|hmm|ah|argh)[\s,.!?;:-]+)?(?:(?:oops|whoops|oh no|uh oh|sorry|wait|no|hmm|ah|argh)[\s,.!?;:-]+)?"
    r"(?:(?:please\s+|can you\s+|could you\s+)?(?:undo|revert|reverse|roll back|rollback|cancel|take back)"
    r"(?:\s+(?:that|it|this|the last (?:one|thing|change|step|action)|what you (?:just )?did|my last (?:change|request)))?"
    r"|take (?:that|it|those|them) (?:off|out|back)(?: again)?"
    r"|put (?:that|it|them) back|never mind that|i didn't mean that|i did not mean that"
    r"|that was a mistake|change (?:it|that) back|scratch that)"
    r"(?:[\s,]+(?:again|please|now)){0,3}[\s.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class UndoPlan:
    step: Step | None  # the inverse call, when there is one
    record: CallRecord | None
    reason: str = ""  # why there is nothing to run, in one sentence


def is_undo(text: str) -> bool:
    return bool(UNDO.match(text.replace("’", "'")))


def plan_undo(state: DialogueState, tools: Sequence[Tool]) -> UndoPlan:
    """What "undo that" means now: the newest call that changed something and is not yet undone
    (nor itself an undo). Calls that only read (@function(reads=True)) are passed over:
    "add eggs", "what's on my list", "undo that" takes the eggs off."""
    by_name = {t.name: t for t in tools}
    passed = 0  # reads passed over
    for record in reversed(state.calls):
        if record.undone or record.is_undo:
            continue
        tool = by_name.get(record.name)
        if tool is not None and tool.reads:
            passed += 1
            continue
        what = addressed(tool.summary).rstrip(".").lower() if tool else record.name
        if record.undo is False:
            hint = result_words(record.result, tool.undo_hint) if tool and tool.undo_hint else None
            said = f"I can't undo that: \"{what}\" made changes that can't be reversed."
            return UndoPlan(None, record, f"{said} {hint}" if hint else said)
        if record.undo is None:
            return UndoPlan(None, record, f"I can't undo that: the {record.agent} agent does not say how to reverse \"{what}\".")
        step = inverse_step(record)
        if step is None:
            return UndoPlan(None, record, f"There is nothing to undo: \"{what}\" changed nothing last time.")
        if step.name not in by_name:
            return UndoPlan(None, record, f"I can't undo that: {step.name} is no longer one of your agents' functions.")
        return UndoPlan(step, record)
    if passed:
        return UndoPlan(None, None, "I can't undo that: so far I have only looked things up here, which changes nothing.")
    return UndoPlan(None, None, "There is nothing to undo in this conversation yet.")
