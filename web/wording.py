"""How the pages say what happened: a call as a sentence ("Sidekick asked grocery to add
items: milk, eggs"), a count of an answer's calls, runs grouped by conversation or run.
The same request wording is built for live answers in static/chat.js (`callSentence`);
keep the two alike.

A finished run reads as what it did ("Grocery added milk and bread to your grocery list"),
from its result: the function's own reply templates (the same reading as Sidekick's answers,
contracts/reply_text.py), else the result's shape with the function's verb and description
("Recipes added 9 items to your grocery list"), else the request sentence."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from dreamer.contracts.reply_text import and_list, result_words

MAX_SHOWN = 60  # characters of arguments quoted in a sentence


def _words(function: str) -> str:
    return function.replace("_", " ").strip() or function


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
    return str(value)


def args_phrase(args: Any) -> str:
    """The arguments as a short phrase: 'milk, eggs'; '' when there are none."""
    if not isinstance(args, dict) or not args:
        return ""
    text = "; ".join(_shown(v) for v in args.values() if v not in (None, "", [], {}))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1].rstrip() + "…"


def call_sentence(call: dict[str, Any]) -> str:
    said = args_phrase(call.get("args"))
    return f"Asked {call.get('agent')} to {_words(str(call.get('function', '')))}" + (f": {said}" if said else "")


def calls_summary(calls: list[dict[str, Any]]) -> str:
    agents = sorted({str(c.get("agent")) for c in calls})
    failed = sum(1 for c in calls if not c.get("ok"))
    text = f"Details: {len(calls)} call{'' if len(calls) == 1 else 's'} to {', '.join(agents)}"
    return text + (f", {failed} failed" if failed else "")


def _who(run: dict[str, Any]) -> str:
    caller = str(run.get("caller") or "")
    if caller == "user":
        return "You"
    if caller == "sidekick":
        return "Sidekick"
    if caller == "trigger":
        kind = (run.get("trigger") or {}).get("type")
        return {"cron": "A schedule", "webhook": "A webhook", "event": "An event"}.get(kind, "A trigger")
    return caller or "Someone"


def asked_sentence(run: dict[str, Any]) -> str:
    """'Sidekick asked grocery to add items: milk' for an invocation row of GET /v1/invocations."""
    said = args_phrase(run.get("args"))
    return (f"{_who(run)} asked {run.get('agent')} to {_words(str(run.get('function', '')))}"
            + (f": {said}" if said else ""))


def run_sentence(run: dict[str, Any], functions: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """What a run did when it succeeded and its result says so, else what was asked.
    `functions`: "agent.function" -> that function's entry of GET /v1/agents (its description
    and reply templates); without it only the result's own words and shape are read."""
    if run.get("status") == "succeeded":
        spec = (functions or {}).get(f"{run.get('agent')}.{run.get('function')}") or {}
        done = done_sentence(run, spec)
        if done:
            return done
    return asked_sentence(run)


MAX_SENTENCE = 160  # characters of a row's sentence
# Callers that are not agents: the callee is the one who did it.
_NOT_AGENTS = {"user", "sidekick", "trigger"}
_IRREGULAR = {
    "buy": "bought", "build": "built", "bring": "brought", "choose": "chose", "draw": "drew", "find": "found",
    "get": "got", "give": "gave", "hold": "held", "keep": "kept", "make": "made", "put": "put", "read": "read",
    "run": "ran", "send": "sent", "set": "set", "take": "took", "tell": "told", "write": "wrote", "pick": "picked",
}
_PAST_IRREGULAR = set(_IRREGULAR.values())
_PREPOSITIONS = ("to", "from", "on", "onto", "in", "into", "for", "at")
_LINE_ITEM = re.compile(r"^\s*(?:-|\d{1,3}\.)\s")


def _name(agent: str) -> str:
    text = agent.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _past(verb: str) -> str:
    """'add' -> 'added', 'save' -> 'saved', 'plan' -> 'planned', 'copy' -> 'copied'."""
    verb = verb.lower()
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    if (len(verb) in (3, 4) and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou"
            and verb[-3] not in "aeiou"):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def _is_past(word: str) -> bool:
    word = word.lower()
    return word in _PAST_IRREGULAR or (len(word) >= 4 and word.endswith("ed") and not word.endswith("eed"))


