"""The thing a clause is about: "can we get pop tarts" -> "pop tarts", "it lacks baguette at home" -> "baguette".

People name an item inside a clause of their own ("ugh out of baby food pouches again, can you add it",
"I shall buy lingonberry jam on Monday, put it on the shopping list"). Lists of the words around an
item never end (every community has its own "we've run short of" and "it lacks"), so this reads the
clause's grammar instead, shallowly: each word is a closed-class word (pronoun, auxiliary, determiner,
preposition, conjunction, adverb, interjection), a verb, or part of a noun phrase (a noun, an adjective,
or a word no dictionary knows: "boerewors", "unga", "filmjölk" are things). The thing is the first noun
phrase after the clause's verb ("we get | pop tarts"), or after "out of" / "short of"; with no verb
before any noun phrase, its subject ("hilsa fish | has finished"). A noun phrase ends at a preposition or
a word of time, so "coffee filters on my lunch break" is "coffee filters".

Which words are verbs comes from LemmInflect's English lemma table (inside its wheel: 70,000 word forms
with their parts of speech). A word the table knows only as a verb ("lacks", "forgetting", "bought") is a
verb; one that is also a noun ("need", "keep", "run") is a verb right after its subject or an auxiliary
("we need", "have run"). A participle before a noun is an adjective ("shredded cheese", "smoked salmon").
Without the wheel every unknown word is a noun and only the closed classes below are read.
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib import resources

# Who does the verb that follows ("we need", "mi need"); "me", "us", "them" never do ("add for me fish sauce").
NOMINATIVE = frozenset({"i", "we", "you", "u", "ya", "ye", "he", "she", "they", "it", "mi", "y'all"})
# Where a clause of its own begins, with its own subject after: "..., I'll grab it after I get my double-double".
_SUBORDINATORS = frozenset({"after", "before", "when", "while", "because", "cause", "cos", "if", "until", "till",
                            "since", "once", "unless", "whenever"})
# A pronoun and its verb in one ("we're", "there's"): a new clause starts there, with its own subject.
SUBJECT_CONTRACTIONS = frozenset({"there's", "theres", "it's", "we're", "i'm", "im", "we've", "weve", "i've", "ive",
                                  "they're", "you're", "we'll", "i'll", "we'd", "i'd"})
# Verbs that take another verb's "-ing" ("keep forgetting", "stop buying"); after others an "-ing" word
# describes a thing ("need sparkling water").
_ING_TAKERS = frozenset({"keep", "keeps", "kept", "stop", "stopped", "start", "started", "finish", "finished", "avoid",
                         "enjoy", "like", "love", "hate", "mind", "try", "tried", "quit", "forget", "forgot", "remember",
                         "remembered", "go", "went", "been", "am", "is", "are", "was", "were"})
SUBJECTS = frozenset({"itself", "myself", "ourselves", "yourself", "themselves", "himself", "herself","i", "we", "you", "u", "ya", "ye", "he", "she", "they", "it", "me", "us", "them", "mi", "one",
                      "somebody", "someone", "everyone", "everybody", "nobody"})
# (with the contractions people write, with or without the apostrophe)
AUXILIARIES = frozenset({"there's", "theres", "it's", "its", "we're", "i'm", "im", "we've", "weve", "i've", "ive",
                         "they're", "you're", "we'll", "i'll", "don't", "dont", "didn't", "didnt", "can't", "cant",
                         "won't", "wont", "haven't", "havent", "hasn't", "isn't", "aren't", "doesn't", "we'd", "i'd",
                         "can", "cn", "could", "will", "would", "shall", "should", "may", "might", "must", "do", "does",
                         "did", "is", "are", "am", "was", "were", "be", "been", "being", "have", "has", "had", "ve",
                         "'ve", "'s", "'re", "'m", "'ll", "'d", "gonna", "wanna", "gotta", "let", "lets", "let's"})
DETERMINERS = frozenset({"the", "a", "an", "some", "any", "my", "our", "your", "ur", "his", "her", "their", "this",
                         "that", "these", "those", "no", "all", "another", "every", "each", "di", "its", "more"})
PREPOSITIONS = frozenset({"of", "on", "in", "at", "for", "to", "from", "with", "by", "after", "before", "during",
                          "into", "onto", "off", "about", "since", "until", "till", "without", "inside", "out",
                          "outta", "pon", "via", "like", "than", "as"})
CONJUNCTIONS = frozenset({"and", "or", "but", "so", "because", "cause", "cos", "coz", "then", "when", "while", "if",
                          "whenever", "where", "which", "who", "what", "that's", "-", "–", "—"})
INTERJECTIONS = frozenset({"fyi", "btw", "ps", "nb", "tbh", "ngl", "imo", "omg", "idk", "fr", "rn", "ugh", "ag", "ach", "och", "eish", "oh", "ohh", "oops", "whoops", "hmm", "lol", "ok", "okay",
                           "well", "hey", "hi", "yo", "um", "uh", "ah", "argh", "damn", "dang", "sheesh", "ugh,",
                           "please", "pls", "plz", "kindly", "yeah", "yes", "no,", "right", "alright", "anyway"})
ADVERBS = frozenset({"again", "already", "now", "just", "still", "also", "too", "really", "totally", "completely",
                     "finally", "soon", "later", "yet", "ever", "never", "not", "n't", "almost", "nearly", "quite",
                     "very", "so", "always", "often", "here", "there", "home", "away", "up", "down", "back", "asap",
                     "once", "twice", "instead", "either", "though", "maybe", "probably", "definitely"})
TIME_WORDS = frozenset({"today", "tonight", "tomorrow", "tmrw", "yesterday", "monday", "tuesday", "wednesday",
                        "thursday", "friday", "saturday", "sunday"})
# Words of time that also end names ("date night", "sports day"): of time only where no noun comes before.
_TIME_NOUNS = frozenset({"morning", "afternoon", "evening", "night", "week", "weekend", "time", "times", "day", "days",
                         "month", "year"})
_HAVING = frozenset({"has", "have", "had", "got", "'ve"})
_PUNCTUATION = frozenset({",", ";", ":", "!", "?", "."})
_JOINING = frozenset({"of", "n", "'n'", "&"})
_AMOUNTS = frozenset({"heaps", "loads", "plenty", "lots", "enough", "tons", "masses", "stacks", "a lot", "a ton"})
_MEASURES = frozenset({"dozen", "couple", "few", "pair", "half", "bunch", "bag", "box", "pack", "packet", "bottle", "jar",
                       "tin", "can", "loaf", "carton", "tub", "head", "bar", "case", "roll", "kilo", "pound", "litre",
                       "liter", "gallon", "block", "slab", "crate", "punnet", "sack"})
_LISTING = frozenset({",", "and", "or", "&", "n", "plus"})
# Before "of" / "on" these say how much is left, not what: "we've run short of unga", "low on rice".
_AMOUNT_BEFORE = frozenset({"short", "low", "full", "lots", "plenty", "outta"})
_AMOUNT_AFTER = frozenset({"of", "on"})
# Said after the thing, of the thing: "no bread left", "the milk is gone".
_STATE_AFTER = frozenset({"left", "gone", "finished", "done", "over", "missing", "needed", "required", "remaining"})

_CLOSED = _PUNCTUATION | SUBJECTS | AUXILIARIES | DETERMINERS | PREPOSITIONS | CONJUNCTIONS | INTERJECTIONS | ADVERBS | TIME_WORDS
# The words that make a value read as a clause, not a thing.
_CLAUSE_MARKS = SUBJECTS | AUXILIARIES | INTERJECTIONS
# Unions read once per word below, made once here.
_CLOSED_BUT_DETERMINERS = _CLOSED - DETERMINERS
_BEFORE_A_VERB = NOMINATIVE | AUXILIARIES
_NEW_SUBJECT = NOMINATIVE | SUBJECT_CONTRACTIONS
# Words, and the punctuation that ends a phrase: "rent, I can't remember" is about rent.
_WORD = re.compile(r"[\w'&-]+|[-–—,;:!?.]", re.UNICODE)
_LEMMA_TABLE = "lemma_lu.csv.gz"


@lru_cache(maxsize=1)
def _verb_forms() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The word forms the lemma table knows only as verbs or auxiliaries ("lacks", "forgetting", "bought"),
    and every form it knows as a verb. (Read from the table itself: LemmInflect's own lookup also loads its
    models for unknown words, 0.7 s more.)"""
    try:
        path = resources.files("lemminflect") / "resources" / _LEMMA_TABLE
        kinds: dict[str, set[str]] = {}
        finite: set[str] = set()
        with gzip.open(path, "rt", encoding="utf-8") as table:  # type: ignore[call-overload]
            for line in table:
                word, kind, lemmas = line.split(",", 2)
                kinds.setdefault(word, set()).add(kind)
                # a verb's past or its "-s" form (no lemma of its own is the word): "drank", "bakes", not "bake"
                if kind == "verb" and word not in lemmas.rstrip("\n").split("/") and not word.endswith("ing"):
                    finite.add(word)
    except (ModuleNotFoundError, OSError, ValueError):
        return frozenset(), frozenset(), frozenset()

    def plural_noun(word: str) -> bool:
        # The table misses some plurals as nouns ("bars" only as a verb): a noun's plural is a noun.
        return word.endswith("s") and any("noun" in kinds.get(word[:-k], ()) for k in (1, 2))

    only = frozenset(w for w, k in kinds.items() if k <= {"verb", "aux"} and not plural_noun(w))
    return only, frozenset(w for w, k in kinds.items() if "verb" in k), frozenset(finite)


