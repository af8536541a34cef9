"""What speech, dictation and regional words leave in a typed message, turned back into writing.

Many messages reach Sidekick through a phone's dictation: hesitations ("um", "uh"), spoken
punctuation ("eggs comma butter", "... full stop") and clock times spelt out ("four p m").
None of this is ever what the user asks for, in any domain, so it is rewritten once, before
anything reads the message, into what the user would have typed.

Every pattern here is a single word or a fixed-width group matched without nested
repetition: user text reaches them (tests/security/test_regex_backtracking.py).
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.lexicon import UNITS

# Hesitations, whole words only: never part of an item, a title or a question.
# Not "er": it is also the ER, an emergency room.
_HESITATIONS = frozenset({"um", "umm", "ummm", "uh", "uhh", "uhm", "erm", "ehm", "hmm", "hmmm", "mmm"})

# "comma" is punctuation between two words, except where the word itself is meant ("the oxford comma").
_COMMA_WORD_BEFORE = frozenset({"the", "a", "oxford", "serial", "this", "that", "inverted"})
# "period" / "full stop" at the very end closes the sentence, except where it is the thing ("my period",
# "the trial period").
_PERIOD_WORD_BEFORE = frozenset({"the", "a", "my", "her", "this", "that", "trial", "grace", "waiting", "notice",
                                 "free", "cooling", "billing", "time", "first", "second", "third", "last", "next"})

_HOURS = {word: n for word, n in UNITS.items() if 1 <= n <= 12 and word not in ("a", "an", "single", "dozen")}
# "a m" / "p m" / "a.m" spelt apart by dictation; the number before is read in Python.
_SPOKEN_MERIDIEM = re.compile(r"\b(\w+)(?: o'clock)? ([ap])\.? ?m\b\.?", re.IGNORECASE)
# Regional words for parts of the day: "tomorrow arvo" is tomorrow afternoon ("for tea", the evening
# meal in Britain and Australia, is read in as_written).
# ("avo" alone is an avocado in Australia; only after a day word or "this" is it the afternoon: "this avo")
_DAY_PARTS = {"arvo": "afternoon"}
_AVO_AFTER = frozenset({"this", "tomorrow", "tmrw", "today", "monday", "tuesday", "wednesday", "thursday", "friday",
                        "saturday", "sunday", "in", "the", "sat", "sun"})

# Particles other Englishes put around a request, which say how it is said, never what: Singapore and
# Malaysia's "lah", "leh", "lor", "meh", "hor", "anot" ("can or not"), the Philippines' "naman", Nigeria's
# "abeg" (please). No English word is spelt so: dropped wherever they stand.
_PARTICLES = frozenset({"lah", "leh", "lor", "meh", "hor", "anot", "naman", "abeg", "haiz", "aiyah", "aiyoh", "alamak"})
# Particles that are also something else in the middle of a sentence ("PO box", "ah I see", "na" in Hindi
# and Tagalog, Nigerian "o"), dropped only where they close a clause: "any notes on insurance ah?",
# "add it to the list po", "we ran out of calamansi na, add it", "abeg add am o".
_CLOSING_PARTICLES = frozenset({"ah", "po", "na", "o", "sha", "jare", "jor", "ba", "ya", "noh", "ne", "eh"})
# Closing words that are another language's "too" (Tagalog "din", "rin": "calamansi din"), written as "too".
_CLOSING_TOO = frozenset({"din", "rin"})
# A question tag with no question in it: "can help me add it can or not", "shopping list pls can?"; South
# Africa's "now now" (soon), which says when as little as "please" does.
_TAGS = (("can", "or", "not"), ("can", "anot"), ("or", "not", "ah"), ("now", "now"), ("so", "yeah"))
# Dictation's "like" after a verb or "you", before what is meant: "can you like put toilet paper on", "we need like
# chicken thighs" (never after "I" or "we": "I like pasta" says what one likes).
_LIKE = re.compile(r"\b(you|u|need|needs|want|wants|get|put|add|buy|grab|just|gotta|gonna) like (?=\w)", re.IGNORECASE)
# The Philippines' "paki-" ("please ...") before a verb: "paki-add pandesal".
_PAKI = re.compile(r"^paki-?(?=[a-z])", re.IGNORECASE)
# Nigerian Pidgin's "am" for it after a verb of putting: "add am to the list" (never "I am", "am I").
# How people text the words a request turns on: "wats on my cal 2morrow", "can u add eggs b4 i forget".
# Whole words only, lower case as typed ("U" may be a letter of a name); "cal" only where a place is said.
_TEXTING = {"2morrow": "tomorrow", "2moro": "tomorrow", "2morow": "tomorrow", "2mrw": "tomorrow", "2mro": "tomorrow",
            "tmoro": "tomorrow", "tomoz": "tomorrow", "2day": "today", "2nite": "tonight", "2night": "tonight",
            "tonite": "tonight", "wat": "what", "wut": "what", "wats": "what's", "wuts": "what's", "u": "you",
            "ur": "your", "b4": "before", "abt": "about", "nxt": "next", "mtg": "meeting", "mtgs": "meetings",
            "bday": "birthday", "b-day": "birthday", "shud": "should", "cud": "could", "wud": "would", "hav": "have",
            "em": "them", "'em": "them", "ppl": "people", "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow",
            "tdy": "today", "appt": "appointment", "w/": "with", "dr": "doctor", "dentist's": "dentist"}
_CAL_BEFORE = frozenset({"my", "the", "on", "to", "in", "our", "from", "off"})
_CALLED = frozenset({"the", "my", "a", "an", "mum", "mom", "dad", "him", "her", "them", "me", "us", "back", "grandma"})
# Tagalog's "sa" (to, on, in) before where a thing goes: "add rusks sa grocery list".
_SA_PLACES = frozenset({"the", "my", "our", "grocery", "groceries", "shopping", "list", "to-do", "todo", "calendar",
                        "notes", "cart"})
# Jamaican Patois' small words, read only where two of the marks are said.
_PATOIS = {"mi": "I", "pon": "on", "di": "the", "fi": "for", "dem": "them", "nuh": "don't", "wah": "what",
           "inna": "in", "haffi": "have to", "neva": "never", "deh": "there", "yuh": "you", "seh": "say"}
_PATOIS_MARKS = frozenset({"mi", "pon", "di", "fi", "dem", "nuh", "wah", "inna", "haffi", "yuh", "deh"})
_PIDGIN_IT_VERBS = frozenset({"add", "put", "remove", "take", "buy", "carry", "drop", "comot", "write", "chuck"})


# "the whole list", "my entire calendar": the place itself ("read me the whole list" read "whole" as an item).
_WHOLE_PLACE = re.compile(r"\b(the|my|our) (?:whole|entire|full|complete) (?=(?:[\w-]+ )?(?:list|calendar|schedule|diary)\b)",
                          re.IGNORECASE)


# What is done about a meal, said before "tea" ("sort out tea for tonight"); not buying it ("buy tea for tomorrow").
_SEEING_TO = frozenset({"out", "sort", "plan", "cook", "organise", "organize", "decide", "pick", "choose"})


# Scots' "the messages" is the shopping: "stick tattie scones on the messages", "add it to the messages".
_MESSAGES = re.compile(r"\b(on|onto|to|in|into|off|from|for) the messages\b", re.IGNORECASE)


def as_written(text: str) -> str:
    """`text` with hesitations and other Englishes' particles dropped, spoken punctuation written and
    spoken clock times in digits; unchanged when nothing else is said ("uh" alone is somebody thinking,
    which the dialogue reads)."""
    words = _without_particles(text.split(" "))
    kept: list[str] = []
    for n, word in enumerate(words):
        bare = word.strip(",.!?;:").casefold()
        if bare in _HESITATIONS:
            if kept and word.endswith((".", "!", "?")) and not kept[-1].endswith((".", "!", "?", ",")):
                kept[-1] += word[-1]
            continue  # "um, add eggs", "add um eggs": the hesitation and its comma go
        if bare == "comma" and kept and n + 1 < len(words) and kept[-1].casefold() not in _COMMA_WORD_BEFORE:
            kept[-1] = kept[-1].rstrip(",") + ","
            continue
        if bare in ("period", "stop") and _ends_sentence(words, n, kept):
            if bare == "stop":
                kept.pop()  # "full"
            if kept and not kept[-1].endswith((".", "!", "?")):
                kept[-1] = kept[-1].rstrip(",") + "."
            continue
        if bare == "tea" and kept and kept[-1].casefold() == "for" and _day_or_end(words[n + 1:]):
            word = word.casefold().replace("tea", "dinner")  # "what's for tea tomorrow": the evening meal
        elif bare == "tea" and kept and kept[-1].casefold() in _SEEING_TO and n + 2 < len(words) \
                and words[n + 1].casefold() == "for" and _day_or_end(words[n + 2:]):
            word = word.casefold().replace("tea", "dinner")  # "sort out tea for tonight": the evening meal too
        if bare in _DAY_PARTS:
            word = word.casefold().replace(bare, _DAY_PARTS[bare])
        elif bare == "avo" and kept and kept[-1].casefold().strip(",") in _AVO_AFTER:
            word = word.casefold().replace("avo", "afternoon")
        kept.append(word)
    written = _MESSAGES.sub(r"\1 the shopping list", " ".join(w for w in kept if w))
    written = _LIKE.sub(r"\1 ", _WHOLE_PLACE.sub(r"\1 ", _SPOKEN_MERIDIEM.sub(_clock, written)))
    return written if any(c.isalnum() for c in written) else text


_MI_SUBJECT_AFTER = frozenset({"what", "wah", "when", "where", "how", "why", "and", "so", "but", "if"})
_MI_VERBS = frozenset({"need", "want", "wan", "have", "haffi", "a", "go", "did", "gonna", "can", "will", "nuh", "neva",
                       "never", "like", "got", "forget", "forgot", "buy", "run", "ran"})


def _mi(kept: list[str], following: str | None) -> str:
    """Patois "mi": "I" before a verb or opening a clause, "my" before a thing, "me" last ("fi mi")."""
    before = kept[-1].casefold() if kept else ""
    if not kept or before.endswith((",", ".", "!", "?")) or before in _MI_SUBJECT_AFTER or following in _MI_VERBS:
        return "I"
    return "my" if following is not None else "me"


def _without_particles(words: list[str]) -> list[str]:
    """The words without the particles and tags above; each particle's punctuation stays on the word before."""
    words = [_PAKI.sub("", w) if n == 0 or words[n - 1].endswith((",", ".", "!", "?")) else w
             for n, w in enumerate(words)]
    low = [w.strip(",.!?;:").casefold() for w in words]
    for tag in _TAGS:
        k = len(tag)
        for n in range(len(low) - k, -1, -1):
            if tuple(low[n:n + k]) != tag or n == 0:
                continue
            if n + k == len(low) or (words[n + k - 1][-1:] in ",.!?;:" and tag != ("now", "now")):
                end = words[n + k - 1][len(words[n + k - 1].rstrip(",.!?;:")):]
                words[n - 1] = words[n - 1].rstrip(",") + end
                del words[n:n + k], low[n:n + k]
    kept: list[str] = []
    patois = sum(w in _PATOIS_MARKS for w in low) >= 2  # (one "di" or "mi" alone is no Patois: "Di" is a name)
    for n, (word, bare) in enumerate(zip(words, low)):
        # (the last word, or one before punctuation or before nothing but particles: "calamansi din po")
        closing = word[-1:] in ",.!?;:" or all(w in _CLOSING_PARTICLES or w in _PARTICLES for w in low[n + 1:])
        if kept and (bare in _PARTICLES or (bare in _CLOSING_PARTICLES and closing)):
            end = word[len(word.rstrip(",.!?;:")):]
            kept[-1] = kept[-1].rstrip(",") + end if end or n + 1 == len(words) else kept[-1]
            continue
        if bare in _PARTICLES and n + 1 < len(words):
            continue  # "abeg add garri", "lah, add it"
        core = word.strip(",.!?;:")
        if core == "cal" and n + 1 < len(words) and low[n + 1] in _CALLED:
            word = word.replace(core, "call", 1)  # "remind me to cal the bank": a call, mistyped
        elif core in _TEXTING or (core == "cal" and kept and kept[-1].casefold() in _CAL_BEFORE):
            word = word.replace(core, _TEXTING.get(core, "calendar"), 1)
        if bare in _CLOSING_TOO and closing and kept:
            word = word.casefold().replace(bare, "too", 1)
        if bare == "aye" and not kept and n + 1 < len(words):
            word = word.casefold().replace("aye", "yes", 1)  # Scots: "aye and neeps", "aye go on"
        if bare == "bout" and kept and kept[-1].casefold() in ("how", "what"):
            word = word.replace("bout", "about", 1)  # "how bout Middle Eastern"
        if bare == "sa" and kept and n + 1 < len(words) and low[n + 1] in _SA_PLACES:
            word = "to"
        if bare == "same" and len(kept) >= 2 and kept[-1].casefold() == "the" and kept[-2].casefold() in _PIDGIN_IT_VERBS | {
                "delete", "cancel", "save", "note", "move"}:
            kept.pop()  # Indian English "kindly remove the same": it
            word = word.replace("same", "it", 1)
        if bare == "am" and kept and kept[-1].strip(",").casefold() in _PIDGIN_IT_VERBS:
            word = word.replace("am", "it", 1)
        if patois and bare in _PATOIS:
            # Jamaican Patois: "mi need rice, put it pon di list fi mi" ("mi" is "I" first, "me" after)
            said = _PATOIS[bare] if bare != "mi" else _mi(kept, low[n + 1] if n + 1 < len(low) else None)
            word = word[:len(word) - len(word.lstrip(",.!?;:"))] + said + word[len(word.rstrip(",.!?;:")):]
        kept.append(word)
    return kept if any(w.strip(",.!?;:") for w in kept) else words


