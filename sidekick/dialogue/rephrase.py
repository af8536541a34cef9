"""Outsider wordings of a follow-up brought to the forms the follow-up readers know.

People say the same follow-up many ways: "can you change it to mozzarella?", "swap that for
turkey", "same with parmesan", "uh, next monday at 3pm", "friday at 9 works", "actually can
we do 3pm". Rather than grow every reader's pattern, a message is first read word by word and
rewritten to the plain form ("change that to mozzarella", "and parmesan", "next monday at
3pm", "actually make it 3pm"); the readers then see one shape. The original message is kept
for the planner: only the dialogue's readers see the rewrite.

Everything here works on a list of words (no pattern with nested repetition), so no message
can make it slow.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_REPHRASE_CHARS = 200  # follow-ups and answers are short; longer messages are left as they are

# Sounds of hesitation: they carry no meaning at the start of a message ("uh, next monday").
HESITATION = frozenset("uh um umm uhm er erm hmm hm".split())
OWNING = frozenset({("my", "mistake"), ("my", "bad"), ("my", "apologies"), ("my", "error"), ("my", "fault")})
# Polite openers before a verb: "can you change it to X" is "change it to X".
POLITE = (("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("can", "u"), ("please",),
          ("i", "want", "you", "to"), ("i'd", "like", "you", "to"))
# Verbs that may follow a polite opener in a follow-up.
FOLLOW_VERBS = frozenset("change switch swap replace make remove delete take cross add put move push cancel mark check "
                         "undo scratch drop".split())
# "swap that for X", "switch it with X", "replace it by X", "change that for X": all "change that to X".
SWAP_VERBS = frozenset("swap switch change replace exchange".split())
SWAP_LINKS = frozenset("for with to by into".split())
# "can we do 3pm", "let's do 3pm", "could we make it 3pm": offering a value, said as a correction.
OFFER_LEADS = (("can", "we", "do"), ("could", "we", "do"), ("can", "we", "make", "it"), ("could", "we", "make", "it"),
               ("let's", "do"), ("lets", "do"), ("let's", "make", "it"), ("let's", "say"), ("can", "you", "make", "it"),
               ("could", "you", "make", "it"), ("how", "about"))
# Lead words of a correction that stay in front of the offered value.
CORRECTION_LEADS = frozenset("actually no nope nah sorry oops wait apologies oh hmm".split())
# ... but where the old value is named after it, "no" is part of it: "no wipes, i meant cotton wool".
_NAMED_LEADS = CORRECTION_LEADS - {"no"}
# "friday at 9 works", "tomorrow is fine": acceptance words after an offered value.
ACCEPT_TAILS = (("works", "for", "me"), ("works",), ("is", "fine"), ("is", "good"), ("would", "be", "great"),
                ("would", "work"), ("would", "be", "good"), ("should", "work"), ("if", "possible"), ("is", "ok"),
                ("is", "okay"), ("please",))
# "same with parmesan", "same question for sales", "the same goes for X": the last call again with X.
SAME_HEADS = (("same", "question"), ("same", "goes"), ("same", "thing"), ("the", "same"), ("same",))
SAME_LINKS = frozenset("with for about in".split())
# "honey can go", "the cheese can come off": the entry named is taken off.
GO_TAILS = (("can", "go"), ("can", "go", "now"), ("can", "come", "off"), ("can", "be", "removed"), ("can", "go", "too"))
MAX_GO_WORDS = 3
# Taking back the last request, said without the word "undo".
UNDO_SAYINGS = frozenset({
    ("remove", "what", "you", "just", "added"), ("take", "off", "what", "you", "just", "added"),
    ("don't", "add", "that"), ("dont", "add", "that"), ("don't", "do", "that"), ("i", "didn't", "want", "that"),
    ("i", "didnt", "want", "that"), ("i", "did", "not", "want", "that"), ("go", "back"), ("that's", "wrong", "undo", "it"),
    ("that's", "not", "what", "i", "wanted"), ("that's", "not", "what", "i", "meant"), ("no", "not", "that"),
    ("remove", "the", "last", "thing"), ("delete", "the", "last", "thing"), ("undo", "the", "last", "one"),
})
# "another thing, eggs", "one more thing: eggs": one more of the same.
MORE_HEADS = (("another", "thing"), ("one", "more", "thing"), ("oh", "another", "thing"), ("now", "do"))
# "and another one on friday at 10", "same again on friday": the last call again at another time.
AGAIN_HEADS = (("and", "another", "one"), ("another", "one"), ("same", "again"), ("and", "again"), ("also",), ("again",),
               ("and", "also"), ("one", "more"), ("and", "one", "more"))
TIME_LINKS = frozenset("on at for".split())
# "wrong time, it's at 4pm", "wrong day, it is friday".
WRONG = frozenset({("wrong", "time"), ("wrong", "day"), ("wrong", "date"), ("that's", "wrong"), ("not", "right")})
# "number two", "#2": the numeral the ordinal readers know.
NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
                "nine": "9", "ten": "10"}
# Words a place in a list shown is said after: "number two", "option two", "choice 3", "idea two".
PLACE_NOUNS = frozenset({"number", "option", "choice", "no", "idea", "recipe", "item", "pick"})
# The old and the new value of a correction that names both: "change A to B", "B instead of A".
MAX_VALUE_WORDS = 4


def _split(text: str) -> tuple[list[str], str]:
    """The words of `text` (punctuation at their ends kept apart) and its closing punctuation."""
    body = text.strip()
    end = ""
    while body and body[-1] in "?!.":
        end, body = body[-1] + end, body[:-1].rstrip()
    return body.split(), end


def _starts(words: Sequence[str], lead: Sequence[str]) -> bool:
    return len(words) >= len(lead) and [w.casefold().strip(",") for w in words[: len(lead)]] == list(lead)


def _ends(words: Sequence[str], tail: Sequence[str]) -> bool:
    return len(words) > len(tail) and [w.casefold().strip(",") for w in words[-len(tail):]] == list(tail)


def _numbered(word: str) -> str:
    """ "#2" -> "number 2"; other words unchanged (the word before "two" is checked by the caller)."""
    if word.startswith("#") and word[1:].rstrip(",.").isdigit():
        return "number " + word[1:]
    return word


def named_correction(text: str) -> tuple[str, str] | None:
    """(old, new) of a correction that names both values: "change milk to almond milk", "replace the
    milk with almond milk", "almond milk instead of milk", "I meant almond milk not milk", "not milk,
    almond milk"."""
    if len(text) > MAX_REPHRASE_CHARS:
        return None
    words, _ = _split(without_hesitation(text.replace("\u2019", "'")))
    # "no," leads; "no wipes, i meant cotton wool" is the old value said with "no"
    while words and (words[0].casefold().strip(",.") in _NAMED_LEADS or words[0].casefold() in ("no,", "no.", "no!")):
        words = words[1:]
    low = [w.casefold().strip(",.") for w in words]
    pair: tuple[list[str], list[str]] | None = None
    if low[:1] in (["change"], ["replace"], ["swap"], ["switch"]):
        link = next((i for i, w in enumerate(low) if i > 1 and w in ("to", "with", "for", "into")), None)
        if link is not None and low[1] not in ("it", "that", "this"):
            start = 2 if low[1] in ("the", "my") else 1
            pair = (words[start:link], words[link + 1:])
    elif "instead" in low and low.index("instead") + 1 < len(low) and low[low.index("instead") + 1] == "of":
        i = low.index("instead")
        pair = (words[i + 2:], words[:i])
    elif low[:2] in (["my", "apologies"], ["my", "bad"], ["my", "mistake"]):
        return named_correction(" ".join(words[2:]))  # "My apologies, I intended parmesan rather than cheddar"
    elif low[:1] == ["i"] and low[1:2] in (["meant"], ["intended"], ["wanted"]) and _against(low, 2) is not None:
        i, size = _against(low, 2) or (0, 0)
        pair = (words[i + size:], words[2:i])  # "I meant almond milk not milk", "I intended X rather than Y"
    elif low[:3] in (["i", "was", "meaning"], ["i", "was", "after"], ["i", "was", "thinking"]) and _against(
            low, 3) is not None:
        i, size = _against(low, 3) or (0, 0)
        pair = (words[i + size:], words[3:i])  # "I was meaning brown rice, not the white"
    elif low[:1] and low[0] in _OLD_LEADS and _new_after_comma(words) is not None:
        # "no wipes, i meant cotton wool", "scratch the pesto, make it passata", "not parsnips, turnips"
        i, new = _new_after_comma(words) or (0, [])
        start = 2 if low[1:2] in (["the"], ["my"]) else 1
        pair = (words[start:i + 1], new)
    elif low[:1] == ["not"] and any(w.endswith(",") for w in words[1:-1]):
        i = next(i for i, w in enumerate(words) if i > 0 and w.endswith(","))
        new = words[i + 1:]
        if [w.casefold() for w in new[:2]] in (["make", "it"], ["make", "that"]):
            new = new[2:]  # "not basmati, make it sona masoori rice"
        pair = (words[1:i + 1], new)
    elif "rather" in low[1:] and low[low.index("rather", 1) + 1 : low.index("rather", 1) + 2] == ["than"]:
        i = low.index("rather", 1)
        pair = (words[i + 2:], words[:i])  # "parmesan rather than cheddar"
    if pair is None:
        return None
    old, new = (" ".join(p).strip(" ,.") for p in pair)
    old = old.removeprefix("the ").removeprefix("my ")
    if not old or not new or len(old.split()) > MAX_VALUE_WORDS or len(new.split()) > MAX_VALUE_WORDS:
        return None
    return old, new