def load() -> None:
    """Read the lemma table now (a planning process does, before its first message)."""
    _verb_forms()


def _verb_only() -> frozenset[str]:
    return _verb_forms()[0]


def _can_be_verb() -> frozenset[str]:
    return _verb_forms()[1]


# Each word's part: C closed, V verb, N part of a noun phrase.
def _tags(words: list[str]) -> list[str]:
    low = [w.casefold() for w in words]
    tags: list[str] = []
    for n, w in enumerate(low):
        before = low[n - 1] if n else ""
        after = low[n + 1] if n + 1 < len(low) else ""
        if w in _AMOUNT_BEFORE and after in _AMOUNT_AFTER:
            tags.append("C")
        elif w in _CLOSED and not (w in ADVERBS and after and after not in _CLOSED and before in DETERMINERS):
            tags.append("C")
        elif w in _TIME_NOUNS and not (tags and tags[-1] == "N"):
            tags.append("C")
        elif w in _STATE_AFTER and tags and tags[-1] == "N" and (not after or after in _CLOSED_BUT_DETERMINERS):
            tags.append("C")  # "no bread left", "the milk is gone": the state, after the thing
        elif (w.endswith("s") and tags and tags[-1] == "N" and (not after or after in _CLOSED_BUT_DETERMINERS)
              and w not in _STATE_AFTER):
            tags.append("N")  # the table knows some plurals only as verbs: "granola bars" ("mum wants milk" goes on)
        elif w in _verb_only() or (w in _can_be_verb() and (
                before in NOMINATIVE
                # after "have" a verb is its participle: "have spare batteries" has batteries
                or (before in AUXILIARIES and (before not in _HAVING or w.endswith(("ed", "en"))))
                # "to" before a verb and what it acts on: "be able to put almond butter"
                or (before == "to" and after and (after in DETERMINERS or after not in _CLOSED)))):
            # a participle before a noun describes it: "shredded cheese", "need smoked salmon", "baking soda"
            # (not after its subject, nor "-ing" after a verb: "I keep forgetting paper plates")
            participle = (w.endswith(("ed", "en")) or (w.endswith("ing") and before not in _ING_TAKERS)) \
                and before not in _BEFORE_A_VERB
            if participle and after and after not in _CLOSED:
                tags.append("N")
            else:
                tags.append("V")
        else:
            tags.append("N")
    return tags