_DAY_WORDS = frozenset({"tonight", "today", "tomorrow", "this", "on", "next", "monday", "tuesday", "wednesday",
                        "thursday", "friday", "saturday", "sunday"})


def _day_or_end(rest: list[str]) -> bool:
    """Nothing but punctuation follows, or a day: "for tea?", "for tea on friday" (not "for tea bags")."""
    nxt = next((w.strip(",.!?;:").casefold() for w in rest if w.strip(",.!?;:")), "")
    return not nxt or nxt in _DAY_WORDS or bool(rest and rest[0][-1:] in ",.!?;:") or (
        bool(rest) and not rest[0].strip(",.!?;:"))


def _ends_sentence(words: list[str], n: int, kept: list[str]) -> bool:
    """The word at `n` ("period", or "stop" of "full stop") is the last one and ends a sentence."""
    if any(w.strip(",.!?;:") for w in words[n + 1:]):
        return False
    if words[n].strip(",.!?;:").casefold() == "stop":
        if not kept or kept[-1].casefold() != "full" or len(kept) < 2:
            return False
        before = kept[-2]
    else:
        if not kept:
            return False
        before = kept[-1]
    return before.strip(",.!?;:").casefold() not in _PERIOD_WORD_BEFORE


def _clock(m: re.Match[str]) -> str:
    said = m.group(1).casefold()
    hour = _HOURS.get(said) if not said.isdigit() else int(said)
    if hour is None or not 1 <= hour <= 12:
        return m.group(0)
    return f"{hour}{m.group(2).casefold()}m"
