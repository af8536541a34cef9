"""Reading a message against the conversation (sidekick/dialogue/understand.py), over the starter
agents' real function specs and the offline planner; the calls themselves run in the e2e tests."""

from __future__ import annotations

from typing import Any

from sidekick_support import NOW, TZ

from dreamer.sidekick.dialogue.state import DialogueState
from dreamer.sidekick.dialogue.understand import Understood, understand
from dreamer.sidekick.planner import OfflinePlanner, PlanContext, Tool

PLANNER = OfflinePlanner()


def read(text: str, tools: list[Tool], state: DialogueState | None = None, pending: Any = None,
         taught: list[tuple[str, str, dict]] | None = None) -> Understood:
    return understand(text, tools, PlanContext(now=NOW, timezone=TZ), state or DialogueState(), pending,
                      PLANNER.plan, lambda _: taught or [])


def after(tools: list[Tool], *calls: dict[str, Any]) -> DialogueState:
    return DialogueState().with_calls([{"ok": True, **c} for c in calls], {t.name: t.undo for t in tools})


def steps(seen: Understood) -> list[tuple[str, dict]]:
    assert seen.plan is not None
    return [(s.name, dict(s.args)) for s in seen.plan.steps]


def test_a_request_of_its_own_drops_the_open_question(tools: list[Tool]) -> None:
    asked = read("add bread", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "choose"
    seen = read("put cheese on the grocery list", tools, pending=asked.pending)
    assert seen.dropped_question and steps(seen) == [("grocery.add_items", {"items": ["cheese"]})]
    picked = read("the grocery one", tools, pending=asked.pending)
    assert not picked.dropped_question and steps(picked) == [("grocery.add_items", {"items": ["bread"]})]
    assert picked.picked is not None and picked.picked[0].name == "grocery.add_items"  # what is learned


def test_yes_and_no_in_other_words(tools: list[Tool]) -> None:
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "confirm"
    for yes in ("sure, go ahead", "yep", "ok do it"):
        plan = read(yes, tools, pending=asked.pending).plan
        assert plan is not None and [s.confirmed for s in plan.steps] == [True], yes
    for no in ("wait, don't", "no thanks", "hold on"):
        plan = read(no, tools, pending=asked.pending).plan
        assert plan is not None and plan.steps == () and plan.reply and "dropped" in plan.reply, no
    # Yes or no said back with the action: "yup, clear it", "no, forget it", "don't bother".
    for yes in ("sure thing", "go on", "yup, clear it"):
        plan = read(yes, tools, pending=asked.pending).plan
        assert plan is not None and [s.confirmed for s in plan.steps] == [True], yes
    for no in ("no, forget it", "don't bother", "nope, keep it"):
        seen = read(no, tools, pending=asked.pending)
        assert seen.how == "answer" and seen.plan is not None and seen.plan.steps == (), no
    # ... but a yes or no that goes on to a request of its own is that request.
    for request in ("ok, show my list", "yes, add milk", "no, add oat milk instead"):
        seen = read(request, tools, pending=asked.pending)
        assert seen.dropped_question and seen.plan is not None and seen.plan.steps, request
        assert all(not s.confirmed for s in seen.plan.steps), request


def test_an_option_is_named_by_its_words_or_their_synonyms(tools: list[Tool]) -> None:
    asked = read("add bread", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "choose"
    for words in ("the shopping list one", "shopping", "on my grocery list please"):
        seen = read(words, tools, pending=asked.pending)
        assert seen.how == "answer" and steps(seen) == [("grocery.add_items", {"items": ["bread"]})], words
    for words in ("no", "no, leave it", "neither"):
        seen = read(words, tools, pending=asked.pending)
        assert seen.how == "answer" and seen.plan is not None and seen.plan.steps == (), words


def test_undo_runs_the_declared_inverse_and_says_when_it_cannot(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["milk", "tea"]},
                          "result": {"added": ["milk"], "already_there": ["tea"], "items": ["tea", "milk"]}})
    # Only what the call added is taken off: tea was there before.
    assert steps(read("oops, take that off again", tools, state)) == [("grocery.remove_items", {"items": ["milk"]})]
    undone = state.with_calls([{"ok": True, "agent": "grocery", "function": "remove_items",
                                "args": {"items": ["milk"]}, "result": {"removed": ["milk"]}}],
                              {t.name: t.undo for t in tools})
    assert undone.calls[0].undone and undone.calls[1].is_undo
    assert "nothing to undo" in (read("undo that", tools, undone).plan.reply or "")  # type: ignore[union-attr]
    listed = after(tools, {"agent": "grocery", "function": "list_items", "args": {}, "result": {"items": []}})
    assert "can't undo" in (read("undo that", tools, listed).plan.reply or "")  # type: ignore[union-attr]


def test_undo_passes_over_reads_and_says_truly_what_cannot_be_undone(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["eggs"]},
             "result": {"added": ["eggs"], "already_there": [], "items": ["eggs"]}}
    looked = {"agent": "grocery", "function": "list_items", "args": {}, "result": {"items": ["eggs"]}}
    agenda = {"agent": "calendar", "function": "agenda", "args": {"day": "today"}, "result": {"events": []}}
    # "add eggs", "what's on my list", "what's on today", "undo that": the eggs come off.
    seen = read("undo that", tools, after(tools, added, looked, agenda))
    assert seen.how == "undo" and steps(seen) == [("grocery.remove_items", {"items": ["eggs"]})]
    # Dinner put things on the list: it cannot be undone, and the reply says what to do instead.
    dinner = {"agent": "recipes", "function": "plan_dinner", "args": {"day": "tomorrow"},
              "result": {"weekday": "Thursday", "recipe": {"name": "Chili"}, "added": ["beans", "onions"]}}
    said = read("undo that", tools, after(tools, added, dinner)).plan.reply or ""  # type: ignore[union-attr]
    assert "can't undo" in said and "only reads" not in said
    assert 'remove beans and onions from my grocery list' in said


