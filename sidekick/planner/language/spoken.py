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
from dreamer.sidekick.planner.language.pictures import CROSSES, JOINERS, PICTURES, TICKS

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
_PARTICLES = frozenset({"lah", "leh", "lor", "meh", "hor", "anot", "naman", "abeg", "haiz", "aiyah", "aiyoh", "alamak",
                        "liao", "tolong", "yalla"})
# Particles that are also something else in the middle of a sentence ("PO box", "ah I see", "na" in Hindi
# and Tagalog, Nigerian "o"), dropped only where they close a clause: "any notes on insurance ah?",
# "add it to the list po", "we ran out of calamansi na, add it", "abeg add am o".
_CLOSING_PARTICLES = frozenset({"ah", "po", "na", "o", "sha", "jare", "jor", "ba", "ya", "noh", "ne", "eh", "ji", "aye"})
# Interjections that open a message and say nothing of it: "eh belacan habis already", "oi, add milk".
_OPENING_CRIES = frozenset({"eh", "ehn", "oi", "oy", "ay", "ayy"})
# Closing words that are another language's "too" (Tagalog "din", "rin": "calamansi din"), written as "too".
_CLOSING_TOO = frozenset({"din", "rin"})
# A question tag with no question in it: "can help me add it can or not", "shopping list pls can?"; South
# Africa's "now now" (soon), which says when as little as "please" does.
_TAGS = (("can", "or", "not"), ("can", "anot"), ("or", "not", "ah"), ("now", "now"), ("so", "yeah"),
         ("already", "or", "not"))
# Dictation's "like" after a verb or "you", before what is meant: "can you like put toilet paper on", "we need like
# chicken thighs" (never after "I" or "we": "I like pasta" says what one likes).
_LIKE = re.compile(r"\b(you|u|need|needs|want|wants|get|put|add|buy|grab|just|gotta|gonna) like (?=\w)", re.IGNORECASE)
# The Philippines' "paki-" ("please ...") before a verb: "paki-add pandesal".
# (and its shorter "pa-", with its hyphen: "pa-plan po ng dinner", "pa-share po ng recipe")
_PAKI = re.compile(r"^(?:paki-?|pa-)(?=[a-z])", re.IGNORECASE)
# Tagalog's linker "ng" (of, a) and "ko" (my) after a place: "pa-share po ng recipe", "sa calendar ko". No English
# word is spelt "ng"; "ko" is read only after a place.
_KO_AFTER = frozenset({"list", "calendar", "notes", "diary", "schedule", "to-do", "todo", "todos", "tasks"})
# Nigerian Pidgin's "am" for it after a verb of putting: "add am to the list" (never "I am", "am I").
# How people text the words a request turns on: "wats on my cal 2morrow", "can u add eggs b4 i forget".
# Whole words only, lower case as typed ("U" may be a letter of a name); "cal" only where a place is said.
_TEXTING = {"2morrow": "tomorrow", "2moro": "tomorrow", "2morow": "tomorrow", "2mrw": "tomorrow", "2mro": "tomorrow",
            "tmoro": "tomorrow", "tomoz": "tomorrow", "2day": "today", "2nite": "tonight", "2night": "tonight",
            "tonite": "tonight", "wat": "what", "wut": "what", "wats": "what's", "wuts": "what's", "u": "you",
            "ur": "your", "b4": "before", "abt": "about", "nxt": "next", "mtg": "meeting", "mtgs": "meetings",
            "bday": "birthday", "b-day": "birthday", "shud": "should", "cud": "could", "wud": "would", "hav": "have",
            "em": "them", "'em": "them", "ppl": "people", "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow",
            "tdy": "today", "appt": "appointment", "w/": "with", "dr": "doctor", "dentist's": "dentist",
            "dun": "don't", "finna": "gonna", "naw": "no", "outta": "out of", "habis": "finished", "comot": "remove", "wetin": "what"}
_CAL_BEFORE = frozenset({"my", "the", "on", "to", "in", "our", "from", "off"})
_CALLED = frozenset({"the", "my", "a", "an", "mum", "mom", "dad", "him", "her", "them", "me", "us", "back", "grandma"})
# Tagalog's "sa" (to, on, in) before where a thing goes: "add rusks sa grocery list".
_SA_PLACES = frozenset({"the", "my", "our", "grocery", "groceries", "shopping", "list", "to-do", "todo", "calendar",
                        "notes", "cart"})
