"""The grocery list: one table in the agent's own database.

Items are matched without regard to case, spacing or a simple plural ("Eggs",
" eggs " and "egg" are one item), so the list never holds the same thing twice
and "remove egg" finds "Eggs". The list keeps the spelling used when an item was
first added, and the order items were added in.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from datetime import datetime, timezone

from dreamer.sdk import Context, InvalidArgument, function

MAX_ITEMS_PER_CALL = 200
MAX_ITEM_CHARS = 200
# A shopping list longer than this is a runaway loop, not a shopping trip.
MAX_LIST_SIZE = 1000


class BadRequest(InvalidArgument, ValueError):
    """Input a function refuses: the caller gets kind invalid_argument and this one sentence."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    added_at TEXT NOT NULL
)
"""


def _clean(items: list[str], verb: str) -> list[str]:
    """Trimmed, non-empty item texts; one clear sentence for anything unusable."""
    if not isinstance(items, list):
        raise BadRequest(f"Give the items to {verb} as a list of names.")
    if len(items) > MAX_ITEMS_PER_CALL:
        raise BadRequest(f"You can {verb} at most {MAX_ITEMS_PER_CALL} items at once; this request has {len(items)}.")
    cleaned: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise BadRequest(f"Each item must be a piece of text; got {type(item).__name__}.")
        text = " ".join(item.split())
        if not text:
            continue
        if len(text) > MAX_ITEM_CHARS:
            raise BadRequest(
                f"An item can be at most {MAX_ITEM_CHARS} characters long; "
                f"{text[:30]!r}... has {len(text)}."
            )
        if any(unicodedata.category(ch) == "Cc" for ch in text):
            raise BadRequest(f"The item {text[:30]!r} contains control characters; use plain text.")
        cleaned.append(text)
    if not cleaned:
        raise BadRequest(f"There is nothing to {verb}: name at least one item.")
    return cleaned


def _forms(key: str) -> list[str]:
    """The keys that count as the same item: the key itself first, then plural/singular forms."""
    forms = [key]
    if key.endswith("ies"):
        forms.append(key[:-3] + "y")
    if key.endswith("es"):
        forms.append(key[:-2])
    if key.endswith("s") and not key.endswith("ss"):
        forms.append(key[:-1])
    else:
        forms += [key + "s", key + "es"]
        if key.endswith("y"):
            forms.append(key[:-1] + "ies")
    return forms


def _find(rows: dict[str, str], key: str) -> str | None:
    return next((form for form in _forms(key) if form in rows), None)


def _rows(db: sqlite3.Connection) -> dict[str, str]:
    """key -> display name, in the order the items were added."""
    db.execute(_SCHEMA)
    return {row["key"]: row["name"] for row in db.execute("SELECT key, name FROM items ORDER BY id")}


@function(
    exported=True,
    undo="remove_items",
    undo_args={"items": "result.added"},
    undo_when="result.added",
    reply=["Added {added} to your grocery list.", "Already on your list: {already_there}."],
    examples=[
        "add {items} to my grocery list",
        "put {items} on the shopping list",
        "add {items} to the list",
        "I need to buy {items}",
        "we are out of {items}",
        "remember to buy {items}",
        "(remember|don't forget) to (get|pick up|grab) {items}",
        "(add|put) {items} (on|to) [my|the] [grocery|shopping] list",
        "add {items}",
        "(buy|get) [some] {items}",
        "we (need|want) [more] {items}",
        "don't let me forget [to buy] {items}",
        "(I|we) need [some|more] {items}",
        "{items} (to|on) [my|the] (grocery|shopping) list",
        "(we|I) (ran|have run|are running) out of {items}",
        "(we are|I am) [running] low on {items}",
        "(I am|we are) out of {items}",
        "we have no {items} left",
        "remind me to (buy|get|pick up) {items}",
        "add {items} to [my|the] groceries",
    ],
)
def add_items(ctx: Context, items: list[str]) -> dict:
    """Add items to the user's grocery list.

    Items already on the list (ignoring case and plurals) are not added again;
    they are reported under "already_there". Returns what was added and the whole list.
    """
    wanted = _clean(items, "add")
    rows = _rows(ctx.db)
    added: list[str] = []
    already: list[str] = []
    for text in wanted:
        key = text.casefold()
        match = _find(rows, key)
        if match is None:
            rows[key] = text
            added.append(text)
        elif rows[match] not in added and rows[match] not in already:
            already.append(rows[match])
    if len(rows) > MAX_LIST_SIZE:
        raise BadRequest(
            f"The grocery list can hold at most {MAX_LIST_SIZE} items and adding these would make "
            f"{len(rows)}; remove some first."
        )
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    ctx.db.executemany(
        "INSERT INTO items (key, name, added_at) VALUES (?, ?, ?)",
        [(text.casefold(), text, now) for text in added],
    )
    ctx.log("added items", added=len(added), already_there=len(already))
    return {"added": added, "already_there": already, "items": list(rows.values())}


@function(
    exported=True,
    undo="add_items",
    undo_args={"items": "result.removed"},
    undo_when="result.removed",
    reply=["Removed {removed} from your grocery list.", "Not on your list: {not_on_list}.",
           "{!items}Your grocery list is empty now."],
    examples=[
        "remove {items} from the list",
        "take {items} off my grocery list",
        "cross {items} off the shopping list",
        "(check|tick|mark|cross) {items} off [the|my] [grocery|shopping] list",
        "mark {items} as bought",
        "delete {items} from my shopping list",
        "I bought {items}",
        "(remove|delete) {items} from [my|the] [grocery|shopping] list",
        "(remove|delete) {items}",
        "I (already|just) (bought|got) {items}",
        "we (don't|no longer) need {items}",
        "(got|bought) {items} already",
        "(got|bought) [the] {items}",
        "{items} (is|are) bought",
        "{items} can come off [the|my] list",
        "no (need|more need) for {items} [anymore]",
        "(remove|delete) {items} from [my|the] groceries",
        # Home Assistant's list intents: an item is completed on the list it is on
        "(complete|mark) {items} [as done|as complete|done|complete] (on|in|from) [my|the] (grocery|shopping) list",
    ],
)
def remove_items(ctx: Context, items: list[str]) -> dict:
    """Remove items from the user's grocery list.

    Matching ignores case and plurals. Items that were not on the list are
    reported under "not_on_list". Returns what was removed and the list that remains.
    """
    wanted = _clean(items, "remove")
    rows = _rows(ctx.db)
    removed: list[str] = []
    missing: list[str] = []
    gone: dict[str, str] = {}  # so "milk, Milk" does not report the second as missing
    for text in wanted:
        match = _find(rows, text.casefold())
        if match is None:
            if _find(gone, text.casefold()) is None and text not in missing:
                missing.append(text)
            continue
        gone[match] = rows.pop(match)
        removed.append(gone[match])
        ctx.db.execute("DELETE FROM items WHERE key = ?", (match,))
    ctx.log("removed items", removed=len(removed), not_on_list=len(missing))
    return {"removed": removed, "not_on_list": missing, "items": list(rows.values())}


@function(
    exported=True,
    reads=True,
    reply=["On your grocery list: {items}.", "{!items}Your grocery list is empty."],
    examples=[
        "what's on my grocery list",
        "show my shopping list",
        "what do I need to buy",
        "read me the grocery list",
        "show [me] [my|the] [grocery|shopping] list",
        "what's on the list",
        "what (do|should) I (get|buy) at the (store|supermarket)",
        "what groceries do (I|we) need",
        "what do (I|we) need [to (buy|get)]",
        "what's left to buy",
        "what (am I|are we) supposed to (buy|get)",
        "go through my [grocery|shopping] list",
        "how many (items|things) are on my [grocery|shopping] list",
        "read [me] my (groceries|grocery list|shopping list) [back to me]",
        "what's on [the|my] (shopping|grocery) list",
        "do we need anything from the (store|supermarket|shops)",
        "(open|check) my (shopping|grocery) list",
        "what (is|are) there (in|on) [the|my] [grocery|shopping] list", "what do we (need|still need)",
        "what do (I|we) [still] need (from|at) the (store|shop|shops|supermarket|market)", "(need|want) to see my (shopping|grocery) list",
    ],
)
def list_items(ctx: Context) -> dict:
    """Show what is on the user's grocery list, in the order the items were added."""
    items = list(_rows(ctx.db).values())
    return {"items": items, "count": len(items)}


@function(
    exported=True,
    confirm=True,
    undo="add_items",
    undo_args={"items": "result.removed"},
    undo_when="result.removed",
    reply=["Cleared your grocery list; it had {removed}.", "{!removed}Your grocery list was already empty."],
    examples=[
        "clear my grocery list",
        "empty the shopping list",
        "delete everything on my grocery list",
        "start a new grocery list",
        "(clear|empty) [my|the] [grocery|shopping] list",
        "(remove|delete) (everything|all items) from [my|the] (grocery|shopping) list",
        "(take|delete|remove) everything off [my|the] [grocery|shopping] list",
    ],
)
def clear(ctx: Context) -> dict:
    """Remove every item from the user's grocery list. Asks for confirmation first."""
    removed = list(_rows(ctx.db).values())
    ctx.db.execute("DELETE FROM items")
    ctx.log("cleared the list", removed=len(removed))
    return {"removed": removed, "count": len(removed), "items": []}
