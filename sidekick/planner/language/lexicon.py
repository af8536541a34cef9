"""Word lists the offline planner knows without any agent: fillers, synonyms, numbers.

These are facts about everyday English requests, not about particular agents:
a synonym here must hold in any domain ("supper" is "dinner" everywhere).
"""

from __future__ import annotations

# Words that carry little of what a request is about. As template words they weigh
# little; as words the user added they cost little ("could you please ...").
FILLERS: frozenset[str] = frozenset(
    """
    a an the to for of on in at by my me i you your please pls plz can could would will
    do does did is are be am it this that these those some any just also hey hi hello sidekick
    ok okay so now and with from up our we us let s what want like kindly there
    thanks thank quickly real really maybe perhaps go going need gonna wanna should might must shall
    alexa siri google cortana
    """.split()  # the last line: people used to other assistants address Sidekick by their names
)

# Words that turn what follows into its opposite ("don't add", "without adding").
NEGATIONS: frozenset[str] = frozenset({"not", "no", "without", "never", "skip", "dont", "nope"})

# Words that stand for something said before ("add them", "the same").
PRONOUNS: frozenset[str] = frozenset(
    {"it", "them", "they", "those", "these", "that", "this", "everything", "all", "stuff", "thing", "one",
     "anything", "something", "nothing"}
)

# Contractions, expanded before anything else ("what's" -> "what is").
CONTRACTIONS: dict[str, tuple[str, ...]] = {
    "what's": ("what", "is"), "whats": ("what", "is"), "where's": ("where", "is"),
    "when's": ("when", "is"), "who's": ("who", "is"), "how's": ("how", "is"),
    "it's": ("it", "is"), "that's": ("that", "is"), "there's": ("there", "is"),
    "here's": ("here", "is"), "let's": ("let", "us"), "lets": ("let", "us"),
    "i'm": ("i", "am"), "im": ("i", "am"), "i've": ("i", "have"), "i'd": ("i", "would"),
    "i'll": ("i", "will"), "you're": ("you", "are"), "we're": ("we", "are"),
    "we've": ("we", "have"), "they're": ("they", "are"),
    "don't": ("do", "not"), "dont": ("do", "not"), "doesn't": ("does", "not"),
    "didn't": ("did", "not"), "isn't": ("is", "not"), "aren't": ("are", "not"),
    "can't": ("can", "not"), "cant": ("can", "not"), "cannot": ("can", "not"),
    "won't": ("will", "not"), "wont": ("will", "not"), "shouldn't": ("should", "not"),
    "wouldn't": ("would", "not"), "haven't": ("have", "not"), "wasn't": ("was", "not"),
    "gimme": ("give", "me"), "lemme": ("let", "me"), "wanna": ("want", "to"),
    "gonna": ("going", "to"),
    "what've": ("what", "have"), "where've": ("where", "have"), "who've": ("who", "have"),
    "what'd": ("what", "did"), "where'd": ("where", "did"), "how'd": ("how", "did"),
    "you've": ("you", "have"), "they've": ("they", "have"), "hasn't": ("has", "not"),
    "weren't": ("were", "not"), "couldn't": ("could", "not"),
}

# The texting register's spellings, read as the words they stand for before anything else
# ("can u add", "ideas w eggs", "how many ppl in sales rn"): they are how people type to a chat,
# in any domain, and unknown to the typo reader (too short to correct safely).
SHORTHANDS: dict[str, tuple[str, ...]] = {
    "u": ("you",), "ur": ("your",), "r": ("are",), "ya": ("you",), "teh": ("the",), "w": ("with",),
    "thx": ("thanks",), "ty": ("thanks",), "pls": ("please",), "plz": ("please",), "rn": ("right", "now"),
    "smth": ("something",), "sth": ("something",), "ppl": ("people",), "b4": ("before",), "tmrw": ("tomorrow",),
    "tmr": ("tomorrow",), "tmrrw": ("tomorrow",), "2day": ("today",), "2nite": ("tonight",), "tonite": ("tonight",),
    "dept": ("department",), "depts": ("departments",), "abt": ("about",), "msg": ("message",), "pic": ("picture",),
    "hc": ("headcount",), "ytd": ("this", "year"), "mins": ("minutes",), "hrs": ("hours",),
    "wot": ("what",), "wat": ("what",), "wut": ("what",),
    "wi": ("with",), "wiv": ("with",), "wif": ("with",),  # Scots and London "with"
}
# "add bananas 2 the list": a 2 right before one of these is the word "to", not a number.
TO_BEFORE: frozenset[str] = frozenset({"the", "teh", "my", "your", "our", "ur", "his", "her", "their"})