# Jamaican Patois' small words, read only where two of the marks are said.
_PATOIS = {"mi": "I", "pon": "on", "di": "the", "fi": "for", "dem": "them", "nuh": "don't", "wah": "what",
           "inna": "in", "haffi": "have to", "neva": "never", "deh": "there", "yuh": "you", "seh": "say"}
_PATOIS_MARKS = frozenset({"mi", "pon", "di", "fi", "dem", "nuh", "wah", "inna", "haffi", "yuh", "deh"})
_PIDGIN_IT_VERBS = frozenset({"add", "put", "remove", "take", "buy", "carry", "drop", "comot", "write", "chuck",
                              "bought", "reverse", "cancel", "undo", "delete", "bin", "ditch", "scrap"})
# "me" for "my" before where things are kept, in Irish, Scots, Australian and northern English: "off me list".
_ME_BEFORE = frozenset({"on", "to", "in", "from", "off", "onto", "into", "out", "clear", "empty", "check", "read", "show"})
_ME_PLACES = frozenset({"list", "calendar", "diary", "shopping", "grocery", "notes", "to-do", "todo", "schedule", "messages"})
# Scots, read where one of its own words is said ("tae", "fae", "whit", "the morra"): then the words it shares
# with English spelling ("ma", "pit", "fur", "ye") are Scots too: "pit fitba in ma diary fur the morra".
_SCOTS = {"tae": "to", "fae": "from", "whit": "what", "dae": "do", "aff": "off", "oot": "out", "nae": "no",
          "cannae": "can't", "dinnae": "don't", "didnae": "didn't", "isnae": "isn't", "wisnae": "wasn't", "gies": "give us",
          "gie's": "give us", "gie": "give", "ma": "my", "pit": "put", "fur": "for", "ye": "you", "wis": "was",
          "gonnae": "can you", "wrang": "wrong", "gaun": "going"}
_SCOTS_MARKS = frozenset({"tae", "fae", "whit", "dae", "aff", "oot", "cannae", "dinnae", "didnae", "isnae", "wisnae",
                          "gies", "gie's", "gie", "gonnae", "morra", "noo", "nae", "wis", "wrang", "gaun"})
# African-American English's "ain't got no": none ("we ain't got no more Kool-Aid").
_NONE_LEFT = ("ain't", "got", "no")


# "the whole list", "my entire calendar": the place itself ("read me the whole list" read "whole" as an item).
_WHOLE_PLACE = re.compile(r"\b(the|my|our) (?:whole|entire|full|complete) (?=(?:[\w-]+ )?(?:list|calendar|schedule|diary)\b)",
                          re.IGNORECASE)


# What is done about a meal, said before "tea" ("sort out tea for tonight"); not buying it ("buy tea for tomorrow").
_SEEING_TO = frozenset({"out", "sort", "plan", "cook", "organise", "organize", "decide", "pick", "choose"})


# Scots' "the messages" is the shopping: "stick tattie scones on the messages", "add it to the messages".
_MESSAGES = re.compile(r"\b(on|onto|to|in|into|off|from|for) the messages\b", re.IGNORECASE)


# "the recipe of Dal Tadka", as many write it whose first language says so: the recipe for it.
_RECIPE_OF = re.compile(r"\b(recipes?|method|instructions) of (?=\w)", re.IGNORECASE)
# ... and "send me recipe for masala dosa", its article left out: the recipe, one dish's ("a recipe for" asks ideas).
_ME_RECIPE = re.compile(r"\b(me|us) recipe for (?=\w)", re.IGNORECASE)


# "X, what have you got": what Sidekick can offer, asked of Sidekick ("what have I got on" is the user's diary).
_YOU_GOT = re.compile(r"([,;.!?] )what(?:'ve| have| do)? (?:you|ya|u|y'all) got(?= ?[?!.]*$)", re.IGNORECASE)
# Australia's and Britain's "a feed" (a meal): "plan us a feed for Sunday", "fancy a Korean feed".
_A_FEED = re.compile(r"\b(a|us a|good|big|decent|proper|quick|cheap|korean|thai|indian|mexican|italian|chinese) feed\b",
                     re.IGNORECASE)
# "add me kielbasa": for me, as several languages put it (never "add me to ...", "remind me").
_ADD_ME = re.compile(r"\b(add|buy|get|grab|put) me (?!(?:to|on|in|into|onto|off|from|up|down|back|a reminder|know)\b)",
                     re.IGNORECASE)
# A list named by its shop, capitalised: "pop it on the Countdown list", "the Woolies list" - the shopping list.
_NAMED_LIST = re.compile(r"\b(on|onto|to|in|into|off|from) (the|my|our) (?!(?:Grocery|Shopping|To-do|Todo|To-Do|Christmas|Bucket|"
                         r"Reading|Guest|Wish)\b)[A-Z][\w'&-]* list\b")
