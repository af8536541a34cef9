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
from dreamer.sidekick.dialogue.answers import REQUEST_WORDS
from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, inverse_step
from dreamer.sidekick.planner.base import Step, Tool, addressed
from dreamer.sidekick.planner.language.chunks import NOMINATIVE, SUBJECT_CONTRACTIONS

# Cries and sighs before an undo, in many Englishes: "oops", "bugger", "naw" (Scots), "ehn" (Nigerian).
_CRY = (r"(?:oops|whoops|oh no|uh oh|sorry|wait|no|nah|naw|nope|hmm|ah|ach|och|eh|ehn|ay|meh|argh|hang on|hold on|ok|okay"
        r"|oh|nvm|never mind|bugger|damn|dang|shoot|crap|ugh|oh dear|bloody hell|jk|j/k|lol jk|just kidding|kidding|lol)")
UNDO = re.compile(
    # At most two filler words ("oops, sorry, undo that"), each optional: no repeated group
    # around a quantifier, so nothing here can backtrack.
    rf"^\s*(?:{_CRY}[\s,.!?;:-]+)?"
    rf"(?:{_CRY}[\s,.!?;:-]+)?"
    r"(?:(?:please\s+|pls\s+|plz\s+|kindly\s+|can you\s+|could you\s+)?(?:undo|revert|reverse|roll back|rollback|cancel|take back|restore"

    # the keyboard's undo, typed: "ctrl z", "cmd-z"
    r"|(?:ctrl|control|cmd|command)[\s+-]?z)"
    r"(?:\s+(?:that|it|this|the last (?:one|thing|change|step|action)|what you (?:just )?(?:did|added|saved|made|wrote|put)"
    r"|my last (?:change|request)|that (?:note|event|item|entry|one)|(?:that|the) last (?:one|thing|item|entry)"
    # what a clearing took: "restore everything", "restore the list"
    r"|everything|it all|all of it|all|the list|my list|the whole list))?"
    # what was just made, named by its making: "delete what you just added"
    r"|(?:please\s+|kindly\s+)?(?:delete|remove|take off|take out|get rid of) what you (?:just )?(?:did|added|saved|made|wrote|put)"
    # a bare verb of taking off, beside a reason: "no need it already, remove" (never "delete the last item")
    r"|(?:please\s+|pls\s+)?(?:remove|delete)(?=[\s,.!?]*$)"
    # deleting what was just made, pointed at with a pronoun only: "disregard that; remove it"
    r"|(?:please\s+|kindly\s+)?(?:disregard|remove|delete|ditch|bin|get rid of|lose) (?:that|it|this)(?: one| note| event| item| entry)?"
    r"|(?:please\s+|kindly\s+)?take (?:that|it|those|them) (?:off|out|back)(?: off| out)?(?: again)?"
    r"|(?:put|add|bring|make|get) (?:that|it|them|those|this)(?: all)? back(?: where (?:it|they) (?:was|were))?"
    r"|(?:leave|keep) (?:it|that|them) (?:where|as) (?:it|they) (?:was|were)|(?:bring|put) (?:it all|everything) back"
    r"|never mind that|i didn't mean that|i did not mean that"
    r"|that was a mistake|change (?:it|that) back"
    r"|(?:scratch|scrap|forget|bin|ditch) (?:that|it|this)(?: last one| one| last thing)?)"
    r"(?:[\s,]+(?:again|please|pls|plz|now|for now|for me|lol|thanks|then)){0,3}[\s.!?]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class UndoPlan:
    step: Step | None  # the inverse call, when there is one
    record: CallRecord | None
    reason: str = ""  # why there is nothing to run, in one sentence


# Clauses that only say the last call was unwanted: "oops, wrong one, take it off", "wait, I still
# need those, put them back". Beside an undo clause they leave it an undo.
_REMORSE = (
    r"(?:oops|whoops|oh no|uh oh|sorry|wait|no|nope|naw|hmm|ah|argh|ugh|damn|bugger|dang|shoot|crap|actually|oh|ay|ehn"
    r"|hold on|on second thought|mistake|error|(?:i )?(?:was|am) wrong|(?:i'm|im) wrong|"
    r"my bad|my mistake|(?:no,? )?wrong (?:one|item|thing|list|day|time)|that'?s wrong|that was wrong|that'?s not right|"
    r"never ?mind|(?:actually |wait )?(?:i |ah |we )?(?:still )?(?:need|needed) (?:it|that|them|those)(?: after all)?|"
    # no longer wanted, in a few words: "no need", "no need already"
    r"no need(?: (?:it|that|them|for (?:it|that|them)))?(?: already| anymore| any more)?|"
    r"i (?:make|made) (?:a )?mistake|i never (?:buy|bought|got|get|used|use) (?:it|them|that|those)(?: yet)?|"
    # how the thing still is: "it's still broken", "they're still there"
    r"(?:it'?s|it is|they'?re|they are|that'?s|that is) still [\w'-]+|"
    r"(?:i )?(?:didn'?t|did not|don'?t|do not) (?:want|need|mean) (?:it|that|them|those|this)(?: after all| any ?more)?|"
    # how the speaker is now, why it goes: "bin it, I'm better", "cancel it, I'm not going"
    r"(?:i'?m|i am) (?:better|fine|ok|okay|well|not going|not coming|sick|ill|off|busy)(?: now| again)?|"
    # owning the mistake: "I added it by mistake", "that was an error", "I made an error"
    r"i (?:added|saved|put|made|did) (?:it|that|this|them) by (?:mistake|accident)|(?:that|it) was (?:an error|a mistake|by mistake|wrong)|"
    r"i made (?:an error|a mistake)|my error|nah|nope|hang on|hold on|kindly|please|ach|och|eh|meh|aw|welp|yikes|lol|"
    # that what was marked done is not: "I haven't actually", "is not finished", "not done yet"
    r"i (?:haven'?t|have not|didn'?t|did not)(?: (?:actually|really|done it|finished it|finished|done|yet|done that))?(?: yet)?|"
    r"(?:nope |no |nah )?(?:it'?s |it is |is |that'?s )?not (?:done|finished|complete|completed|ready)(?: yet| actually)?|not yet|"
    # that it is still to do: "still need to do it", "I still have to do that"
    r"(?:i |we )?(?:still )?(?:need|have|got) to do (?:it|that|them|this)(?: still)?)"
)
# ... said to someone ("my bad y'all") or with a word on how it happened ("oops my kid hit send").
_TO_WHOM = r"(?:\s+(?:y'all|guys|mate|love|hon|pet))?"
REMORSE = re.compile(rf"^\s*{_REMORSE}(?:\s+{_REMORSE})?{_TO_WHOM}\s*$", re.IGNORECASE)
MAX_STORY_WORDS = 6  # "oops my kid hit send": how the mistake happened, beside an undo
# Only words that own a slip open such a story: "no salsa, remove it" and "actually we still have
# wipes, take them off" name what to take off, they tell no story.
_STORY_LEAD = re.compile(r"^\s*(?:oops|whoops|oh no|uh oh|sorry|my bad|my mistake|yikes|welp|argh|ugh|damn)\s",
                         re.IGNORECASE)
MAX_UNDO_CHARS = 200  # an undo is short; longer messages are requests
MAX_REDO_CLAUSES = 4  # "wait no, I never bought it, put it back on"


# Said before owning a slip, and the slip's shorthand: "I'm afraid I made an error", "nvm". Taken off
# before the patterns are tried (as fixed phrases, so the patterns above stay as small as they are).
_AFRAID = re.compile(r"^\s*(?:(?:i'm|im|i am) afraid|actually|on second thoughts?),? ", re.IGNORECASE)
# "didn't mean that" said without its "I", and typed without its apostrophe.
_UNSAID_I = re.compile(r"\b(?:i )?(?:didnt|didn't|did not) mean (?:that|it|this)\b", re.IGNORECASE)
# What was just added, pointed at in the plural: "remove them", "delete those again".
_THEM = re.compile(r"^\s*(?:(?:nah|no|nope|ok|okay),? )?(?:please )?(?:remove|delete|ditch|bin|drop|get rid of|lose) (?:them|those)(?: again| please| now| too)?[\s.!]*$",
                   re.IGNORECASE)


# Whom it is said to, closing it ("take that back mate"), and two things pointed at as one ("take them both
# off", "those two"): taken off, or made "them", before the patterns are tried, as _AFRAID is.
_TO_WHOM_END = frozenset({"mate", "bro", "bruh", "love", "hon", "pet", "dude", "man", "buddy", "pal", "sis", "fam", "boss",
                          "chief", "yaar"})
_BOTH = re.compile(r"\b(?:them both|both of them|the two of them|those two|these two|the pair of them)\b", re.IGNORECASE)
# Why it goes, said beside the undo: "the kids don't need them", "wrong week".
_REASON = re.compile(r"^\s*(?:(?:the|my|our) )?[\w'-]+(?: [\w'-]+)? (?:don't|doesn't|do not|does not|won't|will not) "
                     r"(?:need|want|like|eat) (?:it|them|that|those|this)(?: any ?more| after all)?\s*$"
                     r"|^\s*(?:oops |sorry )?wrong (?:week|month|date|year|person|name|event|list|amount)\s*$", re.IGNORECASE)


def is_undo(text: str) -> bool:
    said = _BOTH.sub("them", _without_whom(_AFRAID.sub("", text.replace("’", "'"))))
    said = _UNSAID_I.sub("i didn't mean that", said)  # "whoops didnt mean it"
    if UNDO.match(said) or _THEM.match(said):
        return True
    return _beside_regret(said, UNDO, stories=True)


_CLAUSE_BREAK = re.compile(r"[,;.!?]+|\s[-–]\s")


def _beside_regret(said: str, asking: re.Pattern[str], *, stories: bool = False, most: int | None = None) -> bool:
    """A clause of `said` is `asking` and each other one only regrets the last call or says why ("oops, wrong
    one, take it off"; with `stories`, how the slip happened too); two clauses at least, `most` at most."""
    if len(said) > MAX_UNDO_CHARS:
        return False
    pieces = [p for p in _CLAUSE_BREAK.split(said) if p.strip()]
    if len(pieces) < 2 or (most is not None and len(pieces) > most):
        return False
    asks = [bool(asking.match(p)) for p in pieces]
    return any(asks) and all(a or REMORSE.match(p) or _REASON.match(p) or _says_why(p) or (stories and _story(p))
                             for a, p in zip(asks, pieces, strict=True))


MAX_WHY_WORDS = 8
# Words that make a clause opening with its subject ask something after all: "I need milk", "can you ...".
_ASKS = frozenset({"you", "u", "please", "pls", "can", "could", "need", "needs", "want", "wants", "would", "add",
                   "put", "show", "remind", "tell"})


def _says_why(piece: str) -> bool:
    """A short clause that opens with its subject and asks nothing: why the last call goes, in any words
    ("they're still in the car", "I haven't shopped yet", "they didnae answer", "I got that wrong")."""
    words = piece.casefold().replace("’", "'").split()
    return (0 < len(words) <= MAX_WHY_WORDS and (words[0] in NOMINATIVE or words[0] in SUBJECT_CONTRACTIONS)
            and words[0] not in ("you", "u", "ya", "ye") and not set(words) & _ASKS)


def _without_whom(text: str) -> str:
    """The text without whom it is said to at its end ("take that back mate"), in code: no pattern to backtrack."""
    words = text.rstrip(" .!?").split()
    if len(words) > 1 and words[-1].casefold() in _TO_WHOM_END:
        return " ".join(words[:-1]).rstrip(",")
    return text


def _story(piece: str) -> bool:
    """A short clause opening with remorse and asking nothing: "oops my kid hit send"."""
    words = piece.casefold().split()
    return (len(words) <= MAX_STORY_WORDS and _STORY_LEAD.match(piece) is not None
            and not set(words) & REQUEST_WORDS)


# Taking back an undo: "actually, put it back", "no wait, add it again", "redo".
REDO = re.compile(
    rf"^\s*(?:(?:actually|{_CRY})[\s,.!]+)?(?:(?:actually|{_CRY})[\s,.!]+)?"
    r"(?:redo(?: that| it)?|(?:put|add|bring) (?:it|that|them|those) (?:back(?: on| in)?|again)|do (?:it|that) again|"
    r"i (?:do )?(?:still )?(?:want|need) (?:it|that|them|those)(?: after all)?|undo (?:the|that|my) undo"
    # sent back where it was: "return it to the list please"
    r"|(?:return|restore|bring) (?:it|that|them|those) (?:back )?(?:to|on|onto) (?:the|my) (?:[\w-]+ )?list)"
    r"(?:[\s,]+(?:again|please|then|after all)){0,2}[\s.!?]*$",
    re.IGNORECASE,
)


def _redoes(text: str) -> bool:
    """`text` asks for what was taken back or off again: "put it back", or that beside remorse and its
    reasons ("wait no, I never bought it, put it back on")."""
    said = text.replace("’", "'")
    return bool(REDO.match(said)) or _beside_regret(said, REDO, most=MAX_REDO_CLAUSES)


def plan_redo(text: str, state: DialogueState, tools: Sequence[Tool]) -> UndoPlan | None:
    """The undone call made again, when `text` takes back the undo just made; else None."""
    if not _redoes(text):
        return None
    by_name = {t.name: t for t in tools}
    latest = next((r for r in reversed(state.calls) if not (by_name.get(r.name) and by_name[r.name].reads)), None)
    if latest is None or not latest.is_undo:
        return None
    undone = next((r for r in reversed(state.calls) if r.undone), None)
    if undone is None or undone.name not in by_name:
        return None
    return UndoPlan(Step(undone.agent, undone.function, dict(undone.args)), undone)


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
    if any(r.undone for r in state.calls):
        return UndoPlan(None, None, "There is nothing to undo any more: the last change is already undone. "
                                    "Say \"put it back\" to make it again.")
    if passed:
        return UndoPlan(None, None, "I can't undo that: so far I have only looked things up here, which changes nothing.")
    return UndoPlan(None, None, "There is nothing to undo in this conversation yet.")


_REMOVING = ("remove", "delete", "clear", "take", "cross")


def puts_back(text: str, state: DialogueState, tools: Sequence[Tool]) -> bool:
    """ "Wait, I still need it" / "put it back" right after a call that took something off: that
    call undone (a redo needs an undo before it; here the removal itself is what is taken back)."""
    if not _redoes(text):
        return False
    by_name = {t.name: t for t in tools}
    latest = next((r for r in reversed(state.calls) if not (by_name.get(r.name) and by_name[r.name].reads)), None)
    if latest is None or latest.is_undo or latest.undone or latest.undo in (None, False):
        return False
    return any(w in latest.function.lower() for w in _REMOVING)
