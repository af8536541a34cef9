"""The offline question compiler: an everyday HR question -> a plan over the semantic model.

It reads the question as parts, each taken out of the text once it is placed:
the time ("in October", "last month", "this year", "in 2023", "right now"), a comparison
("more than 3", "at least 2", "over 90000"), a top N, a grouping ("per department", "by
reason"), a superlative ("highest", "most", "fewest"), an aggregation ("average",
"total"), then the model's own phrases, longest first: dimension values and their
synonyms ("no-shows" -> reason NO_SHOW, "unapproved" -> approval 0), entity nouns that
count rows ("absences", "remote days"), events that say something happened ("absent",
"from home"), person words ("employees", "who"), numbers ("salary"), dimension words
("department"); what is left may be a name ("sales", "operatons and logistics"), matched
against the dimension's names. Any other word that is not grammar is reported — one
sentence naming it — instead of guessed. The plan is turned into SQL by sqlbuild.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from rapidfuzz import fuzz, utils

from sql_explorer.model import Dimension, Entity, Model
from sql_explorer.timeframe import Range, find_now, find_range

# Grammar: words that carry no meaning of their own here.
FILLER = frozenset("""
how many much what whats which who whom whose was were is are be been being am the a an of in on at for from to
during did do does done doing there here we our us i me my you your they their them any all number count counted
counting show shows tell give please list get got have has had having that this those these it its so far ever
logged recorded record took take taken taking made make makes work working works worked with and or by per each
as than then also just only overall different distinct unique separate individual many altogether in total
combined currently right now altogether exactly approximately roughly about around status hey can could would
will shall should know find out see look up check company whole entire across under within inside amongst among
went go goes gone going came come started start starts starting began begin begun spend spent spending
cost costs one ones
""".split())
COUNT_NOUNS = ("times", "occasions", "instances", "occurrences", "records", "cases", "days", "entries", "rows")
AGGREGATIONS = [  # (phrase, function), longest first
    ("on average", "avg"), ("average", "avg"), ("mean", "avg"), ("avg", "avg"), ("typical", "avg"),
    ("total", "sum"), ("sum of", "sum"), ("sum", "sum"), ("spend on", "sum"), ("spend", "sum"), ("spent on", "sum"),
    ("cost of", "sum"), ("cost", "sum"), ("costs", "sum"), ("payroll", "sum"),
]
SUPERLATIVES = [
    ("best paid", "max"), ("highest paid", "max"), ("top earner", "max"), ("worst paid", "min"), ("lowest paid", "min"),
    ("most common", "max"), ("least common", "min"), ("most frequent", "max"), ("least frequent", "min"),
    ("the most", "max"), ("highest", "max"), ("most", "max"), ("maximum", "max"), ("max", "max"), ("largest", "max"),
    ("biggest", "max"), ("greatest", "max"), ("the least", "min"), ("lowest", "min"), ("least", "min"),
    ("fewest", "min"), ("minimum", "min"), ("min", "min"), ("smallest", "min"),
]
_NUM = r"(\d[\d,]*(?:\.\d+)?)(k)?"
COMPARISONS = [
    (rf"\b(?:more|greater|higher|bigger|larger) than {_NUM}", ">"), (rf"\b(?:over|above|exceeding) {_NUM}", ">"),
    (rf"\bat least {_NUM}", ">="), (rf"\b{_NUM} or more\b", ">="), (rf"\b(?:fewer|less|lower|smaller) than {_NUM}", "<"),
    (rf"\b(?:under|below) {_NUM}", "<"), (rf"\bat most {_NUM}", "<="), (rf"\b{_NUM} or (?:fewer|less)\b", "<="),
    (rf"\bexactly {_NUM}", "="),
]
GROUP_MARKERS = r"(?:per|by|for each|for every|each|broken down by|split by|grouped by|across|in each|for all)"
SHOW_QUERY = re.compile(r"\b(?:and )?(?:show|give|tell|include)(?: me)? (?:the |your )?(?:sql|query|sql query)\b"
                        r"(?: (?:you )?used)?|\bwith (?:the )?(?:sql|query)\b")
PERSON_GROUP = "employee"  # a grouping by person (who...)


@dataclass
class Filter:
    dimension: Dimension
    code: str
    said: str


@dataclass
class Plan:
    """What to compute: the compiler's result, turned into SQL by sqlbuild."""

    entity: Entity
    count: str = "rows"  # rows | people | number
    number: str | None = None  # numeric column name when count == "number"
    agg: str = "count"  # count | avg | sum | min | max
    filters: list[Filter] = field(default_factory=list)
    range: Range | None = None
    group: Dimension | str | None = None  # a dimension, PERSON_GROUP, or None
    order: str | None = None  # "max" | "min": keep the top `limit` groups
    limit: int | None = None
    compare: tuple[str, float] | None = None  # on the number (salary > 90000) or per-person count (> 3 absences)
    compare_on: str | None = None  # "number" | "per_person"
    show_query: bool = False
    list_people: bool = False


