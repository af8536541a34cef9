"""Yes and no in the many ways people say them, read clause by clause.

"hmm, no", "no, I still need it", "wait, don't do that", "yes I'm sure", "that's fine",
"sure, why not": the message is cut into clauses at its punctuation; leading interjections
("hmm", "well", "oh") are passed over; the first clause that says something must be a yes or
a no (a phrase of the lexicon, with a typo forgiven by rapidfuzz), and the clauses after it
may only add a reason or say it back ("I still need it", "clear it"), never a request of their
own ("no, show my notes" is a new request, read elsewhere).
"""

from __future__ import annotations

from rapidfuzz import fuzz, process

from dreamer.sidekick.planner.language.text import prepare, tokenize

MAX_ANSWER_WORDS = 12  # a longer message is no bare answer
INTERJECTIONS = frozenset("hmm hm um umm uh er erm well oh ah ahh so okay ok actually honestly hey eish ag".split())
YES = frozenset({
    "yes", "yeah", "yea", "yep", "yup", "ya", "y", "sure", "ok", "okay", "k", "kk", "confirm", "confirmed", "correct",
    "right", "absolutely", "definitely", "certainly", "of course", "go ahead", "go for it", "do it", "please do",
    "proceed", "fine", "alright", "all right", "sounds good", "sounds great", "great", "perfect", "why not",
    "go", "go on", "carry on", "sure thing", "yes please", "you bet", "make it so", "that is fine", "that is ok",
    "that is okay", "that is right", "that works", "works for me", "fine by me", "i am sure", "i am certain",
    "yes i am sure", "i do", "i did", "please", "let us do it", "let us go", "do it now", "go ahead please",
    "yes do it", "yes go ahead", "yeah sure", "sure go ahead", "ok do it", "ok go ahead", "affirmative", "indeed",
    "yes definitely", "totally", "for sure", "exactly", "agreed", "deal", "green light", "approved", "proceed please",
    # in Scots and other people's first languages: "aye, go on", "ja, please do it", "sí"
    "aye", "aye go on", "ay", "ja", "jawohl", "si", "sí", "oui", "da", "yass", "yasss", "yessir", "please do it",
    "yes please do it", "do it please", "go ahead and do it", "yeah go on", "yeah do it", "sure do it",
    # Hindi and Indian English, and how people type "ok": "haan", "ji", "kindly proceed", "okie", "okey"
    "haan", "han", "haan ji", "ji", "ji haan", "theek hai", "thik hai", "kindly proceed", "kindly do",
    "kindly do it", "please proceed", "okie", "okey", "okie dokie", "okey dokey", "okay dokey", "oki", "okk",
    "yes sir", "yes maam", "yes ma'am", "yeppers", "yessss", "ya sure", "ya do it", "bet", "say less",
    # Singapore and Malaysia ("can", "ok can"), the Philippines ("sige", "oo", "opo"), South Africa ("ja nee"
    # is no; "yebo"), Nigeria ("ehen", "oya")
    "can", "ok can", "can can", "sure can", "can do", "sige", "sige na", "sige go ahead", "oo", "opo", "yebo",
    "ehen", "oya", "oya go ahead", "sweet as", "righto", "too right",
    # Ireland's "grand" is fine: "grand, go on", "grand so"
    "grand", "grand so", "grand go on", "go on so", "go on then",
})
NO = frozenset({
    "no", "n", "nope", "nah", "no no", "do not", "don't", "dont", "cancel", "stop", "abort", "wait", "hold on",
    "hold off", "never mind", "nevermind", "not now", "not yet", "not really", "no thanks", "no thank you", "no way",
    "absolutely not", "definitely not", "better not", "rather not", "i would rather not", "i'd rather not",
    "do not do it", "do not do that", "please do not", "i changed my mind", "changed my mind", "on second thought",
    "leave it", "leave it as it is", "leave it as is", "leave them", "keep it", "keep them", "keep that",
    "keep everything", "forget it", "forget about it", "skip it", "skip that", "no need", "not necessary",
    "do not bother", "negative", "no stop", "stop stop", "wait no", "nope leave it", "no leave it", "no keep it",
    "not that", "scratch that", "cancel that", "do not touch it", "leave it alone",
    # "naw, forget it", "nein, please don't", "nae chance"
    "naw", "nae", "nae chance", "nein", "non", "nop", "naur", "nah mate", "no chance", "not a chance",
    "please do not do it", "no please do not", "best not", "let us not", "maybe not",
    "nahi", "nahin", "na", "mat karo", "no ji", "nah fam", "hard pass", "pass", "nvm", "nope nope",
    "cannot", "no can", "don't want", "dont want", "tak nak", "hindi", "wag na", "huwag", "leave am", "no o",
    "yeah nah", "nah yeah nah", "ja nee", "leave it be", "no wait", "nah wait", "no hold on",
})
# A question opens with an auxiliary and whom it is about: "wait, am I free on Friday" is a request of its own.
_ASKING_AUX = frozenset("am is are do does did can could will would have has".split())
_ASKED_ABOUT = frozenset("i we you there my our it".split())
# Words a clause after the yes or no may not hold: they start a request of its own.
REQUEST_WORDS = frozenset(
    "add put show find plan suggest what how when where who save note remind schedule search list tell open book "
    "buy get create make move remove delete".split()
)
FUZZY_MIN = 88  # rapidfuzz ratio for a clause said with a typo ("yse", "go ahaed")


