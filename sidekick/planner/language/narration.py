"""A clause that tells what happened: "our freezer died overnight", "the kids were up half the night",
"we lost almost everything", "picked them up on the way home".

Said before a request, such a clause is the story that led to it, never a request of its own; said after a
pronoun's comma, it reports ("..., bought them already") and points at nothing. A verb of the past is what
gives it away: a request is said in the imperative or with a modal ("add", "can you put").
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.chunks import subject_verb

# Past forms that do not end in -ed.
_PAST_FORMS = frozenset({"got", "bought", "found", "took", "ate", "had", "did", "made", "brought", "gave", "left",
                         "forgot", "threw", "sold", "drank", "done", "was", "were", "went", "came", "lost", "broke",
                         "ran", "fell", "saw", "said", "told", "spent", "sent", "thought", "knew", "kept", "slept", "been"})
# Words in -ed that are no past: "need", "bed", "shed" ...
_NOT_PAST = frozenset({"need", "feed", "weed", "seed", "speed", "bleed", "breed", "shed", "bed", "red", "shred",
                       "embed", "exceed", "proceed", "succeed", "indeed", "deed", "heed", "reed", "sled"})
# Who or what it happened to, first: a person, or "my/our/the <thing>".
_TELLER = frozenset({"i", "we", "you", "he", "she", "they", "it", "that", "this", "everyone", "everybody", "somebody", "someone",
                     "kids", "my", "our", "the", "his", "her", "their"})
MAX_SUBJECT_WORDS = 3


def past_form(word: str) -> bool:
    """`word` (lower case) is a verb's past form."""
    return word in _PAST_FORMS or (word.endswith("ed") and word not in _NOT_PAST and len(word) >= 4)


# A sigh or a cry before the story: "ugh the kids have been feral since lunch".
_CRIES = frozenset({"ugh", "argh", "oh", "omg", "man", "god", "gosh", "sigh", "honestly", "well", "so", "lol", "welp"})


def narrates(clause: str) -> bool:
    """The clause opens with who or what it is about, then a verb of the past: it tells, it asks nothing."""
    words = re.findall(r"[a-z']+", clause.casefold())
    while words and words[0] in _CRIES:
        words = words[1:]
    if not words or words[0] not in _TELLER:
        return False
    return any(past_form(w) for w in words[1:1 + MAX_SUBJECT_WORDS + 1])


# How something was or is, not what was done: "that recipe was a huge hit", "we had tacos for dinner", "my
# nan's recipe book is falling apart", "Gran's scone recipe never fails", "my husband reads the list like ...".
_HOW_IT_WENT = frozenset({"was", "were", "had", "loved", "liked", "enjoyed", "hated",
                          "is", "are", "never", "always", "reads", "fails", "fell", "looks", "seems", "love", "went"})
# Said of the past, these make a day no thing to come: "the meeting with the client went really well today".
_WENT = frozenset({"was", "were", "had", "went", "loved", "liked", "enjoyed", "hated"})
_THIS_DAY = frozenset({"today", "tonight", "this morning", "this afternoon", "this evening"})
# Words that make a story a request after all: something done or changed that a list or a calendar keeps
# ("the dentist was cancelled", "we had to buy milk"), or what is to come ("was moved to tomorrow").
_TO_DO = re.compile(
    r"\b(?:cancell?ed|called off|moved|postponed|rescheduled|pushed|finished|done|bought|booked|sorted|paid|"
    r"completed|called|sent|picked|collected|returned|fixed|cleaned|out|gone|empty|ran|run|used|need|needs|to buy|"
    r"tomorrow|tonight|today|next|this (?:morning|afternoon|evening|week|weekend)|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|at \d|\d ?(?:am|pm)|\d+(?:st|nd|rd|th)|remind|remember|add|put"
    # where a thing goes or comes from, and a question inside it ("I was wondering what's on my to-do list")
    r"|(?:on|to|onto|off|from|in) (?:the |my |our )?(?:[\w-]+ )?list|what|what's|whats|when|where|which|how|who|whether"
    r"|january|february|march|april|june|july|august|september|october|november|december|low|short|finish|off|left"
    # said to someone: "I was wondering if you could show me ..." asks
    r"|you|u|please|pls|show|tell|give|find|help)\b", re.IGNORECASE)


def tells_how_it_went(text: str) -> bool:
    """The message tells how something was ("that shakshuka recipe was a huge hit last night", "we had tacos
    for dinner, everyone was happy for once") and holds nothing done, changed or to come."""
    if "?" in text:
        return False
    first = re.split(r"[,;.!]", text, maxsplit=1)[0]
    words = re.findall(r"[a-z']+", first.casefold())
    said = {m.group(0).casefold() for m in _TO_DO.finditer(text)}
    # (who or what it is about may be said at more length here: "the meeting with the client went ...")
    if said and not (said <= _THIS_DAY and _WENT & set(words[1:1 + MAX_SUBJECT_WORDS + 3])):
        return False  # (only a day of the past said, after a verb of how it went, leaves it a story)
    # (whose it is opens it too: "Gran's scone recipe never fails"; or any thing, then its verb in the past:
    # "book club was fun last night")
    return bool(words) and (words[0] in _TELLER or words[0].endswith("'s") or _told_of(first)) and any(
        w in _HOW_IT_WENT for w in words[1:1 + MAX_SUBJECT_WORDS + 1]) or bool(said) and words[0] in _TELLER


def _told_of(clause: str) -> bool:
    verb = subject_verb(clause)
    return verb is not None and (verb in _WENT or verb.endswith("ed"))


def asks_or_plans(text: str) -> bool:
    """The text holds a word of something to do, to come, or asked of someone ("you", "please", "add", a day)."""
    return _TO_DO.search(text) is not None
