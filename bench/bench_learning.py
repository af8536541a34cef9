"""The learning curve: routing accuracy over a stream of requests from simulated users who
correct Sidekick's misses the way people do, with learning on and with learning off.

    .venv/bin/python bench/bench_learning.py [--users 4] [--per-user 60] [--seed 20] [--families tuned|held-out]

A real kernel with the starter agents (offline planner, no model) is started in a temporary
home. Each simulated user sends requests drawn from families of phrasings: per intent, a few
the planner routes today and several it misses or routes wrongly today (found by trying
everyday phrasings against it). When an answer is wrong, the user corrects it once, as
people do: after a miss they say it again the plain way ("add oat milk to my grocery
list", sometimes after "I meant"), after a wrong call or a wrong question they say "no, I
meant ..." naming what they wanted. Corrections are not scored; each request is scored
right when its first call is the intended function (a question, a miss or another function
is wrong). The same stream (same seed) is sent by users with learning on and by users who
opted out (`PUT /v1/learned/settings`), on the same kernel; accuracy is reported per
quarter of each user's stream, the first quarter against the last.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from kernelproc import KernelProc, start_kernel  # noqa: E402

# intent -> (function, phrasings, the plain rephrasing after a miss, the "no, I meant" after a wrong answer)
FAMILIES: dict[str, tuple[str, list[str], str, str]] = {
    "grocery add": ("grocery.add_items", [
        "grab some {item}", "stock up on {item}", "we could use more {item}",  # missed today
        "we're out of {item}", "add {item} to my grocery list",  # routed today
    ], "add {item} to my grocery list", "no, I meant add {item} to my grocery list"),
    "recipe ideas": ("recipes.suggest", [
        "find me something with {food}", "any ideas for a meal with {food}",  # missed today
        "what's cooking with {food}", "dinner ideas with {food}",
    ], "I meant recipe ideas with {food}", "no, I meant recipe ideas with {food}"),
    "save a note": ("notes.save", [
        "log that {fact}",  # missed today
        "note that {fact}", "jot down that {fact}",
    ], "I meant save a note: {fact}", "no, I meant save a note: {fact}"),
    "read notes": ("notes.recent", [
        "what's in my notes", "what did I jot down lately", "what have I written down",  # wrong today
        "read me my notes",
    ], "read me my notes", "no, I meant read me my notes"),
    "agenda": ("calendar.agenda", [
        "what are my plans {day}", "is my schedule clear on {day}", "anything on my plate {day}",  # wrong or missed
        "do I have anything going on {day}", "what's happening {day}",
    ], "what's on my calendar {day}", "no, I meant what's on my calendar {day}"),
}
# Written once, after the code was done, and never tried against the planner before the run:
# the same intents (and corrections), other phrasings.
HELD_OUT: dict[str, tuple[str, list[str], str, str]] = {
    "grocery add": ("grocery.add_items", [
        "could you get {item}", "I'm out of {item}", "remember to buy {item}", "put {item} down for the store",
    ], "add {item} to my grocery list", "no, I meant add {item} to my grocery list"),
    "recipe ideas": ("recipes.suggest", [
        "what can I make with {food}", "meal ideas using {food}", "recipes that use {food}", "got any {food} recipes",
    ], "I meant recipe ideas with {food}", "no, I meant recipe ideas with {food}"),
    "save a note": ("notes.save", [
        "write down that {fact}", "make a note: {fact}", "keep in mind that {fact}",
    ], "I meant save a note: {fact}", "no, I meant save a note: {fact}"),
    "read notes": ("notes.recent", [
        "show me what I noted", "my latest notes", "list my notes",
    ], "read me my notes", "no, I meant read me my notes"),
    "agenda": ("calendar.agenda", [
        "what's my day like {day}", "do I have meetings {day}", "how busy am I {day}", "what's planned {day}",
    ], "what's on my calendar {day}", "no, I meant what's on my calendar {day}"),
}
FILLERS = {
    "item": ["oat milk", "rice", "coffee", "paper towels", "butter", "lemons", "pasta", "dish soap", "apples", "yogurt"],
    "food": ["lentils", "tofu", "chickpeas", "salmon", "mushrooms", "spinach", "eggplant"],
    "fact": ["the boiler was serviced", "the car is in spot 12", "I paid the rent", "the plumber comes at 9",
             "the wifi password changed", "I lent Sam my drill"],
    "day": ["tomorrow", "on friday", "today", "on monday", "this weekend"],
}


@dataclass(frozen=True)
class Request:
    intent: str
    text: str
    fix_missed: str
    fix_wrong: str
    function: str


def stream(seed: int, n: int, families: dict[str, tuple[str, list[str], str, str]]) -> list[Request]:
    """One user's requests: an intent, a phrasing of it, fillers; the same for both conditions."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        intent = rng.choice(sorted(families))
        function, texts, missed, wrong = families[intent]
        fill = {k: rng.choice(v) for k, v in FILLERS.items()}
        if "{day}" in (phrase := rng.choice(texts)):
            fill["day"] = fill["day"].removeprefix("on ") if "on {day}" in phrase else fill["day"]
        out.append(Request(intent, phrase.format(**fill), missed.format(**fill), wrong.format(**fill), function))
    return out