def test_follow_ups_resolve_against_the_state(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["milk"]},
                          "result": {"added": ["milk"], "already_there": [], "items": ["eggs", "flour", "milk"]}})
    assert steps(read("and bread too", tools, state)) == [("grocery.add_items", {"items": ["bread"]})]
    assert steps(read("also butter please", tools, state)) == [("grocery.add_items", {"items": ["butter"]})]
    assert steps(read("actually make that oat milk", tools, state)) == [
        ("grocery.remove_items", {"items": ["milk"]}), ("grocery.add_items", {"items": ["oat milk"]})]
    assert steps(read("remove the eggs", tools, state)) == [("grocery.remove_items", {"items": ["eggs"]})]
    recipes = after(tools, {"agent": "recipes", "function": "suggest", "args": {"cuisine": "italian"},
                            "result": {"recipes": [{"name": "Penne"}, {"name": "Carbonara"}], "count": 2}})
    assert steps(read("the second one", tools, recipes)) == [("recipes.get_recipe", {"name": "Carbonara"})]
    assert "1 to 2" in (read("the fifth one", tools, recipes).plan.reply or "")  # type: ignore[union-attr]
    day = after(tools, {"agent": "calendar", "function": "agenda", "args": {"day": "tomorrow"}, "result": {}})
    assert steps(read("do the same for friday", tools, day)) == [("calendar.agenda", {"day": "2025-03-14"})]


def test_small_talk_help_and_unknown_requests(tools: list[Tool]) -> None:
    for text in ("thanks!", "hi there"):
        seen = read(text, tools)
        assert seen.how == "smalltalk" and seen.plan is not None and len(seen.plan.reply or "") < 120
    help_ = read("what can you do?", tools).plan
    assert help_ is not None and "grocery" in (help_.reply or "") and "execute_sql" not in (help_.reply or "")
    weather = read("what's the weather tomorrow?", tools).plan
    assert weather is not None and weather.steps == () and "gallery" in (weather.reply or "")


def test_a_taught_phrasing_routes_straight_to_its_function(tools: list[Tool]) -> None:
    seen = read("add bread", tools, taught=[("calendar", "add_event", {"title": "bread"})])
    assert seen.how == "learned" and seen.plan is not None and seen.plan.pending is not None
    # add_event still needs its start: the usual question follows, but no "which did you mean".
    assert seen.plan.pending.kind == "missing" and seen.plan.steps[0].name == "calendar.add_event"
    assert steps(read("add bread", tools, taught=[("grocery", "add_items", {"items": ["bread"]})])) == [
        ("grocery.add_items", {"items": ["bread"]})]


def test_a_request_inside_a_follow_up_is_read_as_one(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["lettuce"]},
                          "result": {"added": ["lettuce"], "already_there": [], "items": ["lettuce"]}})
    # What follows "and" is asked of the planner first: the same function's value, without its command words.
    assert steps(read("oh and don't forget croutons", tools, state)) == [("grocery.add_items", {"items": ["croutons"]})]
    # ... a request for another function is no follow-up at all.
    assert steps(read("and what's on my calendar tomorrow", tools, state))[0][0] == "calendar.agenda"
    # "remove it" straight after an add takes that add back.
    seen = read("never mind, remove it", tools, state)
    assert seen.how == "undo" and steps(seen) == [("grocery.remove_items", {"items": ["lettuce"]})]


def test_a_dismissal_before_a_request_drops_the_question_and_plans_the_rest(tools: list[Tool]) -> None:
    asked = read("add bread", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "choose"
    seen = read("forget that, what's on my calendar today", tools, pending=asked.pending)
    assert seen.dropped_question and steps(seen) == [("calendar.agenda", {"day": "today"})]
    confirm = read("clear my grocery list", tools).plan
    assert confirm is not None and confirm.pending is not None
    declined = read("no wait, keep it", tools, pending=confirm.pending).plan  # an answer (no), not a dismissal
    assert declined is not None and declined.steps == () and "dropped" in (declined.reply or "")


def test_a_correction_changes_the_parameter_its_value_fits(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "calendar", "function": "add_event",
                          "args": {"title": "dentist", "start": "2025-03-14T10:00+01:00"},
                          "result": {"added": True, "event": {"id": 7, "title": "dentist"}}})
    # A bare time keeps the day already given; the event is moved where it is (move_event, the
    # agent's function that edits the time in place), not taken off and added again.
    assert steps(read("actually make it 11am", tools, state)) == [
        ("calendar.move_event", {"event_id": 7, "start": "2025-03-14T11:00+01:00"})]
    moved = steps(read("actually make that monday at 9", tools, state))
    assert moved == [("calendar.move_event", {"event_id": 7, "start": "2025-03-17T09:00+01:00"})]