def _one_line(text: str) -> str:
    """A reply laid out one item per line, as a row's single line: 'Your notes: a, b'."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= 1:
        return text.strip()
    items = [_LINE_ITEM.sub("", line).strip() for line in lines[1:]]
    return f"{lines[0].strip()} {', '.join(items)}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SENTENCE else text[: MAX_SENTENCE - 1].rstrip() + "…"


def _doer(run: dict[str, Any]) -> str:
    """Who did it: the agent that made the call (recipes putting things on the grocery list), else the callee."""
    caller = str(run.get("caller") or "")
    return _name(caller if caller and caller not in _NOT_AGENTS else str(run.get("agent") or ""))


def _verb_and_tail(function: str, description: str) -> tuple[str, str]:
    """The function's verb (its description's first word, which by custom is one, else its
    name's) and where it acts ('to your grocery list'), from its description's first sentence."""
    words = re.split(r"\s+", description.strip().split(". ")[0].rstrip(".").strip()) if description.strip() else []
    named = function.split("_")[0]
    verb = words[0].lower() if words and words[0].isalpha() else named
    tail = ""
    if words and words[0].lower() == verb:
        at = next((i for i, w in enumerate(words[1:], 1) if w.lower() in _PREPOSITIONS), None)
        if at is not None:
            tail = " ".join(words[at:])
            tail = re.sub(r"\bthe user's\b", "your", tail)
            tail = re.sub(r"\bthe user\b", "you", tail)
    return verb, tail


def _things(result: Any, noun: str, past: str) -> str | None:
    """What the result says was acted on: its list under the verb's own name ('added'), a count, a title."""
    if isinstance(result, Mapping):
        named = result.get(past)
        if isinstance(named, list) and named and all(isinstance(v, (str, int, float)) for v in named):
            return and_list([str(v) for v in named])
        count = result.get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            return _counted(count, noun)
        for key in ("title", "name"):
            if isinstance(result.get(key), str) and result[key].strip():
                return f"{noun} “{result[key].strip()}”".strip()
        return None
    if isinstance(result, list):
        return _counted(len(result), noun)
    return None


def _counted(n: int, noun: str) -> str:
    noun = noun or "things"
    if n == 1 and noun.endswith("s") and not noun.endswith("ss"):
        noun = noun[:-1]
    return f"{n} {noun}"


def done_sentence(run: dict[str, Any], spec: Mapping[str, Any]) -> str | None:
    """What a succeeded run did, from its result; None when the result does not say."""
    result = run.get("result")
    reply = spec.get("reply")
    templates = [t for t in reply if isinstance(t, str)] if isinstance(reply, list) else []
    said = result_words(result, templates)
    if said:
        line = _one_line(said)
        first, _, rest = line.partition(" ")
        if _is_past(first.strip(",.:;")) and rest:
            return _clip(f"{_doer(run)} {first.lower()} {rest}")
        return _clip(f"{_name(str(run.get('agent') or ''))}: {line}")
    function = str(run.get("function") or "")
    verb, tail = _verb_and_tail(function, str(spec.get("description") or ""))
    past = _past(verb)
    noun = " ".join(function.split("_")[1:]) if function.split("_")[0].lower() == verb else ""
    things = _things(result, noun, past)
    if not things:
        return None
    return _clip(f"{_doer(run)} {past} {things}" + (f" {tail}" if tail else ""))


def outcome_word(status: str) -> str:
    return {"succeeded": "done", "failed": "failed", "running": "running", "queued": "waiting to run",
            "cancelled": "cancelled", "interrupted": "interrupted"}.get(status, status)


def day_label(iso: str | None, now: datetime | None = None) -> str:
    if not iso:
        return "Earlier"
    try:
        at = datetime.fromisoformat(iso)
    except ValueError:
        return "Earlier"
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    today = (now or datetime.now(timezone.utc)).date()
    day = at.astimezone(timezone.utc).date()
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    if day > today - timedelta(days=7):
        return at.strftime("%A")
    return at.strftime("%d %B %Y")


def group_runs(
    runs: list[dict[str, Any]], functions: Mapping[str, Mapping[str, Any]] | None = None
) -> list[tuple[str, list[dict[str, Any]]]]:
    """A page of runs (newest first) by day, then together by conversation or by run:
    [(day, [block])], a block {"conversation": {"id", "title"} | None, "earlier": the id of
    the run its calls belong to when that run is not on this page | None, "rows": [row]}.
    A call a run on this page made sits under it (its `children`, nested as deep as the chain);
    each row carries its `sentence`. Runs that belong to nothing larger share one block."""
    rows = {r["id"]: {**r, "children": [], "sentence": run_sentence(r, functions)} for r in runs}
    tops: list[dict[str, Any]] = []
    for r in runs:
        row = rows[r["id"]]
        parent = rows.get(r.get("parent_id") or "")
        (parent["children"] if parent is not None else tops).append(row)
    # Each block takes the place of its newest row: runs of one conversation come together.
    blocks: dict[tuple[str, str], dict[str, Any]] = {}
    for row in tops:
        conversation = row.get("conversation") if isinstance(row.get("conversation"), dict) else None
        root = str(row.get("root_id") or row["id"])
        key = ("chat", str(conversation["id"])) if conversation else ("run", root)
        block = blocks.setdefault(key, {
            "day": day_label(row.get("created_at")), "conversation": conversation,
            "earlier": root if not conversation and root != row["id"] and root not in rows else None, "rows": [],
        })
        block["rows"].append(row)
    days: list[tuple[str, list[dict[str, Any]]]] = []
    for block in blocks.values():
        if not days or days[-1][0] != block["day"]:
            days.append((block["day"], []))
        shown = days[-1][1]
        plain = block["conversation"] is None and block["earlier"] is None
        if plain and shown and shown[-1]["plain"]:
            shown[-1]["rows"].extend(block["rows"])
        else:
            shown.append({**block, "plain": plain})
    return days