# Words that put the old value aside before the new one: "no wipes, ...", "scrap the pesto, ..."
_OLD_LEADS = frozenset("no not scratch scrap drop forget ditch bin remove delete lose cross".split())
_COMMAND_WORDS = frozenset("remove delete take drop add put cancel undo scratch scrap get clear".split())
_NEW_LEADS = (("i", "meant"), ("i", "mean"), ("make", "it"), ("make", "that"), ("it", "should", "be"), ("i", "want"))


def _new_after_comma(words: Sequence[str]) -> tuple[int, list[str]] | None:
    """Where the old value's clause ends (its last word's index) and the new value's words, for
    "<old>, <lead> <new>" ("scratch the pesto, make it passata"); a bare new value after the comma too."""
    i = next((i for i, w in enumerate(words[:-1]) if i > 0 and w.endswith(",")), None)
    if i is None:
        return None
    new = list(words[i + 1:])
    for lead in _NEW_LEADS:
        if _starts(new, lead) and len(new) > len(lead):
            new = new[len(lead):]
            break
    if new[0].casefold() in _COMMAND_WORDS or any(w.casefold().strip(",.!") in ("it", "that", "them") for w in new):
        return None  # "no salsa, remove it": a command about the old value, not a new one
    return i, new


def _against(low: Sequence[str], start: int) -> tuple[int, int] | None:
    """Where the words that set the new value against the old one stand ("not", "rather than",
    "instead of"), from `start` on, and how many words they are."""
    for i in range(start + 1, len(low)):
        if low[i] == "not":
            return i, 1
        if low[i : i + 2] in (["rather", "than"], ["instead", "of"]):
            return i, 2
    return None