def test_another_day_another_department_and_a_pointed_entry(tools: list[Tool]) -> None:
    day = after(tools, {"agent": "calendar", "function": "agenda", "args": {"day": "2025-03-13"}, "result": {}})
    for said in ("and saturday?", "now do saturday too", "saturday"):
        assert steps(read(said, tools, day)) == [("calendar.agenda", {"day": "2025-03-15"})], said
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "how many people in sales took sick leave in October?"}, "result": {}})
    assert steps(read("and in finance?", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many people in finance took sick leave in October?"})]
    assert steps(read("what about November?", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many people in sales took sick leave in November?"})]
    saved = after(tools, {"agent": "notes", "function": "save", "args": {"text": "buy stamps"},
                          "result": {"id": 4, "text": "buy stamps"}})
    assert steps(read("delete that note", tools, saved)) == [("notes.delete", {"note_id": 4})]
    assert read("delete that recipe", tools, saved).how != "undo"  # the noun names something else
    shown = after(tools, {"agent": "recipes", "function": "suggest", "args": {"cuisine": "thai"},
                          "result": {"recipes": [{"name": "Pad Thai"}, {"name": "Green Curry"}], "count": 2}})
    assert steps(read("how do I make the second one", tools, shown)) == [("recipes.get_recipe", {"name": "Green Curry"})]


def test_side17d_mechanisms(tools: list[Tool]) -> None:
    # A thing named with please is asked for; "then" leads a request; a reason clause is dropped.
    assert steps(read("milk pls", tools)) == [("grocery.add_items", {"items": ["milk"]})]
    assert steps(read("ok then add crisps to my shopping list", tools)) == [("grocery.add_items", {"items": ["crisps"]})]
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["flour", "sugar"]},
                          "result": {"added": ["flour", "sugar"]}})
    assert steps(read("remove the sugar, we have some", tools, added)) == [("grocery.remove_items", {"items": ["sugar"]})]
    # "it" past a look-up: the value the agent's last change was given.
    listed = after(tools, {"agent": "notes", "function": "add_todo", "args": {"text": "renew passport"}, "result": {}},
                   {"agent": "notes", "function": "todos", "args": {}, "result": {}})
    assert steps(read("mark it as done", tools, listed)) == [("notes.finish_todo", {"text": "renew passport"})]
    # The last call's declared inverse, said with a pronoun, is an undo.
    watched = after(tools, {"agent": "watch", "function": "add_watch", "args": {"url": "https://example.com/a"},
                            "result": {"id": 3, "url": "https://example.com/a"}})
    seen = read("stop watching it", tools, watched)
    assert seen.how == "undo" and steps(seen) == [("watch.remove_watch", {"watch_id": 3})]
    # A relative time phrase of a question put whole is swapped for another.
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "how many new hires did we have this year"}, "result": {}})
    assert steps(read("what about last year", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many new hires did we have last year"})]


def test_side19s_follow_ups_opened_by_an_interjection_or_said_with_a_put_verb(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["milk"]},
                          "result": {"added": ["milk"], "already_there": [], "items": ["milk"]}})
    assert steps(read("oooh and capers", tools, state)) == [("grocery.add_items", {"items": ["capers"]})]
    assert steps(read("bung some crisps on too", tools, state)) == [("grocery.add_items", {"items": ["crisps"]})]


def test_side21_undo_corrections_and_removals_in_other_words(tools: list[Tool]) -> None:
    """Phrasings made up for this test (not from any dialogue file) of mechanisms added on 2026-12-06."""
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["kumquats"]},
                          "result": {"added": ["kumquats"], "already_there": [], "items": ["kumquats"]}})
    for undo in ("cmd-z", "nope, undo", "kindly restore it, that was a mistake", "delete that one",
                 "hold on, take it back, I added it by accident", "I made a mistake; please reverse that."):
        assert steps(read(undo, tools, added)) == [("grocery.remove_items", {"items": ["kumquats"]})], undo
    # a correction naming the old value against the new, in other words
    for fix in ("apologies, I wanted satsumas rather than kumquats", "satsumas rather than kumquats",
                "not kumquats, make it satsumas"):
        assert steps(read(fix, tools, added)) == [
            ("grocery.remove_items", {"items": ["kumquats"]}), ("grocery.add_items", {"items": ["satsumas"]})], fix
    assert steps(read("same again with satsumas", tools, added)) == [("grocery.add_items", {"items": ["satsumas"]})]
    shown = after(tools, {"agent": "grocery", "function": "list_items", "args": {},
                          "result": {"items": ["figs", "dates", "prunes"]}})
    assert steps(read("the dates can go, we've got loads", tools, shown)) == [
        ("grocery.remove_items", {"items": ["dates"]})]
    assert steps(read("knock off the third one", tools, shown)) == [("grocery.remove_items", {"items": ["prunes"]})]
    for fix in ("no kumquats, I meant satsumas", "scrap the kumquats, make it satsumas", "hmm not kumquats, satsumas"):
        assert steps(read(fix, tools, added)) == [
            ("grocery.remove_items", {"items": ["kumquats"]}), ("grocery.add_items", {"items": ["satsumas"]})], fix
    assert steps(read("no kumquats, remove it", tools, added)) == [("grocery.remove_items", {"items": ["kumquats"]})]
    for undo in ("cancel the last one", "nope, take it back out", "bin that, never mind"):
        assert steps(read(undo, tools, added)) == [("grocery.remove_items", {"items": ["kumquats"]})], undo
    ideas = after(tools, {"agent": "recipes", "function": "suggest", "args": {},
                          "result": {"recipes": [{"name": "Gnocchi"}, {"name": "Polenta"}], "count": 2}})
    assert steps(read("open the bottom one", tools, ideas)) == [("recipes.get_recipe", {"name": "Polenta"})]
    # dictation reaches the dialogue too: "um, and figs comma dates too"
    assert steps(read("um, and figs comma dates too", tools, added)) == [
        ("grocery.add_items", {"items": ["figs", "dates"]})]