def reads_as_clause(text: str) -> bool:
    """The value holds a subject, an auxiliary or an interjection: a clause, not a thing."""
    # (the closed classes only: the lemma table's verbs alone would take "granola bars" for a clause)
    words = _WORD.findall(text)
    return len(words) >= 2 and any(w.casefold() in _CLAUSE_MARKS for w in words)


def _before_phrase(words: list[str], at: int) -> int:
    """Where the word before a phrase starting at `at` (and before its determiners) is; -1 when none."""
    n = at - 1
    while n >= 0 and words[n].casefold() in DETERMINERS:
        n -= 1
    return n


def _led_by_verb(words: list[str], tags: list[str], at: int) -> bool:
    n = _before_phrase(words, at)
    return n >= 0 and (tags[n] == "V" or words[n].casefold() in _HAVING)


def things_of(text: str) -> list[str]:
    """The noun phrases the clause is about, in the writer's own words: the first after its verb, and those
    listed with it ("we're low on lettuce and tomatoes"); empty when it has none."""
    found = list(_WORD.finditer(text))
    words = [m.group() for m in found]
    tags = _tags(words)
    phrases: list[tuple[int, int]] = []  # word ranges [start, end)
    start = None
    for n, tag in enumerate(tags + ["C"]):
        if tag == "N" and start is None:
            start = n
        elif tag != "N" and start is not None:
            # "cream of tartar", "mac n cheese": a noun phrase goes on over "of" / "n" between nouns
            joined = n + 1 < len(tags) and tags[n + 1] == "N" and words[n].casefold() in _JOINING
            if not joined:
                phrases.append((start, n))
                start = None
    if not phrases:
        return []
    # the clause's verb: the first one, or "has" / "have" before what is had ("my son has soccer practice")
    verb_at = next((n for n, t in enumerate(tags) if t == "V" or (
        words[n].casefold() in _HAVING and n + 1 < len(tags) and (tags[n + 1] == "N" or words[n + 1].casefold()
                                                                   in DETERMINERS))), None)
    def led_by(p: tuple[int, int]) -> str:
        n = _before_phrase(words, p[0])
        return words[n].casefold() if n >= 0 else ""

    # (never a phrase after a preposition, where a place or a time is: "at the supermarket now - what do I need")
    after_verb = [i for i, p in enumerate(phrases)
                  if verb_at is not None and p[0] > verb_at and led_by(p) not in PREPOSITIONS]
    after_of = [i for i, p in enumerate(phrases) if p[0] >= 2 and words[p[0] - 1].casefold() in _AMOUNT_AFTER
                and words[p[0] - 2].casefold() in {"out", "outta", *_AMOUNT_BEFORE}]
    # what a verb acts on comes right after it ("be able to put | hummus", not "be | able")
    objects = [i for i in after_verb if _led_by_verb(words, tags, phrases[i][0])]
    # with no verb before any phrase, its subject, where a verb or a state follows ("hilsa fish has finished",
    # "there's no bread left"); a phrase with neither is no clause's ("Nana here. What ...")
    end = phrases[0][1]
    follows = words[end].casefold() if end < len(words) else ""
    subject = [0] if led_by(phrases[0]) not in PREPOSITIONS and (
        (end < len(tags) and tags[end] == "V") or (follows in AUXILIARIES and follows not in SUBJECT_CONTRACTIONS)
        or follows in _STATE_AFTER) else []
    # a thing said first, and a clause of its own about it after: "bananas we've got heaps", "brinjal I
    # bought yesterday itself"
    # (where the clause after has a thing of its own, the first word was whom it is said to: "bro we literally
    # have no Milo", "y'all we're plumb out of Duke's mayo")
    own = [i for i in after_of or objects if i and text[found[phrases[i][0]].start():found[phrases[i][1] - 1].end()]
           .casefold() not in _AMOUNTS]
    told = [0] if phrases[0][0] == 0 and (follows in NOMINATIVE or follows in SUBJECT_CONTRACTIONS) and not own else []
    chosen_at = told or after_of or objects or after_verb or subject
    if not chosen_at:
        return []
    first = chosen_at[0]
    # (a thing inside a clause that hangs off the main one is not what the main one is about)
    hangs = next((k for k in range(1, len(words) - 1) if words[k].casefold() in _SUBORDINATORS
                  and words[k + 1].casefold() in _NEW_SUBJECT), None)
    if hangs is not None and phrases[first][0] > hangs:
        return []
    chosen = [phrases[first]]
    # the things listed with it: "lettuce and tomatoes", "mince, pasta and cheddar"
    for p in phrases[first + 1:]:
        between = [w.casefold() for w in words[chosen[-1][1]:p[0]]]
        if not between or any(w not in _LISTING for w in between):
            break
        chosen.append(p)
    # "a dozen eggs", "a bag of rice": the article of a measure is the quantity, said with the thing
    chosen = [(a - 1 if a and words[a - 1].casefold() in {"a", "an"} and words[a].casefold() in _MEASURES else a, b)
              for a, b in chosen]
    return [text[found[a].start():found[b - 1].end()] for a, b in chosen]