def clauses(text: str) -> list[list[str]]:
    """The message's words cut at its punctuation, lower-cased, contractions expanded."""
    out: list[list[str]] = [[]]
    for word in tokenize(prepare(text)):
        if word.kind in ("word", "num", "ord"):
            out[-1].append(word.low)
        if word.sep and out[-1]:
            out.append([])
    return [c for c in out if c]


def _kind(clause: list[str]) -> str | None:
    said = " ".join(clause)
    if said in YES:
        return "yes"
    if said in NO:
        return "no"
    if len(said) < 4:
        return None  # a short word that is not in the lexicon is not forgiven: "go" yes, "gi" nothing
    best = process.extractOne(said, [*YES, *NO], scorer=fuzz.ratio, score_cutoff=FUZZY_MIN)
    if best is None:
        return None
    return "yes" if best[0] in YES else "no"


def _head(clause: list[str]) -> tuple[str | None, list[str]]:
    """A clause that opens with a yes or no phrase and says more: ("no", ["i", "still", ...])."""
    for n in (3, 2, 1):
        if len(clause) > n:
            kind = _kind(clause[:n])
            if kind is not None and " ".join(clause[:n]) in (YES | NO):
                return kind, clause[n:]
    return None, clause


def answer_kind(text: str) -> str | None:
    """ "yes", "no", or None when the message is not a bare yes or no (with reasons) at all."""
    parts = clauses(text)
    if not parts or sum(len(c) for c in parts) > MAX_ANSWER_WORDS:
        return None
    while len(parts) > 1 and all(w in INTERJECTIONS for w in parts[0]) and _kind(parts[0]) is None:
        parts = parts[1:]  # "hmm, no"; a lone "ok" is still read
    first = parts[0]
    while len(first) > 1 and first[0] in INTERJECTIONS and _kind(first) is None:
        first = first[1:]  # "actually no", "well yes"
    kind = _kind(first)
    rest = parts[1:]
    if kind is None:
        kind, tail = _head(first)
        if kind is None:
            return None
        rest = [tail, *rest]
    for clause in rest:
        if _kind(clause) not in (None, kind):
            return None  # "yes, no": not an answer
        if _kind(clause) is None and (any(w in REQUEST_WORDS for w in clause) or (
                len(clause) > 2 and clause[0] in _ASKING_AUX and clause[1] in _ASKED_ABOUT)):
            return None  # "no, show my notes", "wait, am I free on Friday": a request of its own follows
    return kind
