"""The offline question compiler: an everyday HR question -> a plan over the semantic model.

A question about the asker ("my salary", "did I take") is refused first: the HR data does
not say which employee a user is. Otherwise the question is read as parts, each taken out
of the text once it is placed: the time ("in October", "this quarter", "since January",
"between 1 and 15 October", "year to date", "right now"), comparisons ("more than 3",
"between 50000 and 70000"), how many to name ("top 5", "which 3 departments"), up to two
groupings ("per department per reason", "by month"), a superlative ("highest", "best",
"most often"), an aggregation ("average", "total", "payroll"), then the model's own
phrases, longest first: dimension values and their synonyms ("no-shows" -> reason NO_SHOW),
entity nouns ("absences"), events ("absent", "called in" — a value inside one counts too:
"off sick" is the reason sick), person words ("employees", "who"), numbers ("salary",
"best paid", "earners"), dimension words ("department"), count nouns ("times", "days": the
rows of whatever is counted, so "sick days" are sick absences). What is left may be a name
("sales", "field ops"), matched against the dimension's names. Any other word that is not
grammar is reported — one sentence naming it — instead of guessed.

What is counted follows the words after "how many" / "the most": people ("how many
employees were absent": different people), or things ("how many absences", "how many
times": rows). The plan is turned into SQL by sqlbuild and into a sentence by answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from rapidfuzz import fuzz, utils

from dreamer.sdk.semantic import Dimension, Entity, Model, Number

from sql_explorer.plan import PERSON_GROUP, Choice, Filter, Group, Plan, TimeGroup, Unplaced
from sql_explorer.timeframe import Range, find_now, find_range
from sql_explorer.words import (AGGREGATIONS, BETWEEN, COMPARISONS, COUNT_NOUNS, FILLER, FREQUENCY, GROUP_MARKERS,
                                HEAD, LIMITS, PEOPLE_VERBS, PERSON_WORDS, SHOW_QUERY, SUPERLATIVES, TIME_UNITS,
                                about_asker, normalise)

ABOUT_ASKER = ("I can't answer questions about you: the HR data does not say which employee you are, so I would "
               "only be guessing. Ask about a department or everyone instead, for example: how many sick days did "
               "Sales take this year?")


@dataclass
class Names:
    """A labelled dimension's codes and names: the model's own plus the data's spellings in scope."""

    lookup: Callable[[Dimension], dict[str, list[str]]]
    cache: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def of(self, dim: Dimension) -> dict[str, list[str]]:
        if dim.name not in self.cache:
            self.cache[dim.name] = self.lookup(dim)
        return self.cache[dim.name]


class _Text:
    """The question as text with placed parts cut out (replaced by a marker that splits runs)."""

    def __init__(self, text: str) -> None:
        self.text = f" {text} "

    def cut(self, start: int, end: int) -> None:
        self.text = self.text[:start] + " | " + self.text[end:]

    def take(self, phrase: str) -> bool:
        m = re.search(rf"(?<=\s){re.escape(phrase)}(?=\s)", self.text)
        if m:
            self.cut(m.start(), m.end())
        return m is not None

    def take_regex(self, pattern: str) -> re.Match[str] | None:
        m = re.search(pattern, self.text)
        if m:
            self.cut(m.start(), m.end())
        return m

    def runs(self) -> list[list[str]]:
        return [run.split() for run in self.text.split("|") if run.split()]


@dataclass
class _Said:
    """The model's phrases found in the question."""

    filters: dict[str, Filter] = field(default_factory=dict)
    nouns: list[Entity] = field(default_factory=list)
    events: list[Entity] = field(default_factory=list)
    person: bool = False
    number: Number | None = None
    dimwords: list[Dimension] = field(default_factory=list)
    count_noun: bool = False


def _number(text: str, k: str | None) -> float:
    value = float(text.replace(",", ""))
    return value * 1000 if k else value