# "can we get the one-on-one in the calendar": put there, not bought.
_GET_IN = re.compile(r"\b(can|could) (we|you|i) get (?=[\w' -]{1,60} (?:in|on|into|onto) "
                     r"(?:the|my|our) (?:calendar|diary|schedule|agenda)\b)", re.IGNORECASE)


_BUYING = re.compile(r"\b(?:add|buy|get|grab|list|pick up|order)\b", re.IGNORECASE)
# Office words for "do it", around a request: "action this: add muesli bars ...", "..., let's action it".
_ACTION_THIS = re.compile(r"^(?:please |pls |can you |could you )?action (?:this|the following|pls|please)?\s?[:,-]\s?(?=\S)",
                          re.IGNORECASE)
_ACTION_IT = re.compile(r",? (?:let's|lets|please|pls|kindly) action (?:it|this|that|asap)(?= ?[.!]*$)", re.IGNORECASE)
# A kind of food's "tea" is the evening meal: "japanese tea in under 30 mins" (not "green tea", "iced tea").
_KIND_OF_TEA = re.compile(r"\b(japanese|spanish|korean|thai|italian|mexican|indian|chinese|french|greek|vietnamese|"
                          r"turkish|lebanese|moroccan|middle eastern|american|british|vegetarian|vegan|quick|easy) tea\b"
                          r"(?! (?:bags?|leaves|set|cups?|pot|towels?))", re.IGNORECASE)


# "to" as dictation writes it, before where a thing goes: "add eggs two my grocery list", "too the calendar".
_SOUNDS_LIKE_TO = re.compile(r"\b(?:two|too|2)(?= (?:my|the|our) (?:[\w-]+ )?(?:list|calendar|diary|notes|to-?do list|to-?dos"
                             r"|tasks)\b)", re.IGNORECASE)


# Whose and which list in other Englishes' words, before where things are kept: "ma to-do list", "me calendar",
# "oor list" (Scots, Irish, Northern English "my" / "our"), "t'list" (Yorkshire's "the").
_KEPT_IN = r"(?:(?!(?:my|the|our|your|me|ma)\b)[\w-]+ )?(?:list|calendar|diary|notes|to-?do list|to-?dos|tasks|shopping|groceries|messages)\b"
_DIALECT_MY = re.compile(rf"\b(?:ma|mah|me|mi|ma'|oor|wor)(?= {_KEPT_IN})", re.IGNORECASE)
_DIALECT_THE = re.compile(r"\bt'(?=(?:list|calendar|diary|shopping|messages)\b)", re.IGNORECASE)


# "too" as dictation writes it, last in one more thing: "and yogurt to" is "and yogurt too".
_MORE_TO = re.compile(r"^((?:and|also|plus|oh and|oh,? and) [^,.;!?]{1,60}?) to[.!]?$", re.IGNORECASE)
_WISE = re.compile(r"\b(department|team|month|year|quarter|location|manager|gender|role|reason|site|city|country|grade"
                   r"|level|age|status)-?wise\b", re.IGNORECASE)
_WHAT_ALL = re.compile(r"\bwhat all(?=(?:'s| is| do| did| have| we| i| you)\b)", re.IGNORECASE)
# (only before where: "what have I noted lately" asks what was noted)
_HAVE_I = re.compile(r"\bwhat have (i|we)(?= (?:on|in|for|at|coming up|left on|planned for)\b)", re.IGNORECASE)
_WAS_ON = re.compile(r"\bwhat (?:was|were) on(?= (?:the|my|our) (?:[\w-]+ )?(?:list|to-?do list|to-?dos)\b)", re.IGNORECASE)
_HOW_MUCH_PEOPLE = re.compile(r"\bhow much(?= (?:people|employees|staff|workers|persons|hires|leavers|absences|sick days)\b)",
                              re.IGNORECASE)
# Pictures between words end what was said before them, as a full stop would: "12 hour shift done 😵 add energy
# drinks to groceries" is two sentences.
# (never a tick or a cross: "hot cheetos ✅ bought" says done, as a word would)
_EMOJI_BETWEEN = re.compile(rf"(?<=\w)\s*(?![{TICKS}{CROSSES}])[{PICTURES}][{PICTURES}{JOINERS}]*\s+(?=[A-Za-z])")


