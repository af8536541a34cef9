"""Small talk: greetings, thanks, "how are you", goodbyes. Not a request for any agent.

Sidekick's dialogue answers these in a sentence of its own (sidekick/dialogue/smalltalk.py);
the planner must not read them as requests either ("good morning" is no morning briefing,
"ok cool" no call at all), so the words live here, where both can read them.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

GREETING = re.compile(r"^(?:hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening|day)|greetings|hallo|heya|sup|"
                      r"what's up|whats up)(?:\s+(?:there|sidekick|buddy|friend|again|everyone))?\s*[!.,]*\s*$", re.I)
_ACK_WORDS = (r"(?:ok(?:ay)?|great|cool|perfect|awesome|nice|lovely|brilliant|excellent|wonderful|that's great|good|"
              r"got it|alright|all right|fine|noted|understood|sounds good|right|sure|nice one|good one|sweet as|grand)")
THANKS = re.compile(rf"^(?:{_ACK_WORDS}\W*)*+(?:thanks?(?: you)?(?: (?:so|very) much)?(?: a lot)?|thx|ty|cheers|chur|ta|"
                    r"much appreciated|appreciate it)(?:\s+(?:sidekick|buddy|mate|bro|love|heaps))?\s*[!.,]*\s*$", re.I)
# "ok", "cool", "got it": the user has read the answer; nothing to thank them for.
ACK = re.compile(rf"^(?:{_ACK_WORDS}\W*)++(?:\s*(?:sidekick|buddy|mate|bro))?\s*$", re.I)
DONE = re.compile(r"^(?:(?:ok(?:ay)?|no)\W+)?(?:that's all|that is all|all good|nothing else|that's it|that is it"
                  r"|never ?mind|nvm|forget it|don't worry(?: about it)?|dont worry(?: about it)?|no worries)"
                  r"(?: for now)?\W*$", re.I)
BYE = re.compile(r"^(?:bye|goodbye|good night|see you(?: later)?|see ya|later|ciao|that's it for now|have a good one"
                 r"|have a (?:good|nice|great) (?:day|evening|night|weekend)|take care|catch you later|ttyl)\W*$", re.I)
HOW_ARE_YOU = re.compile(r"^(?:hi\W+|hey\W+)?how(?: are|'re|re)? (?:you|ya|u|things|is it going|do you do)(?: doing| going)?(?: today)?\W*$",
                         re.I)
WHO = re.compile(r"^(?:who|what) are you\W*$", re.I)
MAX_SMALL_TALK_CHARS = 300  # tests/security/test_regex_backtracking.py fuzzes these patterns at this length


def chatter_reply(text: str) -> str | None:
    """The short answer to small talk (not a request for help); None when `text` is not small talk."""
    said = " ".join(text.replace("’", "'").split())
    if not said or len(said) > MAX_SMALL_TALK_CHARS:  # small talk is short; no pattern here sees a long message
        return None
    if GREETING.match(said):
        return "Hi! What can I do for you? Ask \"what can you do\" to see what your agents handle."
    if HOW_ARE_YOU.match(said):
        return "All good here, thanks. What can I do for you?"
    if WHO.match(said):
        return "I'm Sidekick: I run your agents for you. Ask \"what can you do\" to see what they handle."
    if BYE.match(said):
        return "Bye for now!"
    if THANKS.match(said):
        return "You're welcome!"
    if DONE.match(said):
        return "OK, I'm here when you need me."
    if ACK.match(said):
        return "Good. Anything else?"
    found = _by_clauses(said)
    words = said.split(" ", 2)
    if found is None and len(words) > 1 and words[0].strip(",.!").casefold() in _HEDGES:
        # "yeah no worries", "yeah nah all good", "ok thanks": the hedge first says nothing of its own
        # (only small talk is read so: "yeah add milk" stays a request)
        rest = said[len(words[0]):].lstrip(" ,")
        if words[1].strip(",.!").casefold() in _HEDGES and len(words) > 2:
            rest = words[2]  # "yeah nah all good"
        return chatter_reply(rest) if rest else None
    return found


# Words of agreement or hedging that open small talk in many Englishes.
_HEDGES = frozenset({"yeah", "yea", "yes", "yah", "yep", "yup", "ya", "aye", "nah", "naw", "ok", "okay", "sure", "right", "oh", "ah"})


# Small talk said in pieces ("thanks, that's all", "hey sidekick, how are you?", "thank you, bye"):
# each clause is looked up in this lexicon (a typo forgiven); when every clause is small talk, the
# reply answers the weightiest kinds in one or two short sentences.
LEXICON: dict[str, tuple[str, ...]] = {
    "greeting": ("hi", "hello", "hey", "hiya", "howdy", "morning", "good morning", "evening", "good evening",
                 "afternoon", "good afternoon", "hey sidekick", "hi sidekick", "hello sidekick", "hey there", "hi there",
                 "nice to meet you", "happy friday", "happy monday", "yo", "greetings"),
    "thanks": ("thanks", "thank you", "thanks a lot", "thanks so much", "thank you so much", "many thanks", "cheers",
               "thx", "ty", "much appreciated", "appreciate it", "thanks a bunch", "thanks again", "thank you very much",
               "thanks mate", "cheers mate", "ta", "ta very much", "tysm", "thank u", "thanks love", "cheers love"),
    "bye": ("bye", "goodbye", "bye bye", "see you", "see you later", "see you tomorrow", "see ya", "later", "ciao",
            "good night", "night", "talk later", "talk to you later", "catch you later", "have a good day",
            "have a nice day", "take care", "ok bye"),
    "done": ("that is all", "that's all", "that is it", "that's it", "all good", "nothing else", "nothing more",
             "that is all for now", "that's all for now", "i am done", "i'm done", "all done", "that will be all",
             "no that is it", "no that's it", "that's everything", "that is everything", "never mind", "nevermind", "nvm",
             "forget it"),
    "how": ("how are you", "how are you doing", "how are things", "how is it going", "how's it going",
            "how do you do", "how are you today", "what's up", "whats up", "how have you been", "you ok", "are you ok",
            "how're you", "how're you doing", "how're you doing today", "how you doing", "how are you doing today",
            "what's good", "whats good", "what's new", "wassup", "sup", "i am fine", "i'm fine", "im fine", "not bad",
            "what about you", "how about you", "and you", "and yourself"),
    "who": ("who are you", "what are you", "what is your name", "what's your name", "are you a robot", "are you a bot",
            "are you human", "are you real", "are you an ai", "who made you", "who built you"),
    "praise": ("you're the best", "you are the best", "great job", "good job", "well done", "nice work", "good bot",
               "you're awesome", "you are awesome", "love it", "i love you", "you rock", "amazing", "you're great",
               "you are great", "you're a star", "brilliant work"),
    "laugh": ("lol", "haha", "hahaha", "lmao", "hehe", "funny", "rofl"),
    "apology": ("sorry", "my bad", "oops sorry", "sorry about that", "apologies"),
    "declined": ("no thanks", "no thank you", "no", "nope", "nah", "not now", "no need", "nothing", "nothing thanks",
                 "not really", "no that's fine", "no it's fine", "i'm good", "i am good", "all set"),
    "welcome": ("you're welcome", "you are welcome", "no problem", "no worries", "np", "anytime"),
    # how the speaker feels, said to no one in particular: "I AM SO TIRED", "I'm knackered"
    "feeling": tuple(f"{who} {how}{what}" for who in ("i'm", "im", "i am") for how in ("", "so ", "really ", "very ", "soo ")
                     for what in ("tired", "exhausted", "knackered", "shattered", "wrecked", "bored", "stressed",
                                  "stressed out", "sleepy", "beat", "done in", "wiped out", "fed up", "sick of it")),
    # words that only hold the floor, beside another kind: "ok so basically, no wait, never mind"
    "filler": ("ok so", "ok so basically", "so basically", "basically", "no wait", "wait", "hmm", "um", "anyway",
               "so", "oh", "ugh"),
    # the day and the weather, remarked on in passing: "lovely day for it eh", "what a day"
    "weather": ("lovely day", "lovely day for it", "nice day", "nice day for it", "beautiful day", "gorgeous day",
                "what a day", "lovely weather", "nice weather", "cold one today", "hot one today", "bit nippy",
                "lovely day eh", "lovely day for it eh", "nice day eh", "what a day eh", "long day", "what a week"),
}
_KINDS = {phrase: kind for kind, phrases in LEXICON.items() for phrase in phrases}
_PHRASES = tuple(_KINDS)
_ORDER = ("thanks", "praise", "apology", "greeting", "how", "who", "declined", "done", "bye", "laugh", "welcome",
          "weather", "feeling")
REPLIES = {
    "thanks": "You're welcome!",
    "praise": "Thank you!",
    "apology": "No problem at all.",
    "how": "All good here, thanks.",
    "who": "I'm Sidekick: I run your agents for you.",
    "done": "OK, I'm here when you need me.",
    "bye": "Bye for now!",
    "greeting": "Hi!",
    "laugh": "Glad that made you smile.",
    "welcome": "Anything else I can do?",
    "declined": "OK, nothing done.",
    "weather": "It sure is.",
    "feeling": "Sorry to hear that.",
}
FUZZY_SMALL_TALK = 88
MAX_SMALL_TALK_WORDS = 10


def _by_clauses(said: str) -> str | None:
    # (a laugh runs into what follows it unpunctuated: "lol ty", "haha thanks")
    pieces = [" ".join(p.split()).casefold() for p in re.split(r"[,;.!?:]+|\s[-–]\s|(?<=\blol)\s|(?<=haha)\s|(?<=lmao)\s|(?<=hehe)\s", said)
              if p.strip()]
    if not pieces or sum(len(p.split()) for p in pieces) > MAX_SMALL_TALK_WORDS:
        return None
    kinds: set[str] = set()
    for piece in pieces:
        kind = _KINDS.get(piece)
        if kind is None and len(piece) >= 4:
            best = process.extractOne(piece, _PHRASES, scorer=fuzz.ratio, score_cutoff=FUZZY_SMALL_TALK)
            kind = _KINDS[best[0]] if best else None
        if kind is None:
            return None  # a piece of its own: a request, or something to say we cannot do
        kinds.add(kind)
    kinds.discard("filler")  # (it only holds the floor: alone, or beside nothing of small talk, it says nothing)
    if not kinds:
        return None
    if len(kinds) > 1:
        kinds.discard("laugh")  # "lol ty" thanks; the laugh only goes with it
    said_back = [REPLIES[k] for k in _ORDER if k in kinds][:2]
    if not kinds & {"bye", "done", "welcome", "declined"}:
        said_back.append("What can I do for you?" if kinds & {"greeting", "how", "who"} else "Anything else?")
    return " ".join(dict.fromkeys(said_back))