def _phrases(model: Model) -> list[tuple[str, str, object]]:
    """(phrase, kind, what) for every phrase of the model, longest first, so "sick leave" is a
    reason before "leave" is an event and "approved leave" is leave before "approved" is an approval."""
    out: list[tuple[str, str, object]] = []
    for dim in model.dimensions.values():
        for code, synonyms in dim.values.items():
            out += [(s, "value", (dim, code)) for s in synonyms]
    for ent in model.entities.values():
        out += [(n, "noun", ent) for n in ent.nouns if ent.name != "employee"]
        out += [(e, "event", ent) for e in ent.events]
    employee = model.entities.get("employee")
    if employee is not None:
        out += [(n, "person", employee) for n in employee.nouns]
    for num in model.numbers.values():
        out += [(w, "number", num) for w in num.words]
        out += [(w, "earners", num) for w in num.people_words]
    for dim in model.dimensions.values():
        out += [(w, "dimword", dim) for w in dim.words]
    out += [(w, "countnoun", None) for w in COUNT_NOUNS]
    return sorted(out, key=lambda p: (-len(p[0].split()), -len(p[0])))


def _implied(model: Model, ent: Entity, phrase: str) -> list[Filter]:
    """Values said inside an entity's own phrase ("off sick": the reason sick), on its own table."""
    found = []
    for dim in model.dimensions.values():
        if dim.table != ent.table:
            continue
        for code, synonyms in dim.values.items():
            said = next((s for s in synonyms if re.search(rf"(?<!\S){re.escape(s)}(?!\S)", phrase)), None)
            if said is not None:
                found.append(Filter(dim, code, said))
                break
    return found


def _read_phrases(model: Model, text: _Text) -> _Said:
    said = _Said()
    for phrase, kind, what in _phrases(model):
        while text.take(phrase):
            if kind == "value":
                dim, code = what  # type: ignore[misc]
                said.filters.setdefault(dim.name, Filter(dim, code, phrase))
            elif kind in ("noun", "event"):
                ent: Entity = what  # type: ignore[assignment]
                (said.nouns if kind == "noun" else said.events).append(ent)
                for f in _implied(model, ent, phrase):
                    said.filters.setdefault(f.dimension.name, f)
            elif kind == "person":
                said.person = True
            elif kind in ("number", "earners"):
                said.number = what  # type: ignore[assignment]
                said.person = said.person or kind == "earners"
            elif kind == "dimword":
                said.dimwords.append(what)  # type: ignore[arg-type]
            elif kind == "countnoun":
                said.count_noun = True
    return said


def _head(norm: str, kinds: dict[str, str]) -> str | None:
    """What the words after "how many" / "the most" count: "people", "rows", or None when they do not say."""
    m = HEAD.search(norm)
    if m is None:
        return None
    tokens = m.group(1).split()
    if tokens and tokens[0] in PEOPLE_VERBS and m.group(0).startswith("how many"):
        return "people"
    i, modifiers = 0, 0
    while i < len(tokens) and modifiers <= 3:
        hit = next(((kinds[p], size) for size in (4, 3, 2, 1) if i + size <= len(tokens)
                    for p in [" ".join(tokens[i:i + size])] if p in kinds), None)
        if hit is None:
            break
        kind, size = hit
        if kind in ("person", "earners"):
            return "people"
        if kind in ("noun", "countnoun"):
            return "rows"
        if kind in ("number", "dimword"):
            return None
        modifiers, i = modifiers + 1, i + size  # a value or an event: "unapproved absences", "absent employees"
    return "rows" if modifiers else None


def _comparisons(text: _Text) -> list[tuple[str, float]]:
    m = text.take_regex(BETWEEN)
    if m:
        low, high = sorted((_number(m.group(1), m.group(2)), _number(m.group(3), m.group(4))))
        return [(">=", low), ("<=", high)]
    for pattern, op in COMPARISONS:
        m = text.take_regex(pattern)
        if m:
            return [(op, _number(m.group(1), m.group(2)))]
    return []


def _limit(text: _Text) -> int | None:
    for pattern in LIMITS:
        m = re.search(pattern, text.text)
        if m and int(m.group(1)) > 0:
            text.cut(m.start(1), m.end(1))
            return int(m.group(1))
    return None