def thing_of(text: str) -> str | None:
    """The first of `things_of`, or None."""
    things = things_of(text)
    return things[0] if things else None


# Where a thing goes, comes from or is for, said after it with its own determiner: "Gouda | on the boodschappen",
# "rice | from the shop". A thing's own name may hold a preposition ("cream of tartar", "fish and chips",
# "chicken on the bone"), almost never one followed by "the" or "my".
_PLACING = frozenset({"on", "onto", "to", "in", "into", "from", "off", "at", "inside", "for"})
_PLACE_DETERMINERS = frozenset({"the", "my", "our", "your", "ur", "this", "that", "these", "those", "his", "her",
                                "their"})
# Prepositions that never end a name (unlike the particles "in", "on", "up", "out": "check in", "log on").
_NEVER_LAST = frozenset({"with", "of", "for", "to", "from", "at", "by", "about", "into", "onto", "via", "than",
                         "during", "without", "until", "till", "like", "inside"})
# A copula whose complement went with the place: "soccer practice was [moved to ...]".
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been"})
# Where things are kept: a value of these words alone names no thing.
_KEPT_IN = frozenset({"list", "lists", "groceries", "grocery", "shopping", "calendar", "diary", "agenda", "notes",
                      "todo", "to-do", "todos", "to-dos", "tasks"})


