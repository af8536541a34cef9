"""Results as sentences (contracts/reply_text.py): templates, lists, content, and errors in one sentence."""

from __future__ import annotations

from dreamer.contracts.reply_text import error_text, render, result_text

GROCERY_ADD = ["Added {added} to your grocery list.", "Already on your list: {already_there}."]


def test_templates_use_only_the_fields_that_have_values() -> None:
    assert result_text({"added": ["milk"], "already_there": [], "items": ["milk"]}, GROCERY_ADD) == \
        "Added milk to your grocery list."
    both = result_text({"added": ["milk", "eggs", "bread"], "already_there": ["tea"]}, GROCERY_ADD)
    assert both == "Added milk, eggs and bread to your grocery list. Already on your list: tea."
    assert render("{!items}Your list is empty.", {"items": []}) == "Your list is empty."
    assert render("{!items}Your list is empty.", {"items": ["x"]}) is None
    assert render("Count {count}.", {"count": 0}) == "Count 0."  # zero is a value


def test_lists_of_content_one_per_line() -> None:
    recipe = {"name": "Carbonara", "steps": ["Boil.", "Fry.", "Toss."], "quantities": ["400 g spaghetti"]}
    text = result_text(recipe, ["{name}.", "Ingredients:{quantities:lines}", "Steps:{steps:numbered}"])
    assert text == "Carbonara.\nIngredients:\n- 400 g spaghetti\nSteps:\n1. Boil.\n2. Fry.\n3. Toss."
    notes = {"query": "wifi", "notes": [{"id": 1, "text": "wifi password is hunter2", "title": None}]}
    assert "hunter2" in result_text(notes, ['Your notes about "{query}":{notes.*.text:lines}'])
    assert result_text([{"url": "https://a.test"}], ["Watching:{items.*.url:lines}"]) == "Watching:\n- https://a.test"


def test_a_results_own_reply_wins_and_nothing_is_dumped() -> None:
    assert result_text({"answer": "12 people were absent.", "rows": [1, 2]}, ["{rows}"]) == "12 people were absent."
    dump = result_text({"date": "2026-12-01", "weekday": "Tuesday", "timezone": "UTC"}, (), "Plan dinner")
    assert dump == "Done: plan dinner." and "weekday" not in dump
    assert result_text({"notes": [{"id": 1}]}, ["{notes}"], "Search notes") == "Done: search notes."


def test_errors_are_one_sentence_without_exception_names() -> None:
    text = error_text("Show one recipe", {"code": "agent_error", "message": "KeyError: 'name'\nTraceback (most recent call last):\n  File \"x\""})
    assert text == "I couldn't show one recipe: name." and "KeyError" not in text and "\n" not in text
    refused = error_text("Show one recipe", {"code": "invalid_argument", "message": "There is no recipe called 'x'."})
    assert refused == "I couldn't show one recipe: there is no recipe called 'x'."
    assert "try again" in error_text("Add items", {"code": "agent_error", "message": ""})


def test_an_error_names_the_action_briefly_never_the_whole_description() -> None:
    long = ("Delete one event from the user's calendar, by its id or by words of its title (the soonest upcoming "
            "events that have them; several: the user picks)")
    said = error_text(long, {"code": "invalid_argument", "message": "No upcoming event is called 'x'."})
    assert said == "I couldn't delete one event from your calendar: no upcoming event is called 'x'."
    # The SDK worker's "<function> raised ..." is no sentence for a user.
    watch = error_text("Watch a web page and post to the feed when the given words appear on it",
                       {"code": "agent_error", "message": "add_watch raised the address must start with https://"})
    assert watch == "I couldn't watch a web page: the address must start with https://."
    # A summary that names a thing, not an action, is not made into one ("I couldn't the most recent notes").
    noun = error_text("The most recently saved notes and articles, newest first (limit: 1 to 100)",
                      {"code": "invalid_argument", "message": "The limit must be between 1 and 100."}, "notes")
    assert noun == "The notes agent couldn't do that: the limit must be between 1 and 100."
    assert result_text({"rows": 3}, (), "Run one read-only SQL query within your scope; a page of rows") == \
        "Done: run one read-only SQL query within your scope."