def without_hesitation(text: str) -> str:
    """`text` without the hesitation sounds that open it: "uh, next monday at 3pm" -> "next monday at 3pm"."""
    words, end = _split(text)
    cut = 0
    while cut < len(words) - 1:
        if words[cut].casefold().strip(",.") in HESITATION:
            cut += 1
        elif cut < len(words) - 2 and (words[cut].casefold(), words[cut + 1].casefold().strip(",.")) in OWNING:
            cut += 2  # "my mistake, thighs not breasts": owning the slip, then the correction
        else:
            break
    return " ".join(words[cut:]) + end if cut else text


def offered_value(text: str) -> str:
    """An answer without its acceptance words: "friday at 9 works" -> "friday at 9"; "uh, tomorrow" -> "tomorrow"."""
    words, end = _split(without_hesitation(text))
    for tail in ACCEPT_TAILS:
        if _ends(words, tail) and len(words) - len(tail) >= 1:
            return " ".join(words[: -len(tail)]).rstrip(",")
    return " ".join(words) + end


def rephrase(text: str) -> str:
    """The plain form of a follow-up said another way, or `text` itself when none applies."""
    if len(text) > MAX_REPHRASE_CHARS:
        return text
    words, end = _split(without_hesitation(text.replace("’", "'")))
    if not words:
        return text
    low = [w.casefold().strip(",.:") for w in words]
    if tuple(low) in UNDO_SAYINGS or (len(low) > 1 and low[0] in CORRECTION_LEADS and tuple(low[1:]) in UNDO_SAYINGS):
        return "undo that"
    if low[0] == "correction" and len(words) > 1:
        words = ["actually,", "make", "that", *words[1:]]  # "correction: almond milk"
        return " ".join(words) + end
    for head in AGAIN_HEADS:  # "and another one on friday at 10" -> "same for friday at 10"
        n = len(head)
        if _starts(words, head) and len(words) > n + 1 and low[n] in TIME_LINKS:
            return " ".join(["same", "for", *words[n + 1:]]) + end
    for head in MORE_HEADS:  # "another thing, eggs" -> "and eggs"
        if _starts(words, head) and len(words) > len(head):
            return " ".join(["and", *words[len(head):]]) + end
    if len(low) > 1 and low[-1] == "also" and low[0] not in ("and", "i", "we"):
        # "eggs also", "then eggs also"
        return " ".join(["and", *(words[1:-1] if low[0] == "then" and len(low) > 2 else words[:-1])]) + end
    if len(low) > 3 and tuple(low[:2]) in WRONG and low[2] in ("it's", "its") or \
            len(low) > 4 and tuple(low[:2]) in WRONG and tuple(low[2:4]) == ("it", "is"):
        # "wrong time, it's at 4pm": a correction of the value just given
        skip = 3 if low[2] in ("it's", "its") else 4
        return " ".join(["actually,", "make", "it", *words[skip:]]) + end
    numbered = [_numbered(w) for w in words]
    numbered = [NUMBER_WORDS.get(w.casefold(), w) if i and numbered[i - 1].casefold().rstrip(".") in PLACE_NOUNS else w
                for i, w in enumerate(numbered)]
    renumbered = numbered != words
    words = numbered
    lead: list[str] = []
    while words and words[0].casefold().strip(",.") in CORRECTION_LEADS and len(words) > 1:
        lead.append(words[0].rstrip(",.") + ",")
        words = words[1:]
    if lead and len(words) > 2 and [w.casefold() for w in words[:2]] in (["i", "said"], ["i", "meant"], ["i", "mean"]):
        words = ["actually,", "make", "that", *words[2:]]  # "no I said soy milk": the value said again
    body = list(words)
    for polite in POLITE:  # "can you change it to X" -> "change it to X"
        if _starts(words, polite) and len(words) > len(polite) and words[len(polite)].casefold() in FOLLOW_VERBS:
            words = words[len(polite):]
            break
    low = [w.casefold().strip(",") for w in words]
    # "swap that for X" -> "change that to X"
    if len(low) >= 4 and low[0] in SWAP_VERBS and low[1] in ("that", "it", "this") and low[2] in SWAP_LINKS:
        words = ["change", "that", "to", *words[3:]]
    # "can we do 3pm" -> "make it 3pm" (a correction's value offered as a question)
    for offer in OFFER_LEADS:
        if _starts(words, offer) and len(words) > len(offer) and lead:
            words = ["make", "it", *words[len(offer):]]
            end = end.replace("?", "")
            break
    # "same with parmesan" -> "and parmesan"; a day after "same for" is left to the day readers.
    for head in SAME_HEADS:
        n = len(head)
        if _starts(words, head) and len(words) > n + 1 and words[n].casefold() in SAME_LINKS:
            rest = words[n + 1:]
            if rest and rest[0].casefold() not in ("today", "tomorrow", "tonight") and not lead:
                words = ["and", *rest]
            break
    # "honey can go", "the eggs can come off": taking off an entry (only one just shown or named counts).
    for tail in GO_TAILS:
        if _ends(words, tail) and len(words) - len(tail) <= MAX_GO_WORDS:
            words = ["remove", *words[: -len(tail)]]
            break
    if words == body and renumbered:
        return " ".join([*lead, *words]) + end  # only a number said another way ("number two", "#2")
    if words == body:
        return without_hesitation(text)  # no rewrite: the message as said ("no more apples" stays)
    if words and words[0].casefold() in FOLLOW_VERBS:
        end = end.replace("?", "")  # "can you change it to X?" is a request, said as a question
    out = " ".join([*lead, *words]) + end
    return out if out != " ".join(text.split()) else text