def placed_after(thing: str) -> str:
    """`thing` without where it goes said after it ("Gouda on the boodschappen" -> "Gouda")."""
    words = thing.split()
    for n in range(1, len(words) - 1):
        if words[n].casefold() in _PLACING and words[n + 1].casefold() in _PLACE_DETERMINERS:
            return " ".join(words[:n])
    return thing


def without_dangling(value: str, *, copula: bool = False) -> str:
    """`value` without a preposition left at its end once what followed it went ("beef with" -> "beef"), and
    with `copula` a copula too ("soccer practice was"). (Among a list's things, "fridge is" is a story's
    clause, read so by the whole message: it keeps its copula.)"""
    words = value.split()
    while len(words) > 1 and (words[-1].casefold() in _NEVER_LAST or (copula and words[-1].casefold() in _COPULAS)):
        words = words[:-1]
    return " ".join(words)


def names_nothing(value: str) -> bool:
    """`value` is only where things go or how they stand: prepositions, determiners, where things are kept
    and words of state ("inside", "the list", "finished"). (Other small words, "ugh", "we", "so", are left
    for the reading of the whole message, which takes them for a story's.)"""
    words = [w.casefold() for w in _WORD.findall(value) if w not in _PUNCTUATION]
    return bool(words) and all(w in PREPOSITIONS or w in DETERMINERS or w in _KEPT_IN or w in _STATE_AFTER
                               for w in words)