def _groups(model: Model, text: _Text) -> list[Group]:
    """Up to two groupings, in the order said: "per department per reason", "by department and status"."""
    words: list[tuple[str, Group]] = [(w, d) for d in model.dimensions.values() for w in d.words]
    words += [(w, PERSON_GROUP) for w in PERSON_WORDS] + [(w, TimeGroup(u)) for w, u in TIME_UNITS.items()]
    words.sort(key=lambda x: -len(x[0]))
    found: list[Group] = []
    while len(found) < 2:
        best: tuple[re.Match[str], Group] | None = None
        for word, group in words:
            m = re.search(rf"(?<=\s){GROUP_MARKERS} (?:the )?{re.escape(word)}(?=\s)", text.text)
            if m and (best is None or m.start() < best[0].start()):
                best = (m, group)
        if best is None:
            break
        text.cut(best[0].start(), best[0].end())
        found.append(best[1])
        for word, group in words:
            m = re.search(rf"\|\s+and (?:by |per |for each )?(?:the )?{re.escape(word)}(?=\s)", text.text)
            if m and len(found) < 2:
                text.cut(m.start(), m.end())
                found.append(group)
                break
    if len(found) < 2 and text.take("monthly"):
        found.append(TimeGroup("month"))
    return list(dict.fromkeys(found))


def _subject(norm: str, dims: list[Dimension]) -> tuple[Dimension | None, bool]:
    """The dimension a question is about ("which departments", "how many teams"), and whether it
    asks how many of them there are."""
    for dim in dims:
        for word in sorted(dim.words, key=len, reverse=True):
            m = re.search(rf"\b(which|what|how many|number of) (?:of the )?{re.escape(word)}\b", norm)
            if m:
                return dim, m.group(1) in ("how many", "number of")
    return None, False


def compile_question(model: Model, question: str, today: date, names: Names,
                     choices: Mapping[str, str] | None = None) -> Plan | Choice | Unplaced:
    """The plan for `question`, a Choice when a name fits several values, or Unplaced."""
    norm = normalise(question)
    if about_asker(norm.split()):
        return Unplaced(ABOUT_ASKER, about_asker=True)
    text = _Text(norm)
    show_query = text.take_regex(SHOW_QUERY.pattern) is not None
    now = find_now(text.text)
    if now:
        text.take(now)
    rng = find_range(text.text, today)
    if rng is not None:
        text.take(rng.said.strip())
    rng_is_now = bool(now) and rng is None
    if rng_is_now:
        rng = Range(today, today + timedelta(days=1), str(now), str(now))
    compare = _comparisons(text)
    limit = _limit(text)
    groups = _groups(model, text)
    order, frequency = None, False
    for phrase, direction in SUPERLATIVES:
        if text.take(phrase):
            order, frequency = direction, phrase in FREQUENCY
            break
    if limit is not None and order is None:
        order = "max"
    agg, agg_phrase = None, ""
    for phrase, fn in AGGREGATIONS:
        if text.take(phrase):
            agg, agg_phrase = fn, phrase
            break
    said = _read_phrases(model, text)
    if said.number is None and agg_phrase:  # "payroll": a total of the number it names
        said.number = next((n for n in model.numbers.values() if agg_phrase in n.words), None)
    filters = said.filters

    # Choices the user made (from a question we asked), then names said in the question.
    for dim_name, code in (choices or {}).items():
        dim = model.dimensions.get(dim_name)
        if dim is None or not isinstance(code, str):
            return Unplaced(f"{str(dim_name)[:40]!r} is not something the data can be filtered by")
        known = _known_codes(dim, names)
        if code not in known:
            return Unplaced(f"{code[:40]!r} is not a {dim.name} you can see")
        filters[dim.name] = Filter(dim, code, known[code][0] if known[code] else code)
    unknown: list[str] = []
    for run in text.runs():
        found = _names_in(run, model, names, filters)
        if isinstance(found, Choice):
            return found
        unknown += [w for w in found if w not in FILLER]
    if unknown:
        words = [repr(w[:40]) for w in dict.fromkeys(unknown)][:6]
        listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        return Unplaced(f"I could not place {'the word' if len(words) == 1 else 'the words'} {listed} in the HR data")

    entity = _entity(model, said, groups)
    if isinstance(entity, Unplaced):
        return entity
    plan = Plan(entity=entity, filters=list(filters.values()), show_query=show_query)
    if rng is not None:
        if entity.time is None:
            if not rng_is_now:
                return Unplaced(f"{entity.says} have no date to limit to {rng.words!r}")
        elif not (rng_is_now and entity.name == "hire"):
            plan.range = rng
    for group in groups:
        if isinstance(group, TimeGroup) and entity.time is None:
            return Unplaced(f"{entity.says} have no date to count per {group.unit}")

    # Group and superlative: "which department", "who", "per reason"; a comparison's subject.
    subject, count_groups = _subject(norm, said.dimwords)
    if not groups and (order is not None or limit is not None or (compare and subject is not None)):
        if said.dimwords:
            groups = [subject or said.dimwords[0]]
        elif said.person and (entity.name != "employee" or said.number is not None):
            groups = [PERSON_GROUP]
    plan.groups = groups
    if order is not None and groups:
        plan.order, plan.limit, plan.exact = order, limit or 1, limit is not None
    if compare:
        plan.compare = compare
        if said.number is not None and not (subject is not None and agg in ("avg", "sum", "min", "max")):
            plan.compare_on = "number"
        elif subject is not None:
            plan.compare_on, plan.count_groups = "per_group", count_groups
            if subject not in groups:  # "departments with more than 5 employees per status": departments first
                plan.groups = groups = [subject, *groups][:2]
        else:
            plan.compare_on = "per_person"

    failed = _measure(plan, model, said, agg, order, _head(norm, {p: k for p, k, _ in reversed(_phrases(model))}),
                      frequency)
    if failed is not None:
        return failed
    if plan.compare_on == "per_person" and entity.person is None:
        return Unplaced(f"{entity.says} are not counted per person")
    if order is not None and not groups and said.number is None:
        return Unplaced(f"I could not tell what '{'most' if order == 'max' else 'least'}' ranks; "
                        "say which department or who")
    return plan