@dataclass
class Choice:
    """A name fits several values: which did the user mean?"""

    dimension: str
    said: str
    options: list[tuple[str, str]]  # (code, name)


@dataclass
class Unplaced:
    """The question has a part the model does not cover: the sentence says which."""

    reason: str


@dataclass
class Names:
    """A labelled dimension's codes and names: the model's own plus the data's spellings in scope."""

    lookup: Callable[[Dimension], dict[str, list[str]]]
    cache: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def of(self, dim: Dimension) -> dict[str, list[str]]:
        if dim.name not in self.cache:
            self.cache[dim.name] = self.lookup(dim)
        return self.cache[dim.name]


def normalise(question: str) -> str:
    text = question.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"\b(\w+)n't\b", r"\1 not", text).replace("can not", "cannot")
    text = re.sub(r"\b(what|who|which|how|where|that|there|it)'s\b", r"\1 is", text)
    text = re.sub(r"'s\b", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 100,000
    text = re.sub(r"[$\u20ac\u00a3]", "", text)
    text = re.sub(r"[?!,;:\"()]", " ", text)
    text = re.sub(r"(?<!\w)\.|\.(?!\w)", " ", text)
    return " ".join(text.split())


class _Text:
    """The question as text with placed parts cut out (replaced by a marker that splits runs)."""

    def __init__(self, text: str) -> None:
        self.text = f" {text} "

    def take(self, phrase: str) -> bool:
        pattern = rf"(?<=\s){re.escape(phrase)}(?=\s)"
        if re.search(pattern, self.text):
            self.text = re.sub(pattern, " | ", self.text, count=1)
            return True
        return False

    def take_regex(self, pattern: str) -> re.Match[str] | None:
        m = re.search(pattern, self.text)
        if m:
            self.text = self.text[:m.start()] + " | " + self.text[m.end():]
        return m

    def has(self, phrase: str) -> bool:
        return re.search(rf"(?<=\s){re.escape(phrase)}(?=\s)", self.text) is not None

    def runs(self) -> list[list[str]]:
        return [run.split() for run in self.text.split("|") if run.split()]


def _number(text: str, k: str | None) -> float:
    value = float(text.replace(",", ""))
    return value * 1000 if k else value


def compile_question(model: Model, question: str, today: date, names: Names,
                     choices: Mapping[str, str] | None = None) -> Plan | Choice | Unplaced:
    """The plan for `question`, a Choice when a name fits several values, or Unplaced."""
    text = _Text(normalise(question))
    show_query = text.take_regex(SHOW_QUERY.pattern) is not None
    compare = None
    for pattern, op in COMPARISONS:
        m = text.take_regex(pattern)
        if m:
            compare = (op, _number(m.group(1), m.group(2)))
            break
    limit = None
    m = text.take_regex(r"\btop (\d{1,3})\b") or text.take_regex(r"\b(\d{1,2}) (?:highest|lowest|most|fewest|biggest)\b")
    if m:
        limit = int(m.group(1))
    now = find_now(text.text)
    if now:
        text.take(now)
    rng = find_range(text.text, today)
    if rng is not None:
        text.take(rng.said.strip())
    if now and rng is None:
        rng = Range(today, today + timedelta(days=1), now, now)
        rng_is_now = True
    else:
        rng_is_now = False

    # Grouping: "per department", "by reason", "for each team", "per employee".
    group: Dimension | str | None = None
    group_words = [(w, d) for d in model.dimensions.values() for w in d.words]
    group_words += [(w, PERSON_GROUP) for w in ("employee", "employees", "person", "people", "staff member")]
    for word, dim in sorted(group_words, key=lambda x: -len(x[0])):
        if text.take_regex(rf"(?<=\s){GROUP_MARKERS} (?:the )?{re.escape(word)}(?=\s)"):
            group = dim
            break
    order = None
    for phrase, direction in SUPERLATIVES:
        if text.take(phrase):
            order = direction
            break
    if limit is not None and order is None:
        order = "max"
    agg = None
    for phrase, fn in AGGREGATIONS:
        if text.take(phrase):
            agg = fn
            break

    # The model's phrases, longest first, so "sick leave" is a reason before "leave" is an event
    # and "approved leave" is leave before "approved" is an approval.
    phrases: list[tuple[str, str, object]] = []
    for dim in model.dimensions.values():
        for code, synonyms in dim.values.items():
            phrases += [(s, "value", (dim, code)) for s in synonyms]
    for ent in model.entities.values():
        phrases += [(n, "noun", ent) for n in ent.nouns if ent.name != "employee"]
        phrases += [(e, "event", ent) for e in ent.events]
    employee = model.entities.get("employee")
    if employee is not None:
        phrases += [(n, "person", employee) for n in employee.nouns]
    for num in model.numbers.values():
        phrases += [(w, "number", num) for w in num.words]
    for dim in model.dimensions.values():
        phrases += [(w, "dimword", dim) for w in dim.words]
    phrases += [(w, "countnoun", None) for w in COUNT_NOUNS]
    filters: dict[str, Filter] = {}
    nouns: list[Entity] = []
    events: list[Entity] = []
    person = False
    number = None
    dimwords: list[Dimension] = []
    count_noun = False
    for phrase, kind, what in sorted(phrases, key=lambda p: (-len(p[0].split()), -len(p[0]))):
        while text.take(phrase):
            if kind == "value":
                dim, code = what  # type: ignore[misc]
                filters.setdefault(dim.name, Filter(dim, code, phrase))
            elif kind == "noun":
                nouns.append(what)  # type: ignore[arg-type]
            elif kind == "event":
                events.append(what)  # type: ignore[arg-type]
            elif kind == "person":
                person = True
            elif kind == "number":
                number = what
            elif kind == "dimword":
                dimwords.append(what)  # type: ignore[arg-type]
            elif kind == "countnoun":
                count_noun = True

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
        said = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        return Unplaced(f"I could not place {'the word' if len(words) == 1 else 'the words'} {said} in the HR data")

    # What is counted.
    candidates = list(dict.fromkeys(nouns + events))
    if not candidates:
        for dim in [*filters.values()]:
            ent = model.entity_of_table(dim.dimension.table)
            if ent is not None and ent.name != "employee":
                candidates.append(ent)
        for dim in dimwords + ([group] if isinstance(group, Dimension) else []):
            ent = model.entity_of_table(dim.table)
            if ent is not None and ent.name != "employee" and ent not in candidates:
                candidates.append(ent)
    candidates = list(dict.fromkeys(candidates))
    if len(candidates) > 1:
        said = " and ".join(c.says for c in candidates)
        return Unplaced(f"the question mixes {said}, which I cannot count in one number")
    if candidates:
        entity = candidates[0]
    elif employee is not None:
        entity = employee
    else:
        return Unplaced("the model has no entity to count")
    plan = Plan(entity=entity, filters=list(filters.values()), show_query=show_query)

    # The time.
    if rng is not None:
        if entity.time is None:
            if not rng_is_now:
                return Unplaced(f"{entity.says} have no date to limit to {rng.words!r}")
        elif not (rng_is_now and entity.name == "hire"):
            plan.range = rng

    # Group and superlative: "which department", "who", "per reason".
    if group is None and (order is not None or limit is not None):
        leftover = [d for d in dimwords]
        if leftover:
            group = leftover[0]
        elif person and entity.name != "employee" or (number is not None and person):
            group = PERSON_GROUP
    if group is None and person and order is not None and number is not None:
        group = PERSON_GROUP
    if group is None and order is not None and number is None and entity.name != "employee" and "who" in question.lower():
        group = PERSON_GROUP
    plan.group = group
    if order is not None and group is not None:
        plan.order, plan.limit = order, limit or 1

    # The measure.
    if number is not None:
        plan.count, plan.number = "number", number.name
        if compare is not None:
            plan.compare, plan.compare_on = compare, "number"
            plan.count, plan.agg = "people" if entity.name != "employee" else "rows", "count"
            if agg is not None and agg != "count":
                plan.count, plan.agg = "number", agg
        elif group == PERSON_GROUP:
            plan.agg = "max"  # one salary per person: rank people by it
            if order is None:
                return Unplaced("I can list salaries per person only as a top list (say highest or lowest)")
        elif agg is not None:
            plan.agg = agg
        elif order is not None and group is None:
            plan.agg = order
        elif order is not None:
            plan.agg = "avg"
        else:
            plan.agg = "avg"
        if order is not None and group is None and compare is None:
            plan.order = None
    else:
        if agg in ("avg", "sum"):
            return Unplaced(f"I can take an {'average' if agg == 'avg' else 'total'} of salary only")
        if compare is not None:
            plan.compare, plan.compare_on = compare, "per_person"
            plan.count = "people"
        elif entity.name in ("employee", "hire"):
            plan.count = "rows"
        elif (nouns or count_noun) and not (group == PERSON_GROUP and person and not nouns):
            plan.count = "rows"
        elif person or events:
            plan.count = "people"  # "employees were absent", "were absent": the people it happened to
        else:
            plan.count = "rows"
        if group == PERSON_GROUP and plan.count == "people":
            plan.count = "rows"  # per person, count what each did
    if plan.compare is not None and plan.compare_on == "per_person" and entity.person is None:
        return Unplaced(f"{entity.says} are not counted per person")
    if order is not None and group is None and number is None:
        return Unplaced(f"I could not tell what '{_said_order(order)}' ranks; say which department or who")
    return plan


def _said_order(order: str) -> str:
    return "most" if order == "max" else "least"


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