def test_side22_answers_dismissals_and_asides_in_other_words(tools: list[Tool]) -> None:
    """Phrasings made up for this test (not from any dialogue file) of mechanisms added on 2026-12-06 (evening)."""
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "confirm"
    for yes in ("aye", "si, go ahead", "yeah go on"):
        plan = read(yes, tools, pending=asked.pending).plan
        assert plan is not None and [s.confirmed for s in plan.steps] == [True], yes
    for no in ("naw", "non, leave it", "nah mate"):
        seen = read(no, tools, pending=asked.pending)
        assert seen.how == "answer" and seen.plan is not None and seen.plan.steps == (), no
    # a dismissal with its own lead, then a request: the question goes, the request is read
    for words in ("meh, nvm, show me my to-do list", "oh well, leave it, show me my to-do list",
                  "ach, skip it, show me my to-do list"):
        seen = read(words, tools, pending=asked.pending)
        assert seen.dropped_question and steps(seen) == [("notes.todos", {})], words
    # whom it is said to is no item of a follow-up
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["kumquats"]},
                          "result": {"added": ["kumquats"], "already_there": [], "items": ["kumquats"]}})
    assert steps(read("and figs too, pet", tools, added)) == [("grocery.add_items", {"items": ["figs"]})]


def test_side22_undo_and_to_dos_by_place_in_other_words(tools: list[Tool]) -> None:
    """Made-up phrasings: undo beside remorse said in other ways, and a to-do finished by its place."""
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["kumquats"]},
                          "result": {"added": ["kumquats"], "already_there": [], "items": ["kumquats"]}})
    for undo in ("meh, undo that", "yikes my thumb slipped, undo it", "undo plz, wrong thing", "eh take that back lol"):
        assert steps(read(undo, tools, added)) == [("grocery.remove_items", {"items": ["kumquats"]})], undo
    assert steps(read("my fault, satsumas not kumquats", tools, added)) == [
        ("grocery.remove_items", {"items": ["kumquats"]}), ("grocery.add_items", {"items": ["satsumas"]})]
    listed = after(tools, {"agent": "notes", "function": "todos", "args": {},
                           "result": {"todos": [{"id": 1, "text": "ring the vet"}, {"id": 2, "text": "post the parcel"},
                                                {"id": 3, "text": "wash the car"}]}})
    for said, text in (("the third one's done", "wash the car"), ("number 1 is sorted", "ring the vet"),
                       ("finished the parcel one", "post the parcel")):
        assert steps(read(said, tools, listed)) == [("notes.finish_todo", {"text": text})], said


def test_side22_follow_ups_point_back_in_other_words(tools: list[Tool]) -> None:
    """Made-up phrasings: the dish just planned, the one page just listed, asides after an add-more."""
    planned = after(tools, {"agent": "recipes", "function": "plan_dinner", "args": {"day": "2026-07-16"},
                            "result": {"date": "2026-07-16", "recipe": {"name": "Risotto", "minutes": 40}, "added": []}})
    for ask in ("how would I cook that?", "walk me through that one"):
        assert steps(read(ask, tools, planned)) == [("recipes.get_recipe", {"name": "Risotto"})], ask
    listed = after(tools, {"agent": "watch", "function": "list_watches", "args": {},
                           "result": {"watches": [{"id": 42, "url": "https://example.org/a", "what": "sale"}]}})
    assert steps(read("right, stop watching that page", tools, listed)) == [("watch.remove_watch", {"watch_id": 42})]
    assert steps(read("stop watching 9 as well", tools, listed)) == [("watch.remove_watch", {"watch_id": 9})]
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["kumquats"]},
                          "result": {"added": ["kumquats"], "already_there": [], "items": ["kumquats"]}})
    for more in ("figs as well, ta", "figs too while you're at it", "also figs please, I nearly forgot"):
        assert steps(read(more, tools, added)) == [("grocery.add_items", {"items": ["figs"]})], more
    assert steps(read("also add ring the vet to my to-do list", tools, added)) == [
        ("notes.add_todo", {"text": "ring the vet"})]


def test_side22_an_entry_by_a_word_of_it_and_the_next_one_by_now(tools: list[Tool]) -> None:
    ideas = after(tools, {"agent": "recipes", "function": "suggest", "args": {},
                          "result": {"recipes": [{"name": "Cottage Pie"}, {"name": "Lamb Tagine"}], "count": 2}})
    assert steps(read("the tagine one please", tools, ideas)) == [("recipes.get_recipe", {"name": "Lamb Tagine"})]
    assert steps(read("that cottage one", tools, ideas)) == [("recipes.get_recipe", {"name": "Cottage Pie"})]
    shown = after(tools, {"agent": "recipes", "function": "get_recipe", "args": {"name": "risotto"},
                          "result": {"name": "Risotto", "steps": ["stir"]}})
    assert steps(read("ok now gnocchi plz", tools, shown)) == [("recipes.get_recipe", {"name": "gnocchi"})]