def _entity(model: Model, said: _Said, groups: list[Group]) -> Entity | Unplaced:
    """What is counted: the entity of the nouns and events said, else of the filters' and groupings' tables."""
    candidates = list(dict.fromkeys(said.nouns + said.events))
    if not candidates:
        for dim in [f.dimension for f in said.filters.values()] + said.dimwords + [
                g for g in groups if isinstance(g, Dimension)]:
            ent = model.entity_of_table(dim.table)
            if ent is not None and ent.name != "employee" and ent not in candidates:
                candidates.append(ent)
    if len(candidates) > 1:
        return Unplaced(f"the question mixes {' and '.join(c.says for c in candidates)}, which I cannot count "
                        "in one number")
    if candidates:
        return candidates[0]
    employee = model.entities.get("employee")
    return employee if employee is not None else Unplaced("the model has no entity to count")


def _measure(plan: Plan, model: Model, said: _Said, agg: str | None, order: str | None, head: str | None,
             frequency: bool) -> Unplaced | None:
    """What each row or group computes: a count of rows or of people, or a salary aggregate."""
    entity, number = plan.entity, said.number
    if number is not None:
        plan.count, plan.number = "number", number.name
        if plan.compare_on == "number":
            plan.count, plan.agg = ("people" if entity.name != "employee" else "rows"), "count"
            if agg is not None and agg != "count":
                plan.count, plan.agg = "number", agg
        elif plan.compare_on == "per_group":
            plan.agg = agg or "avg"
        elif PERSON_GROUP in plan.groups:
            plan.agg = "max"  # one salary per person: rank people by it
            if order is None:
                return Unplaced(f"I can list {number.name} per person only as a top list (say highest or lowest)")
        elif agg is not None:
            plan.agg = agg
        elif order is not None and not plan.groups:
            plan.agg = order
        else:
            plan.agg = "avg"
        if order is not None and not plan.groups:
            plan.order = None
        return None
    if agg == "avg":
        listed = " or ".join(sorted(model.numbers)) or "a number"
        return Unplaced(f"I can take an average of {listed} only, not of a count")
    # A total of something counted ("total absences") is its count.
    if plan.compare_on == "per_person":
        plan.count = "people"
    elif entity.name in ("employee", "hire") or PERSON_GROUP in plan.groups or frequency:
        plan.count = "rows"
    elif head is not None:
        plan.count = head
    elif said.nouns or said.count_noun:
        plan.count = "rows"
    elif said.person or (said.events and not plan.groups):
        plan.count = "people"  # "employees were absent", "were absent": the people it happened to
    else:
        plan.count = "rows"
    if plan.count == "people" and entity.person is None:
        plan.count = "rows"
    return None