# Thinking aloud while a question is open: no answer yet, and no request.
THINKING = frozenset({
    ("let", "me", "think"), ("hmm", "let", "me", "think"), ("good", "question"), ("uh",), ("um",), ("hmm",), ("hm",),
    ("let", "me", "see"), ("hmm", "let", "me", "see"), ("one", "sec"), ("one", "second"), ("just", "a", "sec"),
    ("give", "me", "a", "sec"), ("give", "me", "a", "second"), ("i'm", "not", "sure"), ("not", "sure"),
    ("hmm", "not", "sure"), ("let", "me", "check"), ("erm",),
})
# Pauses before a request that are not part of it: "hold on, what's on my list first".
PAUSES = (("hold", "on"), ("hang", "on"), ("one", "sec"), ("one", "second"), ("just", "a", "sec"))


def _plain(text: str) -> tuple[str, ...]:
    return tuple(w.casefold().strip(",.!?;:") for w in text.replace("\u2019", "'").split() if w.strip(",.!?;:"))


def thinking(text: str) -> bool:
    """Whether `text` only thinks aloud ("hmm, let me think", "good question", "uh")."""
    return len(text) <= MAX_REPHRASE_CHARS and _plain(text) in THINKING


def without_pause(text: str) -> str:
    """`text` without a pause that opens it: "hold on, what's on my list" -> "what's on my list"."""
    words = text.split()
    for pause in PAUSES:
        if _starts(words, pause) and len(words) > len(pause) + 1:
            return " ".join(words[len(pause):])
    return text