# Groups of words and phrases that mean the same in a request; the first is the head
# every other member is read as. Phrases are matched word by word after stemming.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("add", "put", "include", "insert", "append", "stick", "throw", "pop", "chuck", "toss", "whack", "bung"),
    ("buy", "purchase", "pick up", "get some", "restock", "grab"),
    # ... and done buying, said in the past ("already picked up eggs"): the remove list's "bought", not "buy"
    ("bought", "picked up", "purchased", "grabbed"),
    ("remove", "delete", "erase", "drop", "take off", "cross off", "strike", "scratch",
     "get rid of", "take out", "cross out", "tick off", "check off", "scrap", "ditch", "nix", "scratch off",
     "knock off", "strike off", "bin off", "yeet"),
    ("schedule", "pencil in", "set up", "book in", "line up", "slot in", "diarise", "diarize"),
    ("move", "change", "rearrange", "rebook", "reschedule"),
    ("watch", "monitor", "keep an eye", "keep tabs on", "keep track of"),  # phrases of at most 3 words
    ("notify", "let me know", "give me a heads up"),
    # "notes mentioning Mia" introduces a topic; "when the page mentions X" says what it says.
    ("about", "regarding", "concerning", "mentioning", "on the subject of", "to do with"),
    ("say", "contain", "mention"),
    # Questions of a measure are one question word each: "how long do I boil an egg" asks a duration,
    # and is no "how do I make {name}" with the name "long do I boil an egg".
    ("how long", "how much time"), ("how often",), ("how far",), ("how old",),
    ("instructions", "walk me through", "talk me through", "steps for", "method for"),
    ("recently", "lately", "of late"),
    ("average", "avg"),
    ("write", "written", "wrote"),
    ("show", "display", "view", "see", "tell me", "read", "read out", "pull up", "bring up",
     "look at", "give me", "list out", "check", "send me"),
    ("grocery", "shopping", "groceries", "groc", "grocs", "shopping-list", "supermarket list", "basket", "grocerylist", "shoppinglist"),  # not "cart": one letter from "cat", "car", "card"
    # Where groceries are bought, by kind or by the chain's name ("anything we need from tesco"); not "store",
    # which is the verb "save" too, nor "target", a word of its own.
    ("supermarket", "shop", "shops", "grocer", "grocers", "tesco", "sainsburys", "sainsbury", "asda", "aldi", "lidl",
     "waitrose", "morrisons", "walmart", "costco", "kroger", "safeway", "publix", "wegmans", "woolies", "woolworths",
     "coles", "iga", "heb", "meijer", "dmart", "bigbasket", "big bazaar", "reliance fresh", "spar", "co-op"),
    ("dinner", "supper", "evening meal"),
    ("cook", "make", "prepare", "prep", "fix", "whip up", "rustle up", "knock up"),
    ("happening", "going on", "taking place"),
    ("note", "memo", "jot down", "write down", "note down", "jot", "notes", "memos", "jot this", "make a memo",
     "written down", "wrote down", "jotted down", "noted down"),
    ("todo", "to-do", "todos", "to-dos"),
    ("calendar", "agenda", "diary", "planner", "appointments", "appointment book", "cal", "gcal"),
    ("event", "appointment", "meeting", "appt", "engagement"),
    ("find", "search", "look up", "look for", "lookup", "locate", "dig up"),
    ("save", "store", "keep", "bookmark", "stash"),
    ("clear", "empty", "wipe", "reset", "clean out", "wipe out", "nuke", "start over", "start fresh"),
    ("suggest", "recommend", "propose", "idea", "ideas", "suggestion", "inspiration"),
    ("quick", "fast", "speedy", "easy", "simple", "effortless"),
    ("done", "finished", "completed", "complete", "sorted"),
    ("minute", "min", "mins"),
    ("hour", "hr", "hrs"),
    ("article", "page", "link", "story", "webpage", "post", "website", "site", "web page"),
    ("tag", "label", "hashtag"),
    ("recent", "latest", "last", "newest", "most recent"),
    ("need", "want", "require", "could use", "could do with"),
    ("remote", "wfh", "work from home", "worked from home", "working from home", "home office"),
    ("briefing", "summary", "rundown", "overview", "brief", "digest", "lowdown"),
    ("vegetarian", "veggie", "meat-free", "meatless"),
    ("everything", "all", "all items", "every item"),
    ("tomorrow", "tmrw", "tmr", "tmw"),
    ("today", "2day"),
    ("recipe", "dish", "meal"),
    ("plan", "organise", "organize", "sort out", "decide", "figure out", "work out", "sort us out", "sort me out"),
    ("pick", "choose", "select"),
    ("what", "which"),
    ("to", "until", "till", "til"),
    ("now", "right now", "right away", "at the moment", "currently"),
    ("a", "an"),
)