def chat(k: KernelProc, token: str, text: str, conversation: str | None) -> dict[str, Any]:
    with k.client(token) as c:
        done = c.post("/v1/chat", json={"message": text, "conversation_id": conversation, "stream": False})
        done.raise_for_status()
        return done.json()


@dataclass(frozen=True)
class Outcome:
    right: bool
    seen: bool  # this user had sent these exact words before
    intent: str


def run_user(k: KernelProc, token: str, requests: list[Request]) -> list[Outcome]:
    """Send the user's stream, correcting each wrong answer once; how each request went."""
    right: list[Outcome] = []
    sent: set[str] = set()
    conversation: str | None = None
    for n, req in enumerate(requests):
        if n % 10 == 0:
            conversation = None  # people start a new chat now and then
        done = chat(k, token, req.text, conversation)
        conversation = done["conversation_id"]
        calls = [f"{c['agent']}.{c['function']}" for c in done["calls"]]
        ok = bool(calls) and calls[0] == req.function and done.get("pending") is None
        right.append(Outcome(ok, req.text.casefold() in sent, req.intent))
        sent.add(req.text.casefold())
        if ok:
            continue
        fix = req.fix_missed if not calls and done.get("pending") is None else req.fix_wrong
        fixed = chat(k, token, fix, conversation)
        if fixed.get("pending") is not None:  # an open question would swallow the next request
            conversation = None
    return right


def quarters(results: list[list[Outcome]]) -> list[float]:
    """Accuracy in each quarter of the users' streams (position in each user's stream)."""
    n = len(results[0])
    out = []
    for q in range(4):
        cut = [r.right for user in results for r in user[q * n // 4:(q + 1) * n // 4]]
        out.append(sum(cut) / len(cut))
    return out


def share(items: list[Outcome]) -> dict[str, Any]:
    return {"n": len(items), "accuracy": round(sum(o.right for o in items) / len(items), 3) if items else None}


def second_half(results: list[list[Outcome]]) -> dict[str, Any]:
    """The second half split by whether the user had said exactly those words before (near
    phrasings are the new ones), and by intent."""
    half = [o for user in results for o in user[len(user) // 2:]]
    return {"repeated_words": share([o for o in half if o.seen]), "new_words": share([o for o in half if not o.seen]),
            "by_intent": {i: share([o for o in half if o.intent == i]) for i in sorted({o.intent for o in half})}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--per-user", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--families", choices=("tuned", "held-out"), default="tuned",
                        help="tuned: the phrasings looked at while building; held-out: written once, only run")
    args = parser.parse_args()
    families = FAMILIES if args.families == "tuned" else HELD_OUT
    streams = [stream(args.seed * 100 + u, args.per_user, families) for u in range(args.users)]
    with tempfile.TemporaryDirectory(prefix="bench-learning-") as home:
        k = start_kernel(Path(home) / "home", wait_s=600)
        try:
            tokens: dict[str, list[str]] = {"on": [], "off": []}
            with k.client() as admin:
                for mode in ("on", "off"):
                    for u in range(args.users):
                        made = admin.post("/v1/users", json={"name": f"learner-{mode}-{u}"})
                        made.raise_for_status()
                        tokens[mode].append(made.json()["token"])
            for token in tokens["off"]:
                with k.client(token) as c:
                    c.put("/v1/learned/settings", json={"learning": False}).raise_for_status()
            jobs = [(mode, u) for u in range(args.users) for mode in ("on", "off")]
            with ThreadPoolExecutor(max_workers=2) as pool:
                done = list(pool.map(lambda job: run_user(k, tokens[job[0]][job[1]], streams[job[1]]), jobs))
            results = {mode: [done[i] for i, job in enumerate(jobs) if job[0] == mode] for mode in ("on", "off")}
            learned = []
            for token in tokens["on"]:
                with k.client(token) as c:
                    learned.append(len(c.get("/v1/learned").json()["examples"]))
        finally:
            k.stop()
    total = args.users * args.per_user
    report: dict[str, Any] = {"requests_per_condition": total, "users": args.users, "seed": args.seed,
                              "families": args.families,
                              "examples_learned_per_user": learned}
    for mode in ("on", "off"):
        curve = quarters(results[mode])
        report[f"learning_{mode}"] = {"quarters": [round(x, 3) for x in curve],
                                      "first_quarter": round(curve[0], 3), "last_quarter": round(curve[-1], 3),
                                      "overall": round(sum(o.right for u in results[mode] for o in u) / total, 3),
                                      "second_half": second_half(results[mode])}
        print(f"learning {mode:3}: accuracy by quarter " + "  ".join(f"{x:.0%}" for x in curve)
              + f"   (first {curve[0]:.0%} -> last {curve[-1]:.0%})")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