def test_side24_answers_picks_and_corrections_in_other_words(tools: list[Tool]) -> None:
    """Phrasings made up for this test (not from any dialogue file) of mechanisms added on 2026-12-06 (night)."""
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None
    for yes in ("haan ji", "okey dokey", "kindly do it"):
        plan = read(yes, tools, pending=asked.pending).plan
        assert plan is not None and [s.confirmed for s in plan.steps] == [True], yes
    for no in ("nahin", "hard pass"):
        seen = read(no, tools, pending=asked.pending)
        assert seen.how == "answer" and seen.plan is not None and seen.plan.steps == (), no
    # no to the first guess, and which one instead
    choice = read("add bread", tools).plan
    assert choice is not None and choice.pending is not None and choice.pending.kind == "choose"
    seen = read("nah, the calendar one", tools, pending=choice.pending)
    assert seen.how == "answer" and [s.name for s in seen.plan.steps] == ["calendar.add_event"]  # type: ignore[union-attr]
    # a correction said as "I said ...", and one more item introduced as such
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["rye bread"]},
                          "result": {"added": ["rye bread"], "items": ["rye bread"]}})
    assert steps(read("no I said sourdough", tools, added))[-1] == ("grocery.add_items", {"items": ["sourdough"]})
    assert steps(read("and one more thing, capers", tools, added)) == [("grocery.add_items", {"items": ["capers"]})]
    assert steps(read("also add pickles na", tools, added)) == [("grocery.add_items", {"items": ["pickles"]})]


def test_side24_undo_beside_saying_it_is_not_done(tools: list[Tool]) -> None:
    finished = after(tools, {"agent": "notes", "function": "finish_todo", "args": {"text": "mow the lawn"},
                             "result": {"text": "mow the lawn", "id": "n9"}})
    for words in ("hmm, I haven't yet, undo that", "wait, it's not finished, put it back", "ugh not done yet, make it back"):
        seen = read(words, tools, finished)
        assert seen.how == "undo" and steps(seen) == [("notes.add_todo", {"text": "mow the lawn"})], words


def test_side24_a_place_in_a_shown_list_said_as_an_option(tools: list[Tool]) -> None:
    shown = after(tools, {"agent": "recipes", "function": "suggest", "args": {},
                          "result": {"recipes": [{"name": "Dal"}, {"name": "Rajma"}, {"name": "Chole"}], "count": 3}})
    assert steps(read("option three", tools, shown)) == [("recipes.get_recipe", {"name": "Chole"})]