# Heads above that are verbs: a yes/no parameter named for one ("add_to_grocery_list") is set
# only by a clause that says it ("... and add the ingredients"), not by "on the shopping list".
VERB_HEADS: frozenset[str] = frozenset({"add", "buy", "remove", "show", "cook", "find", "save", "clear", "suggest",
                                        "plan"})

# Words any domain uses: verbs that take any object ("book a table", "book a dentist"; "buy
# milk", "buy tickets"; "put it on the list", "put the radio on"), question and quantity words,
# units of time. A request whose template words are all of these (and fillers) has said
# nothing of what a function is about: its other words must say it (meaning.generic_veto).
GENERIC_WORDS: frozenset[str] = frozenset(
    """
    add put buy get got book order make set create need want have has had do take
    give show play start stop turn switch call send pick grab reserve arrange keep tell help
    bring fetch run open close check new another more less track cancel look remove delete
    how many much who whom what which when where why whose
    is are was were be been being does did
    highest lowest most least fewest biggest smallest best worst top
    number count total minute hour day week month year time
    user thing something anything one item people person everyone everybody
    next last first this coming upcoming soon again
    """.split()
)

# A message that opens with one of these asks something ("what have I got today", "when's my
# dentist"); one that opens with an auxiliary and a person asks too ("do I have plans friday").
# Such a message is rarely the statement of a template that opens otherwise ("I have {title} {start}").
# "any meetings tomorrow?", "anything on my list?": a request opening with "any" asks whether there is.
QUESTION_WORDS: frozenset[str] = frozenset({"what", "when", "where", "which", "who", "whom", "whose", "how", "why",
                                            "any", "anything"})
QUESTION_AUXILIARIES: frozenset[str] = frozenset({"do", "does", "did", "am", "is", "are", "was", "were", "have", "has"})
QUESTION_SUBJECTS: frozenset[str] = frozenset({"i", "we", "you", "my", "there", "it", "anything", "any"})

# Nouns that, opening a request, are the verb of the command: "list my notes" is "show my
# notes", "place cream crackers on the list" is "add ...". Read there as both, so "list" still matches the noun in a pattern's "grocery list".
OPENING_VERBS: dict[str, str] = {"list": "show", "place": "add"}

UNITS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "a": 1, "an": 1, "single": 1, "couple": 2, "dozen": 12,
}
TENS: dict[str, int] = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
SCALES: dict[str, int] = {"hundred": 100, "thousand": 1000}
ORDINALS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}

# Words that join two requests ("add milk and then show the list").
SPLIT_WORDS: frozenset[str] = frozenset({"and", "then", "also", "plus", "afterwards"})

# Verbs a chore opens with ("defrost the turkey", "renew passport", "pay the council tax"). A list of
# things holds what is named; a value that opens with one of these is something to do instead.
TASK_VERBS: frozenset[str] = frozenset(
    # Only verbs that do not also open the name of a thing on a shopping list ("pack of batteries",
    # "water crackers", "vacuum bags", "book of stamps" are why those are left out).
    """
    call phone renew fix mow defrost send cancel sign finish write reply tidy bake collect submit update
    replace repair visit bring register apply organise organize prepare practise confirm install recycle
    shovel rake weed vote unload arrange chase ask tell remind learn mend sew unpack declutter deliver
    pay email ring
    """.split()
)
# Verbs that also open things' names ("water crackers", "post-it notes", "book of stamps"): a chore only
# when a determiner follows ("water the tomatoes", "book the MOT", "post the birthday card").
TASK_VERBS_BEFORE_DETERMINER: frozenset[str] = frozenset(
    # ("prune juice" is a thing; "prune the roses" a chore)
    "water post book clean paint iron walk feed wash pack print empty clear sort take pick drop move check order "
    "text call top service hoover vacuum mop dust polish return charge file fill change hand wrap prune".split()
)
DETERMINERS: frozenset[str] = frozenset(
    "the my our a an his her their your this that these those some all".split()
)