# A subject's verb that says how it was or what it did: "book club was fun", "the call went long".
_FINITE = frozenset({"is", "are", "was", "were", "'s", "has", "had", "went", "got", "ran", "took", "felt", "looked",
                     "seemed", "turned", "kept"})


def subject_verb(clause: str) -> str | None:
    """The verb after the noun phrase the clause opens with, when it opens so; its first word is then no
    command even where a function's examples open with it ("book club was fun last night": "was", "plan b
    worked", "call ran long"). Only up to the first mark: "note: the code is 12" opens with a label."""
    if not clause.strip()[:1].isalpha():
        return None  # ("/note locker code is 2819": a command's name)
    words = []
    for w in _WORD.findall(clause):
        if w in _PUNCTUATION:
            break
        words.append(w)
    tags = _tags(words)
    n = 0
    while n < len(words) and words[n].casefold() in DETERMINERS:
        n += 1
    start = n
    while n < len(words) and tags[n] == "N":
        n += 1
    if n == start or n >= len(words):
        return None
    verb = words[n].casefold()
    return verb if verb in _FINITE or (tags[n] == "V" and verb.endswith("ed")) else None


# Verbs of needing and wanting: a statement with one asks for the thing.
_NEEDING = frozenset({"need", "needs", "needed", "want", "wants", "wanted", "require", "requires", "like", "love",
                      "gotta", "use", "must", "should", "lack", "lacks"})
# Pasts not in -ed ("mum bought", "the kids ate").
_PASTS = frozenset({"bought", "got", "had", "took", "ate", "drank", "gave", "brought", "found", "made", "left", "sold",
                    "threw", "grabbed", "used", "finished"})
# Verbs said after a subject that make a piece a statement of its own: "we have enough", "the wean's had them".
_TOLD = _FINITE | frozenset({"have", "'ve", "do", "does", "did", "can", "will", "would", "could", "should", "must"})


def tells(piece: str) -> bool:
    """The piece opens as a statement, a subject and then its verb ("the twins drank the lot", "neighbour
    gave me a bunch", "we finished it", "I found in cupboard"): beside the things of a list, it is why, never
    a thing (a thing with a clause after it, "cookies we like", opens with the thing and stays)."""
    if re.search(r"[.!?;]\s+\S", piece):
        return False  # (a piece that runs into the next sentence holds more than a statement)
    words = [w for w in _WORD.findall(piece) if w not in _PUNCTUATION]
    if len(words) < 2 or any(w.casefold() in _NEEDING for w in words):
        return False  # (a need said so is a request: "we need the tahini", "she needs gluten free bread")
    tags = _tags(words)
    low = [w.casefold() for w in words]
    if low[0] in NOMINATIVE:
        n = 1
    else:
        n = 0
        while n < len(words) and low[n] in DETERMINERS:
            n += 1
        start = n
        while n < len(words) and tags[n] == "N":
            n += 1
        if n == start:
            return False
        if n >= len(words):
            # the subject's verb taken for a noun after it ("the children finished", "mum bought"): a past
            n -= 1
            return n > start and (low[n].endswith("ed") or low[n] in _PASTS) and low[n] not in _STATE_AFTER
        if low[n - 1].endswith("ed") and n - 1 > start and (low[n - 1] not in _STATE_AFTER or low[n] in DETERMINERS):
            return True  # "the children finished the carton", "the neighbours borrowed some"
    if n >= len(words):
        return False
    if low[0] in NOMINATIVE:
        return tags[n] == "V" or low[n] in _TOLD
    # after a thing, a verb in its past or "-s" form ("the twins drank", "mum says"), not one that names a
    # thing with the noun before it ("pasta bake", "cheese grater")
    # (a copula and a state say how the thing itself stands: "bread are bought", "crackers done")
    if low[n] in _COPULAS or low[n] == "'s" or (low[n] in _STATE_AFTER and not (
            n + 1 < len(low) and low[n + 1] in DETERMINERS)):
        return False  # (with an object it is what someone did: "the children finished the carton")
    return low[n] in _TOLD or low[n] in _verb_forms()[2] or low[n].endswith("ed")