def test_side24_an_hr_follow_up_swaps_the_name_the_question_was_about(tools: list[Tool]) -> None:
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "how many remote days did Field Operations log in May"},
                          "result": {"answer": "40"}})
    assert steps(read("what about Legal", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many remote days did Legal log in May"})]


# ---------------------------------------------------------------- side25 (2026-12-07)
def _added(item: str) -> dict[str, Any]:
    return {"agent": "grocery", "function": "add_items", "args": {"items": [item]}, "result": {"added": [item]}}


def test_side25_corrections_said_in_other_words_replace_the_last_thing(tools: list[Tool]) -> None:
    state = after(tools, _added("cheddar"))
    for text in ("darn, I meant gouda", "nah make that gouda", "sorry, wrong one, gouda I mean",
                 "correction: gouda, not cheddar", "no mate, gouda not cheddar"):
        seen = read(text, tools, state)
        assert steps(seen) == [("grocery.remove_items", {"items": ["cheddar"]}),
                               ("grocery.add_items", {"items": ["gouda"]})], text


def test_side25_undo_after_a_word_of_regret(tools: list[Tool]) -> None:
    state = after(tools, _added("cheddar"))
    for text in ("nvm undo", "I'm afraid I made a mistake, please undo that"):
        assert read(text, tools, state).how == "undo", text


def test_side25_an_option_picked_by_its_time(tools: list[Tool]) -> None:
    from dreamer.sidekick.planner.base import Clarification, Option, PartialPlan, Step

    early, late = (Step("calendar", "remove_event", {"event_id": n}) for n in (1, 2))
    options = (Option("Physio, Monday 14 December, 08:15–09:15", early), Option("Physio, Monday 14 December, 17:30–18:30", late))
    partial = PartialPlan(steps=(early,), choices=((early, late),), facts={}, index=0, now=NOW.isoformat(), timezone=TZ)
    pending = Clarification(kind="choose", question="Which physio should I delete?", partial=partial, options=options)
    for text, picked in (("the 5:30 pm one", late), ("the evening one", late), ("the earlier one please", early),
                         ("the morning one", early), ("the 8:15 one", early)):
        seen = read(text, tools, pending=pending)
        assert seen.how == "answer" and seen.plan is not None and seen.plan.steps == (picked,), text


def test_side25_the_day_after_and_another_department(tools: list[Tool]) -> None:
    agenda = {"agent": "calendar", "function": "agenda", "args": {"day": "2025-03-20"}, "result": {"summary": "x"}}
    assert steps(read("and the day after?", tools, after(tools, agenda))) == [("calendar.agenda", {"day": "2025-03-21"})]
    assert steps(read("what about the day before", tools, after(tools, agenda))) == [
        ("calendar.agenda", {"day": "2025-03-19"})]
    asked = {"agent": "sql-explorer", "function": "ask", "args": {"question": "how many people work in Legal"},
             "result": {"answer": "4"}}
    assert steps(read("ok now marketing", tools, after(tools, asked))) == [
        ("sql-explorer.ask", {"question": "how many people work in marketing"})]


def test_side25_do_the_needful_is_yes(tools: list[Tool]) -> None:
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None and asked.pending.kind == "confirm"
    seen = read("ok do the needful", tools, pending=asked.pending)
    assert steps(seen) == [("grocery.clear", {})]


# ---------------------------------------------------------------- side26 (2026-12-07)
def test_side26_a_correction_after_a_look_up_replaces_what_it_was_given(tools: list[Tool]) -> None:
    ideas = {"agent": "recipes", "function": "suggest", "args": {"ingredient": "mushrooms"},
             "result": {"recipes": [{"name": "Mushroom Risotto"}]}}
    for text, value in (("sorry I meant aubergine", "aubergine"), ("oops, halloumi not mushrooms", "halloumi"),
                        ("nah, chickpeas", "chickpeas"), ("I meant squash sorry", "squash")):
        assert steps(read(text, tools, after(tools, ideas))) == [("recipes.suggest", {"ingredient": value})], text


def test_side26_a_question_narrowed_or_broken_down(tools: list[Tool]) -> None:
    asked = {"agent": "sql-explorer", "function": "ask",
             "args": {"question": "how many sick days were taken in Engineering this year?"}, "result": {"answer": "40"}}
    state = after(tools, asked)
    assert steps(read("split that up by month", tools, state)) == [
        ("sql-explorer.ask", {"question": "how many sick days were taken in Engineering this year, broken down by month?"})]
    assert steps(read("only the full-time staff", tools, state)) == [
        ("sql-explorer.ask", {"question": "how many sick days were taken in Engineering this year, only the full-time staff?"})]
    assert steps(read("just for Legal", tools, state)) == [
        ("sql-explorer.ask", {"question": "how many sick days were taken in Legal this year?"})]


def test_side26_undo_said_with_whom_and_how_many(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["lemons", "limes"]},
             "result": {"added": ["lemons", "limes"]}}
    state = after(tools, added)
    for text in ("take that back bro", "actually take them both off", "delete those two",
                 "remove it, my flatmate doesn't want them", "scratch that, wrong list"):
        seen = read(text, tools, state)
        assert seen.how == "undo" and steps(seen) == [("grocery.remove_items", {"items": ["lemons", "limes"]})], text


def test_side26_an_entry_just_shown_is_ticked_off_by_its_words(tools: list[Tool]) -> None:
    shown = {"agent": "notes", "function": "todos", "args": {},
             "result": {"todos": [{"id": 7, "text": "renew passport", "tags": ["todo"]},
                                  {"id": 8, "text": "book the vet", "tags": ["todo"]}], "count": 2}}
    assert steps(read("tick off the renew passport", tools, after(tools, shown))) == [
        ("notes.finish_todo", {"text": "renew passport"})]


def test_side26_yes_and_no_in_other_englishes(tools: list[Tool]) -> None:
    for yes in ("ok can", "sige, go ahead", "righto"):
        asked = read("clear my grocery list", tools).plan
        assert asked is not None and asked.pending is not None
        assert steps(read(yes, tools, pending=asked.pending)) == [("grocery.clear", {})], yes
    asked = read("clear my grocery list", tools).plan
    assert asked is not None and asked.pending is not None
    seen = read("yeah nah", tools, pending=asked.pending)
    assert seen.plan is None or not seen.plan.steps


def test_side26_more_said_with_small_words_and_undo_without_its_i(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["crisps"]}, "result": {"added": ["crisps"]}}
    state = after(tools, added)
    assert steps(read("dip too, eh", tools, state)) == [("grocery.add_items", {"items": ["dip"]})]
    assert steps(read("add salsa also only", tools, state)) == [("grocery.add_items", {"items": ["salsa"]})]
    for text in ("oops didnt mean it", "kindly remove the same"):
        seen = read(text, tools, state)
        assert steps(seen) == [("grocery.remove_items", {"items": ["crisps"]})], text


def test_side26_what_happened_then_the_thing_pointed_at_ticked_off(tools: list[Tool]) -> None:
    added = {"agent": "notes", "function": "add_todo", "args": {"text": "post the parcel"},
             "result": {"id": 4, "text": "post the parcel", "tags": ["todo"]}}
    state = after(tools, added)
    for text in ("posted it this morning, tick it off", "all sorted, mark it done"):
        assert steps(read(text, tools, state)) == [("notes.finish_todo", {"text": "post the parcel"})], text
    # "it" said of a thing the message itself names is that thing, not the last call's
    assert steps(read("we've run out of honey, add it", tools, state)) == [("grocery.add_items", {"items": ["honey"]})]


def test_side26_the_entry_a_clause_names_is_what_it_points_at(tools: list[Tool]) -> None:
    shown = {"agent": "grocery", "function": "list_items", "args": {}, "result": {"items": ["lemons", "rice"]}}
    assert steps(read("picked up the lemons, tick them off", tools, after(tools, shown))) == [
        ("grocery.remove_items", {"items": ["lemons"]})]


# ---------------------------------------------------------------- side27 (2026-12-07, second session)
def test_side27_a_correction_led_by_an_apology_in_another_language(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["penne"]}, "result": {"added": ["penne"]}}
    state = after(tools, added)
    for text in ("disculpa, I meant fusilli", "Pardon me, I meant fusilli.", "oh dear, I meant fusilli",
                 "désolé, fusilli not penne", "I meant fusilli lol"):
        assert steps(read(text, tools, state)) == [("grocery.remove_items", {"items": ["penne"]}),
                                                   ("grocery.add_items", {"items": ["fusilli"]})], text