def _known_codes(dim: Dimension, names: Names) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {code: list(ns) for code, ns in dim.names.items()}
    if dim.label:
        for code, ns in names.of(dim).items():
            out.setdefault(code, [])
            out[code] += [n for n in ns if n not in out[code]]
    return out


def _names_in(run: list[str], model: Model, names: Names, filters: dict[str, Filter]) -> list[str] | Choice:
    """Take names of labelled dimensions (departments) out of a run of words; the words left."""
    labelled = [d for d in model.dimensions.values() if d.label or d.names]
    if not labelled or not [w for w in run if w not in FILLER]:
        return run
    best: tuple[float, int, int, Dimension, list[str]] | None = None  # score, start, end, dim, codes
    for dim in labelled:
        chosen = filters[dim.name].code if dim.name in filters else None
        known = _known_codes(dim, names)
        for size in range(min(5, len(run)), 0, -1):
            for start in range(0, len(run) - size + 1):
                span = run[start:start + size]
                if span[0] in FILLER and len(span) > 1 and span[0] not in ("it", "hr"):
                    continue
                said = " ".join(span)
                if all(w in FILLER for w in span) and said not in ("it", "hr"):
                    continue
                exact, partial = _match(said, span, known)
                if chosen is not None and chosen not in exact + partial:
                    continue  # a second name of a dimension already decided: left for the caller to report
                if exact:
                    score = 100.0 + size
                    codes = exact
                elif partial:
                    score = 50.0 + size
                    codes = partial
                else:
                    continue
                if best is None or score > best[0]:
                    best = (score, start, start + size, dim, codes)
    if best is None:
        return run
    _, start, end, dim, codes = best
    said = " ".join(run[start:end])
    if dim.name in filters:  # the name the user already chose a value for ("operations" -> D042)
        codes = [filters[dim.name].code]
    visible = set(names.of(dim)) if dim.label else set(codes)
    if len(codes) > 1:
        narrowed = [c for c in codes if c in visible]
        if len(narrowed) == 1:
            codes = narrowed
        else:
            known = _known_codes(dim, names)
            return Choice(dim.name, said, [(c, known[c][0] if known[c] else c) for c in sorted(codes)])
    known = _known_codes(dim, names)
    code = codes[0]
    if dim.name not in filters:
        filters[dim.name] = Filter(dim, code, f"{known[code][0] if known.get(code) else code} ({code})")
    left = _names_in(run[:start], model, names, filters)
    if isinstance(left, Choice):
        return left
    right = _names_in(run[end:], model, names, filters)
    if isinstance(right, Choice):
        return right
    return [*left, *right]


def _match(said: str, span: list[str], known: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """(codes whose name is `said`, allowing typos; codes with every word of `said` in a name)."""
    low = utils.default_process(said)
    exact: list[str] = []
    partial: list[str] = []
    for code, ns in known.items():
        if low == code.lower():
            return [code], []
        for name in ns:
            name_low = utils.default_process(name)
            if not name_low:
                continue
            if low == name_low or (len(low) >= 5 and fuzz.ratio(low, name_low) >= 88):
                exact.append(code)
                break
            words = name_low.split()
            content = [w for w in span if w not in FILLER]
            if content and len(content) == len(span) and all(
                    any(w == n or (len(w) >= 5 and fuzz.ratio(w, n) >= 85) for n in words) for w in content):
                partial.append(code)
                break
    return list(dict.fromkeys(exact)), list(dict.fromkeys(partial))