# Leads of taking back part of what was just asked, and the shapes that name the part.
UNWANTED_LEADS = (("on", "second", "thought"), ("actually",), ("oh",), ("wait",), ("hmm",), ("ok",), ("okay",), ("sorry",))
UNWANTED_HEADS = (("no",), ("forget", "the"), ("forget",), ("skip", "the"), ("skip",), ("leave", "out", "the"),
                  ("leave", "out"), ("without", "the"), ("without",), ("not", "the"))
UNWANTED_TAILS = (("are", "not", "needed"), ("is", "not", "needed"), ("not", "needed"), ("aren't", "needed"),
                  ("isn't", "needed"), ("are", "not", "necessary"),
                  # "the garlic can go", "the oranges can come off"
                  ("can", "go"), ("can", "come", "off"), ("can", "be", "removed"), ("has", "to", "go"),
                  ("can", "be", "crossed", "off"), ("can", "come", "out"))


def unwanted(text: str) -> str | None:
    """The entry a message says is not wanted after all ("actually no eggs" -> "eggs"), or None."""
    if len(text) > MAX_REPHRASE_CHARS:
        return None
    words = [w for w in text.replace("\u2019", "'").strip().rstrip("?!.").split() if w.strip(",")]
    for lead in UNWANTED_LEADS:
        if _starts(words, lead) and len(words) > len(lead):
            words = words[len(lead):]
            break
    for head in UNWANTED_HEADS:
        if _starts(words, head) and len(words) > len(head):
            rest = words[len(head):]
            break
    else:
        rest = next((words[: -len(t)] for t in UNWANTED_TAILS if _ends(words, t)), [])
    found = " ".join(rest).strip(" ,")
    return found if found and len(found.split()) <= MAX_VALUE_WORDS and found.casefold() not in ("it", "that", "them") else None