def as_written(text: str) -> str:
    """`text` with hesitations and other Englishes' particles dropped, spoken punctuation written and
    spoken clock times in digits; unchanged when nothing else is said ("uh" alone is somebody thinking,
    which the dialogue reads)."""
    words = _without_particles(_without_radio(text).split(" "))
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
        elif bare == "tea" and kept and (kept[-1].casefold() in _SEEING_TO or len(kept) >= 2 and kept[-1].casefold() == "the"
                                         and kept[-2].casefold() in _SEEING_TO) and n + 2 < len(words) \
                and words[n + 1].casefold() == "for" and _day_or_end(words[n + 2:]):
            word = word.casefold().replace("tea", "dinner")  # "sort out tea for tonight": the evening meal too
        if bare in _DAY_PARTS:
            word = word.casefold().replace(bare, _DAY_PARTS[bare])
        elif bare == "avo" and kept and kept[-1].casefold().strip(",") in _AVO_AFTER:
            word = word.casefold().replace("avo", "afternoon")
        kept.append(word)
    written = _MESSAGES.sub(r"\1 the shopping list", " ".join(w for w in kept if w))
    written = _ME_RECIPE.sub(r"\1 the recipe for ", _RECIPE_OF.sub(r"\1 for ", written))
    written = _YOU_GOT.sub(r"\1any ideas", _A_FEED.sub(r"\1 meal", written))
    written = _NAMED_LIST.sub(r"\1 \2 shopping list", _ADD_ME.sub(r"\1 ", written))
    written = _GET_IN.sub(r"\1 \2 put ", written)
    written = _ACTION_IT.sub("", _ACTION_THIS.sub("", written)) or written
    if not _BUYING.search(written):
        written = _KIND_OF_TEA.sub(r"\1 dinner", written)  # (bought, "japanese tea" is tea)
    written = _LIKE.sub(r"\1 ", _WHOLE_PLACE.sub(r"\1 ", _SPOKEN_MERIDIEM.sub(_clock, written)))
    written = _SOUNDS_LIKE_TO.sub("to", _DIALECT_THE.sub("the ", _DIALECT_MY.sub("my", written)))
    written = _EMOJI_BETWEEN.sub(". ", written)
    written = _MORE_TO.sub(r"\1 too", written)
    # "what have I on the list" (Irish English) is "what do I have on the list"; "what was on the list again"
    # asks what is on it now; "how much people" is "how many people"
    written = _HAVE_I.sub(r"what do \1 have", _WAS_ON.sub(r"what's on", _HOW_MUCH_PEOPLE.sub(r"how many", written)))
    written = _WHAT_ALL.sub("what", written)  # "what all's on there now" (US Southern): what is on it
    written = _WISE.sub(r"by \1", written)  # "department-wise" (Indian English) is "by department"
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
    _pidgin(words, low)
    _as_too(words, low)
    if len(low) >= 4 and low[-1] == "can" and low[-2] not in _SUBJECTS and words[-1][:3] == "can":
        # Singapore's closing "can": "send me my shopping list can" (never "we can", "yes you can")
        words[-2], low[-2] = words[-2].rstrip(",") + words[-1][3:], low[-2]
        del words[-1], low[-1]
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
    scots = any(w in _SCOTS_MARKS for w in low)
    for n, (word, bare) in enumerate(zip(words, low)):
        if not kept and bare in _OPENING_CRIES and n + 1 < len(words):
            continue  # "eh belacan habis already": the cry opens, nothing more
        if kept and (bare == "ng" and n + 1 < len(words) or bare == "ko" and low[n - 1] in _KO_AFTER
                     or word == "po" and n + 1 < len(words) and low[n + 1] not in ("box", "number")):
            end = word[len(word.rstrip(",.!?;:")):]
            kept[-1] = kept[-1].rstrip(",") + end
            continue  # Tagalog's "ng", "ko" after a place and "po" mid-sentence: "pa-plan po ng dinner"
        if scots and bare in ("morra", "noo", "now") and kept and kept[-1].casefold() == "the":
            kept.pop()  # Scots "the morra" (tomorrow), "the noo" / "the now" (now)
            word = word.casefold().replace(bare, "tomorrow" if bare == "morra" else "now", 1)
        elif scots and bare == "tae" and n + 1 == len(words):
            word = word.casefold().replace("tae", "too", 1)  # "stick cheddar on tae": too, last
        elif scots and bare in _SCOTS:
            word = word[:len(word) - len(word.lstrip(",.!?;:"))] + _SCOTS[bare] + word[len(word.rstrip(",.!?;:")):]
            bare = _SCOTS[bare]
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
        if bare == "me" and kept and kept[-1].casefold() in _ME_BEFORE and n + 1 < len(words) and low[n + 1] in _ME_PLACES:
            word = word.replace("me", "my", 1)  # "scrap netball from me calendar", "clear out me list": my
        if bare == "am" and kept and kept[-1].strip(",").casefold() in _PIDGIN_IT_VERBS:
            word = word.replace("am", "it", 1)
        if patois and bare in _PATOIS:
            # Jamaican Patois: "mi need rice, put it pon di list fi mi" ("mi" is "I" first, "me" after)
            said = _PATOIS[bare] if bare != "mi" else _mi(kept, low[n + 1] if n + 1 < len(low) else None)
            word = word[:len(word) - len(word.lstrip(",.!?;:"))] + said + word[len(word.rstrip(",.!?;:")):]
        kept.append(word)
    return kept if any(w.strip(",.!?;:") for w in kept) else words


