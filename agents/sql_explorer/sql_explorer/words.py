"""The question compiler's lexicon: grammar words, how numbers, comparisons, superlatives,
aggregations and groupings are said, and the text as the compiler reads it (normalised)."""

from __future__ import annotations

import re

# Grammar: words that carry no meaning of their own here.
FILLER = frozenset("""
how many much what whats which who whom whose was were is are be been being am the a an of in on at for from to
during did do does done doing there here we our us i me my you your they their them any all number count counted
counting show shows tell give please list get got have has had having that this those these it its so far ever
logged recorded record took take taken taking made work working works worked with and or by per each
as than then also just only overall different distinct unique separate individual many altogether in total
combined currently right now altogether exactly approximately roughly about around status hey can could would
will shall should know find out see look up check company whole entire across under within inside amongst among
went go goes gone going came come comes coming started start starts starting began begin begun spend spent spending
cost costs one ones name names named happen happened happens up want wants wanted like need needs wonder wondering
curious i'd i'll let
""".split())
# Nouns that count rows of whatever is counted ("how many times", "stretches of leave").
COUNT_NOUNS = ("times", "time", "occasions", "instances", "occurrences", "records", "cases", "days", "day", "entries",
               "rows", "often", "stretches", "periods", "spells", "occurences")
AGGREGATIONS = [  # (phrase, function), longest first
    ("on average", "avg"), ("average", "avg"), ("mean", "avg"), ("avg", "avg"), ("typical", "avg"),
    ("total", "sum"), ("sum of", "sum"), ("sum", "sum"), ("spend on", "sum"), ("spend", "sum"), ("spent on", "sum"),
    ("cost of", "sum"), ("cost", "sum"), ("costs", "sum"), ("payroll", "sum"), ("wage bill", "sum"),
]
SUPERLATIVES = [
    ("most common", "max"), ("least common", "min"), ("most frequent", "max"), ("least frequent", "min"),
    ("most often", "max"), ("least often", "min"),
    ("the most", "max"), ("highest", "max"), ("most", "max"), ("maximum", "max"), ("max", "max"), ("largest", "max"),
    ("biggest", "max"), ("greatest", "max"), ("best", "max"), ("top", "max"), ("the least", "min"), ("lowest", "min"),
    ("least", "min"), ("fewest", "min"), ("minimum", "min"), ("min", "min"), ("smallest", "min"), ("worst", "min"),
]
# Superlatives that rank how often something happened: what they rank is a count of rows.
FREQUENCY = frozenset({"most common", "least common", "most frequent", "least frequent", "most often", "least often"})
_NUM = r"(\d[\d,]*(?:\.\d+)?)(k)?"
BETWEEN = rf"\bbetween {_NUM} and {_NUM}"
COMPARISONS = [
    (rf"\b(?:more|greater|higher|bigger|larger) than {_NUM}", ">"), (rf"\b(?:over|above|exceeding) {_NUM}", ">"),
    (rf"\bat least {_NUM}", ">="), (rf"\b{_NUM} or more\b", ">="), (rf"\b(?:fewer|less|lower|smaller) than {_NUM}", "<"),
    (rf"\b(?:under|below) {_NUM}", "<"), (rf"\bat most {_NUM}", "<="), (rf"\b{_NUM} or (?:fewer|less)\b", "<="),
    (rf"\bexactly {_NUM}", "="),
]
# "top 5", "the 3 best paid", "which 2 departments": how many the answer must name.
LIMITS = (r"\btop (\d{1,2})\b", r"\b(\d{1,2}) (?=(?:best|worst|highest|lowest|most|fewest|least|biggest|largest|smallest)\b)",
          r"\b(?:which|what|the|name|list|show|give|me) (\d{1,2})(?= [a-z])")
GROUP_MARKERS = r"(?:per|by|for each|for every|each|broken down by|split by|grouped by|across|in each|for all|of each)"
PERSON_WORDS = ("employee", "employees", "person", "people", "staff member", "staff members")
TIME_UNITS = {"month": "month", "months": "month", "year": "year", "years": "year"}
SHOW_QUERY = re.compile(r"\b(?:and )?(?:show|give|tell|include)(?: me)? (?:the |your )?(?:sql|query|sql query)\b"
                        r"(?: (?:you )?used)?|\bwith (?:the )?(?:sql|query)\b")
# What follows "how many" / "the most" names what is counted ("how many people", "the most absences").
HEAD = re.compile(r"\b(?:how many|number of|count of|count the|total of|the most|the fewest|the least|most|fewest)"
                  r" (?:of (?:the |our )?)?(?:different |distinct |unique |separate |individual )?(.*)$")
# "how many were absent": a verb straight after "how many" means people were counted.
PEOPLE_VERBS = frozenset("were was are is have had did took called went got worked stayed missed".split())
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                 "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100}
# After "I": asking for something ("I want to know", "can I see"), not saying something about oneself.
_ASKING = frozenset("want wanted need needed would like wonder wondering see know ask mean meant think guess hope"
                    .split())


def normalise(question: str) -> str:
    text = question.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"\b(\w+)n't\b", r"\1 not", text).replace("can not", "cannot")
    text = re.sub(r"\b(what|who|which|how|where|that|there|it)'s\b", r"\1 is", text)
    text = re.sub(r"'s\b", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 100,000
    text = re.sub(r"[$\u20ac\u00a3]", "", text)
    text = re.sub(r"[?!,;:\"()]", " ", text)
    text = re.sub(r"(?<!\w)\.|\.(?!\w)", " ", text)
    text = re.sub(r"\b(?:year-to-date|ytd)\b", "year to date", text)
    text = re.sub(r"\btwice\b", "2 times", text)
    text = re.sub(r"\bonce\b", "1 time", text)
    text = re.sub(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", lambda m: str(_NUMBER_WORDS[m.group(1)]), text)
    text = re.sub(r"\btotal (?=number|count)", "", text)  # "the total number of absences" is their number
    text = re.sub(r"\bin total\b", " ", text)
    return " ".join(text.split())


def about_asker(words: list[str]) -> bool:
    """The question is about the person asking ("my salary", "did I take"): the HR data does not
    say which employee a user is, so it cannot be answered (and must not be answered as "everyone")."""
    for i, word in enumerate(words):
        if word in ("my", "mine", "myself", "i'm", "im", "i've"):
            return True
        if word == "i":
            after = words[i + 1] if i + 1 < len(words) else ""
            before = words[i - 1] if i else ""
            then = words[i + 2] if i + 2 < len(words) else ""
            if after in _ASKING or (after == "get" and before in ("can", "could", "may")) or (
                    after in ("was", "am") and then in ("wondering", "hoping", "asking")):
                continue
            return True
    return False