def test_side27_more_said_with_an_apology_or_laughter_last(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["crisps"]}, "result": {"added": ["crisps"]}}
    state = after(tools, added)
    for text in ("add salsa too, sorry", "salsa as well lol"):
        assert steps(read(text, tools, state)) == [("grocery.add_items", {"items": ["salsa"]})], text


def test_side27_i_meant_x_not_y_takes_x(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["penne"]}, "result": {"added": ["penne"]}}
    assert steps(read("sorry, I meant rigatoni not penne", tools, after(tools, added))) == [
        ("grocery.remove_items", {"items": ["penne"]}), ("grocery.add_items", {"items": ["rigatoni"]})]


def test_side27_how_about_x_then_swaps_x(tools: list[Tool]) -> None:
    shown = {"agent": "recipes", "function": "get_recipe", "args": {"name": "Pad Thai"},
             "result": {"name": "Pad Thai", "minutes": 30}}
    assert steps(read("ok how about green curry then", tools, after(tools, shown))) == [
        ("recipes.get_recipe", {"name": "green curry"})]


def test_side27_oh_x_while_youre_at_it_adds_x_and_oh_alone_takes_nothing_back(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["scones"]}, "result": {"added": ["scones"]}}
    state = after(tools, added)
    for text in ("oh, clotted cream while you're at it", "oh, clotted cream as well"):
        assert steps(read(text, tools, state)) == [("grocery.add_items", {"items": ["clotted cream"]})], text
    assert steps(read("ah no, crumpets", tools, state)) == [
        ("grocery.remove_items", {"items": ["scones"]}), ("grocery.add_items", {"items": ["crumpets"]})]


# ---------------------------------------------------------------- side28 (2026-12-07, third session)
def test_side28_more_in_other_englishes_and_a_clause_of_forgetting(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["pie"]}, "result": {"added": ["pie"]}}
    state = after(tools, added)
    for text, item in (("and mushy peas an' all", "mushy peas"), ("ja and boerewors as well", "boerewors"),
                       ("also gravy please, I always forget", "gravy")):
        assert steps(read(text, tools, state)) == [("grocery.add_items", {"items": [item]})], text


def test_side28_the_other_end_of_a_ranking(tools: list[Tool]) -> None:
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "which team had the most overtime last month?"}, "result": {}})
    for text, end in (("and the fewest?", "fewest"), ("and which had the least", "least")):
        assert steps(read(text, tools, asked)) == [
            ("sql-explorer.ask", {"question": f"which team had the {end} overtime last month?"})], text


def test_side28_yes_and_no_in_other_words_and_a_question_after_wait(tools: list[Tool]) -> None:
    from dreamer.sidekick.dialogue.answers import answer_kind
    from dreamer.sidekick.dialogue.undo import is_undo

    assert answer_kind("grand, go on") == "yes" and answer_kind("eish no wait") == "no"
    assert answer_kind("wait, is there anything on Friday") is None  # a request of its own
    assert answer_kind("no, it is fine") == "no"
    for text in ("oh no, bring it all back", "put it back where it was", "nah, get rid of them"):
        assert is_undo(text), text


def test_side28_a_thing_then_that_it_is_nearly_gone_and_other_ways_to_take_one_off(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["nappies"]}, "result": {"added": ["nappies"]}}
    state = after(tools, added)
    assert steps(read("and cotton buds, we're nearly out of those too", tools, state)) == [
        ("grocery.add_items", {"items": ["cotton buds"]})]
    assert steps(read("+rusks", tools, state)) == [("grocery.add_items", {"items": ["rusks"]})]
    from dreamer.sidekick.dialogue.followups import PICK, REMOVE
    from dreamer.sidekick.dialogue.undo import is_undo

    assert REMOVE.match("yeet the third one") and PICK.match("number 3 please, the full recipe")
    assert is_undo("oops wrong week, delete it for now")


# ---------------------------------------------------------------- side29 (2026-12-07, fourth session)
def test_side29_one_more_in_other_englishes(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["pie"]}, "result": {"added": ["pie"]}}
    state = after(tools, added)
    for text, item in (("oranges an aw", "oranges"), ("then butter also", "butter"), ("rice also can", "rice"),
                       ("pati vinegar po", "vinegar"), ("put yam join", "yam"), ("an' gravy", "gravy")):
        assert steps(read(text, tools, state)) == [("grocery.add_items", {"items": [item]})], text


def test_side29_undo_beside_cries_and_reasons(tools: list[Tool]) -> None:
    from dreamer.sidekick.dialogue.undo import is_undo
    from dreamer.sidekick.planner.language.spoken import as_written

    for text in ("naw, bin that", "bugger, undo that", "no need already, undo", "abeg reverse am",
                 "undo it, still need it", "cancel that one, I make mistake", "och, undo that, it's still leaking",
                 "forget that last one", "pls undo that, mistake"):
        assert is_undo(text) or is_undo(as_written(text)), text
    assert not is_undo("undo that and add milk")