# Other Englishes' "too" after one more thing: Scots "an aw" ("neeps an aw"), Singapore's "also can" ("bread also
# can"), Nigerian "join" after putting ("put palm oil join"); and Tagalog's "pati" (also) before it.
_TOO_ENDINGS = (("an", "aw"), ("an'", "aw"), ("and", "aw"), ("also", "can"))


def _as_too(words: list[str], low: list[str]) -> None:
    """The closing "too" of other Englishes written as "too", and "an'" as "and", in place."""
    for ending in _TOO_ENDINGS:
        if len(low) > len(ending) and tuple(low[-len(ending):]) == ending:
            end = words[-1][len(words[-1].rstrip(",.!?;:")):]
            del words[-len(ending):], low[-len(ending):]
            words.append("too" + end)
            low.append("too")
            break
    if len(low) >= 3 and low[-1] == "join" and low[0] in ("put", "add", "buy", "carry"):
        words[-1], low[-1] = words[-1].replace("join", "too", 1), "too"
    for n, bare in enumerate(low):
        if bare == "an'" and n + 1 < len(low) and low[n + 1] not in ("all", "aw"):
            words[n], low[n] = words[n].replace("an'", "and", 1), "and"
        elif bare == "pati" and n + 1 < len(low):
            words[n], low[n] = words[n].replace("pati", "also", 1), "also"


_SUBJECTS = frozenset({"i", "we", "you", "u", "they", "it", "he", "she", "who", "that", "one", "anyone", "someone"})


def _pidgin(words: list[str], low: list[str]) -> None:
    """Nigerian Pidgin's "don" (has) and "wetin dey" (what's in), and "ain't got no", in place: "my egusi don
    finish" is finished, "I don buy am" has bought it, "wetin dey my list" is what's on it."""
    for n in range(len(low) - 1):
        pair = (low[n], low[n + 1])
        if pair[0] == "don" and pair[1] in ("finish", "finished") and (n == 0 or low[n - 1] not in ("i", "we")):
            words[n], words[n + 1] = "is", words[n + 1].replace(pair[1], "finished", 1)
        elif pair == ("don", "buy"):
            words[n], words[n + 1] = "have", words[n + 1].replace("buy", "bought", 1)
        elif pair == ("wetin", "dey"):
            words[n], words[n + 1] = "what's", words[n + 1].replace("dey", "on", 1)
        elif tuple(low[n:n + 3]) == _NONE_LEFT:
            words[n], words[n + 1] = "have", ""
        else:
            continue
        low[n], low[n + 1] = words[n].casefold(), words[n + 1].strip(",.!?;:").casefold()
    for n in range(len(words) - 1, -1, -1):
        if not words[n]:
            del words[n], low[n]


# How a message is said to a voice assistant, radio style: "hey sidekick take a note the ute needs new tyres
# over", "ok sidekick shopping list add lemons over and out", "sidekick, write down ..., over".
_WAKE = ("hey sidekick", "ok sidekick", "okay sidekick", "hi sidekick", "yo sidekick", "sidekick,", "sidekick:")


def _without_radio(text: str) -> str:
    """`text` without a wake word before it and the radio's "over" (or "over and out") after it."""
    low = text.casefold().strip()
    woken = next((w for w in _WAKE if low.startswith(w + " ") or low.startswith(w + ", ")), None)
    rest = text.strip()[len(woken):].lstrip(" ,") if woken else text.strip()
    tail = rest.rstrip(" .!").casefold()
    for end in (" over and out", ", over", " over") if woken else (" over and out", ", over and out", ", over"):
        if tail.endswith(end) and len(tail) > len(end) + 2:
            rest = rest.rstrip(" .!")[:-len(end)].rstrip(" ,")
            break
    return rest if rest and any(c.isalnum() for c in rest) else text


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