# Why, said after the request: "remove the sugar, we have some", "delete that, I can't go". The
# clause is a subject, a verb of having, needing or going, and only words that point back.
REASON_SUBJECTS = frozenset("i we i've we've".split())
REASON_ADVERBS = frozenset("already still really just actually".split())
REASON_VERBS = (("have",), ("got",), ("'ve", "got"), ("can't",), ("cant",), ("cannot",), ("can", "not"), ("won't",),
                ("wont",), ("don't", "need"), ("dont", "need"), ("do", "not", "need"), ("no", "longer", "need"),
                ("have", "enough"), ("bought",), ("already", "bought"))
REASON_REST = frozenset("some it them that this one any enough plenty lots loads heaps of more go make come attend do left "
                        "at home anymore any more there already now today after all".split())
MAX_REASON_WORDS = 7


def without_reason(text: str) -> str:
    """`text` without a reason clause after its last comma ("remove the sugar, we have some")."""
    if len(text) > MAX_REPHRASE_CHARS or "," not in text:
        return text
    head, _, tail = text.rpartition(",")
    words = [w.casefold() for w in tail.replace("\u2019", "'").strip().rstrip("?!.").split()]
    if len(head.split()) < 2 or not words or len(words) > MAX_REASON_WORDS or words[0] not in REASON_SUBJECTS:
        return text
    rest = words[1:]
    while rest and rest[0] in REASON_ADVERBS:
        rest = rest[1:]
    if words[0].endswith("'ve"):
        rest = ["'ve", *rest]
    verb = next((v for v in REASON_VERBS if tuple(rest[: len(v)]) == v), None)
    if verb is None or not set(rest[len(verb):]) <= REASON_REST:
        return text
    return head.rstrip()


# A thing asked for with a polite word and nothing else: "milk pls", "two coffees please".
ORDER_WORDS = frozenset("please pls plz thanks thx ty".split())
MAX_ORDER_WORDS = 4
NOT_A_THING = frozenset("what what's whats when where which who how why yes no yeah nope ok okay thanks thank hi hello "
                        "hey bye it that this them those me you my i".split())


def ordered(text: str) -> str | None:
    """The thing a message asks for by naming it with please ("milk pls" -> "milk"), or None."""
    if len(text) > MAX_REPHRASE_CHARS:
        return None
    words = [w.strip(",.!?") for w in text.replace("\u2019", "'").split()]
    words = [w for w in words if w]
    low = [w.casefold() for w in words]
    if len(low) < 2 or (low[-1] not in ORDER_WORDS and low[0] not in ("please", "pls", "plz")):
        return None
    thing = [w for w, lw in zip(words, low, strict=True) if lw not in ORDER_WORDS]
    if not thing or len(thing) > MAX_ORDER_WORDS or {w.casefold() for w in thing} & NOT_A_THING:
        return None
    return " ".join(thing)