def test_side29_corrections_in_a_second_language(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["butter"]}, "result": {"added": ["butter"]}}
    state = after(tools, added)
    for text in ("Sorry, is not butter, is margarine", "No no, I want say margarine", "mistake, I mean margarine, not butter"):
        assert steps(read(text, tools, state)) == [("grocery.remove_items", {"items": ["butter"]}),
                                                   ("grocery.add_items", {"items": ["margarine"]})], text


def test_side29_an_option_picked_by_its_day() -> None:
    from dreamer.sidekick.planner.base import Clarification, Option, PartialPlan, Step
    from dreamer.sidekick.planner.dialog import resume

    steps_ = tuple(Step("calendar", "remove_event", {"event_id": n}) for n in (4, 9))
    options = (Option("dentist, Tue 4 Mar 2031, 09:30–10:30", steps_[0]),
               Option("dentist, Thu 15 May 2031, 09:30–10:30", steps_[1]))
    pending = Clarification("choose", "Which dentist should I delete?",
                            PartialPlan(steps=(steps_[0],), choices=(steps_,), facts={}), options=options)
    for text, picked in (("the May one", 9), ("the one in March", 4), ("the one on the 15th", 9), ("the Tuesday one", 4)):
        plan = resume(pending, text)
        assert plan is not None and plan.steps[0].args == {"event_id": picked}, text


def test_side29_who_they_were_after_a_count(tools: list[Tool]) -> None:
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "how many employees were absent in Finance last month?"}, "result": {}})
    for text in ("and who were they?", "names please", "list them", "which ones?"):
        assert steps(read(text, tools, asked)) == [
            ("sql-explorer.ask", {"question": "which employees were absent in Finance last month?"})], text


def test_side29_a_bare_remove_beside_a_reason_takes_the_last_add_off(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["kaya"]}, "result": {"added": ["kaya"]}}
    state = after(tools, added)
    for text in ("no need it already, remove", "remove it, don't need it"):
        assert steps(read(text, tools, state)) == [("grocery.remove_items", {"items": ["kaya"]})], text


def test_side29_cancel_it_beside_a_reason_after_a_look_up(tools: list[Tool]) -> None:
    looked = after(tools, {"agent": "calendar", "function": "next_event", "args": {"title": "physio"},
                           "result": {"event": {"id": 3, "title": "physio", "start": "2031-03-04T09:30"}}})
    for text in ("bin it, I'm better", "cancel it, I'm not going"):
        assert steps(read(text, tools, looked)) == [("calendar.remove_event", {"event_id": 3})], text
    from dreamer.sidekick.memory.extract import read_memory_intent

    assert read_memory_intent("forget that last one") is None  # the last change, not a fact


def test_side30_one_more_with_thanks_and_in_other_forms(tools: list[Tool]) -> None:
    added = {"agent": "grocery", "function": "add_items", "args": {"items": ["pie"]}, "result": {"added": ["pie"]}}
    state = after(tools, added)
    for text, item in (("plus custard, cheers mate", "custard"), ("gravy too, good man", "gravy"),
                       ("+ pretzels", "pretzels"), ("and mustard to", "mustard"), ("jam also yaar", "jam")):
        assert steps(read(text, tools, state)) == [("grocery.add_items", {"items": [item]})], text


def test_side30_undo_and_put_back_in_more_words(tools: list[Tool]) -> None:
    from dreamer.sidekick.dialogue.undo import is_undo

    for text in ("lol jk, undo", "delete what you just added", "oh no, kindly restore everything",
                 "wait undo that, still need to do it"):
        assert is_undo(text), text
    finished = after(tools, {"agent": "notes", "function": "add_todo", "args": {"text": "renew the permit"},
                             "result": {"added": True}},
                     {"agent": "notes", "function": "finish_todo", "args": {"text": "renew the permit"},
                      "result": {"finished": "renew the permit"}})
    assert [s.name for s in read("nope not done actually, bring it back", tools, finished).plan.steps] == [  # type: ignore[union-attr]
        "notes.add_todo"]


def test_side30_corrections_after_a_cry_and_pointing_at_the_place(tools: list[Tool]) -> None:
    state = after(tools, {"agent": "calendar", "function": "add_event",
                          "args": {"title": "dentist", "start": "2025-03-14T10:00+01:00"},
                          "result": {"added": True, "event": {"id": 7, "title": "dentist"}}})
    assert [s.name for s in read("oops wrong time, make it 11am", tools, state).plan.steps] == [  # type: ignore[union-attr]
        "calendar.move_event"]
    added = after(tools, {"agent": "grocery", "function": "add_items", "args": {"items": ["figs"]}, "result": {"added": ["figs"]}})
    assert steps(read("stupid autocorrect, I meant dates", tools, added)) == [
        ("grocery.remove_items", {"items": ["figs"]}), ("grocery.add_items", {"items": ["dates"]})]
    assert steps(read("so what all's on there now", tools, added)) == [("grocery.list_items", {})]


def test_side30_hr_follow_ups_in_other_words(tools: list[Tool]) -> None:
    asked = after(tools, {"agent": "sql-explorer", "function": "ask",
                          "args": {"question": "how many people left in 2024?"}, "result": {"answer": "9"}})
    assert steps(read("team-wise also", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many people left in 2024, broken down by team?"})]
    assert steps(read("how many of them were in Finance?", tools, asked)) == [
        ("sql-explorer.ask", {"question": "how many people left in 2024, only in Finance?"})]
    assert steps(read("pls send the names too", tools, asked)) == [
        ("sql-explorer.ask", {"question": "who left in 2024?"})]
