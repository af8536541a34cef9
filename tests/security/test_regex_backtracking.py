"""No regular expression that reads user text can stall the kernel (issue 24, finding 2).

`"x " + "please " * 25 + "y"` took 20 s in Sidekick's memory reader, on the event
loop, and every other user waited. Two checks over every pattern regex_inventory
finds in Sidekick and the kernel's memory:

- a lint (dlint's ReDoS detector, which reads the pattern's structure): nested
  repetition over alternatives that overlap is refused, unless the pattern is in
  REVIEWED with the reason it is safe, and the fuzz below agrees;
- a fuzz: each pattern against strings built from its own words (runs of its
  alternatives with and without spaces and commas, ending in a character that
  makes the match fail), in a child process with a deadline, so a pattern that
  backtracks shows up as a timeout naming it instead of hanging the test run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from dlint.redos.detect import catastrophic
from regex_inventory import all_patterns

PER_PATTERN_SECONDS = 0.25  # every attack string together; a backtracking pattern takes minutes
DEADLINE = 60

# Patterns dlint's structural check flags but that cannot backtrack much, and why.
REVIEWED: dict[str, str] = {
    # `(?:\s+(?:now|strictly|...|a|an))*\s+(?:vegetarian|...)`: each word is followed by \s+, so
    # "a" and "an" cannot both match at one place; the run is read one way only.
    "dreamer.sidekick.memory.extract._STATEMENTS": "words separated by required spaces",
    # `[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:tlds)`: every repeated part starts with a dot that the
    # part before cannot contain, so a host name is split into labels one way only.
    "dreamer.sidekick.planner.language.text._TOKEN": "labels start with a dot their predecessor cannot hold",
}


# Patterns that only ever see short text (their module cuts longer messages off first): fuzzed at that
# length, since a polynomial pattern is harmless on 300 characters and they are never given more.
BOUNDED: dict[str, int] = {
    "dreamer.sidekick.dialogue.followups": 300,  # MAX_FOLLOWUP_CHARS
    "sidekick/dialogue/followups.py": 300,
    "dreamer.sidekick.dialogue.smalltalk": 300,  # MAX_SMALL_TALK_CHARS
    "sidekick/dialogue/smalltalk.py": 300,
    "dreamer.sidekick.planner.language.chatter": 300,  # MAX_SMALL_TALK_CHARS (smalltalk's words, side18)
    "sidekick/planner/language/chatter.py": 300,
}
# Structure dlint flags, made safe with possessive repetition (`*+`: what it took is never given back).
POSSESSIVE = "possessive repetition, fuzzed below"
REVIEWED.update({name: POSSESSIVE for name in (
    "dreamer.sidekick.dialogue.followups.ADD_MORE", "dreamer.sidekick.dialogue.followups.REMOVE",
    "dreamer.sidekick.dialogue.followups.REPLACE", "dreamer.sidekick.dialogue.smalltalk.THANKS",
    "dreamer.sidekick.dialogue.smalltalk.ACK", "dreamer.sidekick.planner.language.chatter.THANKS",
    "dreamer.sidekick.planner.language.chatter.ACK",
    "dreamer.sidekick.dialogue.undo.UNDO",
    # `\{(!?)(name(?:\.(?:part|\*))*)...\}`: each repeated part starts with a dot the part before cannot hold.
    "dreamer.contracts.reply_text.FIELD_RE",
)})


def _limit(name: str) -> int:
    return next((n for prefix, n in BOUNDED.items() if name.startswith(prefix)), 0)


def test_the_inventory_sees_the_known_patterns() -> None:
    found = all_patterns()
    assert len(found) > 40
    assert "dreamer.sidekick.memory.extract._POLITE_END" in found
    assert "dreamer.sidekick.planner.language.text._TOKEN" in found


def test_no_pattern_has_catastrophic_structure() -> None:
    flagged = [name for name, p in all_patterns().items() if catastrophic(p.pattern)]
    unreviewed = [n for n in flagged if n.split("[")[0] not in REVIEWED]
    assert not unreviewed, f"patterns that can backtrack exponentially: {unreviewed}"


FUZZ = r'''
import json, re, sys, time
patterns = {name: (re.compile(p, flags), limit) for name, (p, flags, limit) in json.loads(sys.stdin.read()).items()}

def words_of(pattern):
    # The literal words of the pattern: what its alternatives and repetitions are made of.
    text = re.sub(r"\\[a-zA-Z]", " ", pattern)
    found = re.findall(r"[a-z][a-z' ]{0,20}[a-z]|[a-z]", text.lower())
    return list(dict.fromkeys(w.strip() for w in found if w.strip()))[:40] or ["a"]

def attacks(words):
    for w in words:
        for sep in (" ", "", ", ", " , "):
            run = sep.join([w] * 26)
            yield "x " + run + " y"
            yield run + "!"
            yield run + sep + "\x00"
    mixed = " ".join(words[i % len(words)] for i in range(60))
    yield mixed + " ?!"
    yield "x " + mixed
    yield "a." * 200 + "!"
    yield " " * 8000 + "x"
    yield "," * 8000 + "x"

worst = {}
for name, (pattern, limit) in patterns.items():
    print(name, flush=True, file=sys.stderr)
    # CPU time of this process, not the wall clock: backtracking is work done here, and other
    # processes sharing the cores (the rest of the suite, in parallel) must not make a pattern look slow.
    start = time.process_time()
    for s in attacks(words_of(pattern.pattern)):
        s = s[-limit:] if limit else s  # the end: where the failing character is
        pattern.search(s)
        pattern.match(s)
        pattern.fullmatch(s)
    worst[name] = time.process_time() - start
print(json.dumps(worst))
'''


def test_no_pattern_is_slow_on_its_own_words() -> None:
    try:
        sent = json.dumps({name: (p.pattern, p.flags, _limit(name)) for name, p in all_patterns().items()})
        done = subprocess.run([sys.executable, "-c", FUZZ], input=sent, capture_output=True, text=True, check=False,
                              timeout=DEADLINE)
    except subprocess.TimeoutExpired as exc:
        tried = (exc.stderr or b"").decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        raise AssertionError(f"a pattern backtracks: stuck on {tried.strip().splitlines()[-1:]}") from None
    assert done.returncode == 0, done.stderr[-2000:]
    worst = json.loads(done.stdout)
    slow = {k: round(v, 2) for k, v in worst.items() if v > PER_PATTERN_SECONDS}
    assert not slow, f"patterns slow on adversarial input: {slow}"


def test_the_reported_attack_is_fast_through_the_memory_reader() -> None:
    import time

    from dreamer.sidekick.memory.extract import read_memory_intent

    attack = "x " + "please " * 25 + "y"
    assert len(attack) == 178  # the report's 176 characters, give or take its quotes
    start = time.perf_counter()
    read_memory_intent(attack)
    read_memory_intent("I'm vegetarian" + ", please" * 300)
    assert time.perf_counter() - start < 1.0  # took 20 s


def test_polite_words_are_still_taken_off() -> None:
    from dreamer.sidekick.memory.extract import Remember, read_memory_intent

    got = read_memory_intent("I'm vegetarian, thanks. please")
    assert isinstance(got, Remember) and got.fact.lower().rstrip(".") == "i'm vegetarian"


def test_confirmations_still_read(tmp_path) -> None:
    from dreamer.sidekick.planner.dialog import _is_no, _is_yes

    assert _is_yes(["yes", "please", "do"]) and _is_yes(["sure"]) and not _is_yes(["please"])
    assert _is_no(["no", "thanks"]) and _is_no(["wait", "do", "not"]) and not _is_no(["thanks"])
    assert not _is_no(["no", "milk"])
    assert re.escape("x")  # (re is used by the fuzz text above)
