"""The multi-turn dialogue suite: conversations written as families (a pattern of turns x fillers),
run against a real kernel with the starter agents through the chat API, checked for the calls
made and for how the replies read.

    .venv/bin/python tests/sidekick/dialogues/dialogue_suite.py [tuned|tuned_2|heldout|heldout_2|heldout_3|heldout_4|heldout_5|heldout_6|heldout_7|heldout_8|heldout_9|heldout_10|heldout_11|heldout_12|heldout_13|heldout_14|heldout_15|heldout_16|heldout_17|heldout_d|path.yaml] [-v]

heldout_3 and heldout_17 (the third and seventeenth held-out batches; the fourteenth and fifteenth released on
2026-12-07, the fifteenth after 176/237 on abb5005 and 180/237 on b0ecca2; the sixteenth on 2026-12-08 after 214/265
on b0ecca2 and on 6d3a2a3) and heldout_d
(the families side16d2 set aside) print only their summary line, never their failures; heldout_4 was
released for tuning once its score was reported, heldout_5 (the fifth batch) on 2026-12-06, after its
blind score (96/124 on main 72407ab) was reported, and heldout_6 on 2026-12-06 too, after its
blind score (83/124, scored on main in the session of 2026-12-06 morning) was reported, and
heldout_7 on 2026-12-06 (evening), after its blind score (56/136 on main d0ad2eb) was reported;
heldout_8 and heldout_9 likewise (heldout_9 on 2026-12-07, after 123/184 on 11a5ff7 and 143/184 on 22c9ece),
and heldout_10 on 2026-12-07 after 138/182 on 22c9ece and 142/182 on 1219cda, and heldout_11 on 2026-12-07
(second session) after 139/189 on 1219cda and 150/189 on f314560, and heldout_12 on 2026-12-07 (third session)
after 157/191 on 327947e and 157/191 on 5a55b3e, and heldout_13 on 2026-12-07 (fourth session) after 156/230
on 327947e and 161/230 on 78ac4fc.

A family in YAML:

    - family: add then more
      user: main                       # optional: a user of its own (learning is per user)
      setup: [[grocery, clear, {}]]    # calls made before the conversation
      fillers: [{a: milk, b: bread}, ...]
      turns:
        - say: add {a} to my grocery list
          calls: [grocery.add_items]   # exactly these calls, in order ([] for none)
          args: {items: ["{a}"]}       # of the last call: lists compared as sets, ignoring case
          reply_has: ["{a}"]           # words the reply must contain (any case)
          reply_not: [...]
          pending: choose              # the question left open (choose/confirm/missing/none)

Every reply is also checked to read as sentences: no field dumps ("key: value; key: ..."),
no snake_case names, no exception names or tracebacks, no raw JSON.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "e2e"))

from kernelproc import KernelProc, start_kernel  # noqa: E402

from dreamer.kernel.data.demo import DEMO_CONNECTION  # noqa: E402
from dreamer.kernel.data.demo import SCOPES_FILE as DEMO_SCOPES  # noqa: E402

DUMP = [
    re.compile(r"\b[a-z]+_[a-z_]+\b\s*[:=]"),  # "already_there: none"
    re.compile(r"(?:\b\w[\w ]*: [^;\n]*; ){2,}"),  # "date: ...; weekday: ...; already there: ..."
    re.compile(r"[✓✗]"),  # the old one-line-per-call marks
    re.compile(r"[{\[]\s*\""),  # JSON
    re.compile(r"\b(?:Traceback|KeyError|ValueError|TypeError|AttributeError|Exception)\b"),
    re.compile(r"\b\d+ fields\b"),
]


# Splits whose failures are never printed (heldout_5, heldout_6 and heldout_7 left this list on
# 2026-12-06, released as tuning material once their scores, 96/124, 83/124 and 56/136, were reported).
SCORED_ONLY = ("heldout_3", "heldout_17", "heldout_d")  # heldout_7 .. heldout_16 released after their blind scores


@dataclass
class Conversation:
    family: str
    name: str
    turns: list[dict[str, Any]]
    setup: list[list[Any]] = field(default_factory=list)
    user: str = "main"


def load(path: Path) -> list[Conversation]:
    out = []
    for fam in yaml.safe_load(path.read_text()):
        for n, fill in enumerate(fam.get("fillers") or [{}]):
            fill = {k: _fill(v, fill) for k, v in fill.items()}  # a filler may name another: f: "and {b} too"
            turns = [_fill(t, fill) for t in fam["turns"]]
            user = _fill(fam.get("user", "main"), {**fill, "n": n})
            out.append(Conversation(fam["family"], f"{fam['family']} #{n + 1}", turns,
                                    _fill(fam.get("setup") or [], fill), user))
    return out


def _fill(value: Any, fill: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = re.fullmatch(r"\{(\w+)\}", value)
        if whole and whole.group(1) in fill and not isinstance(fill[whole.group(1)], str):
            return fill[whole.group(1)]
        return re.sub(r"\{(\w+)\}", lambda m: str(fill.get(m.group(1), m.group(0))), value)
    if isinstance(value, list):
        return [_fill(v, fill) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, fill) for k, v in value.items()}
    return value


def reads_badly(reply: str) -> str | None:
    for pattern in DUMP:
        found = pattern.search(reply)
        if found:
            return f"reads like debug output: {found.group(0)!r}"
    if not reply.strip():
        return "empty reply"
    return None


def check_turn(turn: dict[str, Any], out: dict[str, Any]) -> list[str]:
    problems = []
    if "error" in out and "reply" not in out:
        return [f"request failed: {out['error']}"]
    calls = [f"{c['agent']}.{c['function']}" for c in out.get("calls", [])]
    if "calls" in turn and calls != turn["calls"]:
        problems.append(f"calls {calls}, expected {turn['calls']}")
    if "args" in turn and out.get("calls"):
        args = out["calls"][-1]["args"]
        for key, want in turn["args"].items():
            got = args.get(key)
            if isinstance(want, list):
                if not isinstance(got, list) or {str(x).casefold() for x in got} != {str(x).casefold() for x in want}:
                    problems.append(f"argument {key} = {got!r}, expected {want!r}")
            elif str(want).casefold() not in str(got).casefold():
                problems.append(f"argument {key} = {got!r}, expected {want!r}")
    if all(c.get("ok") for c in out.get("calls", [])) is False and turn.get("ok", True) and "calls" in turn and turn["calls"]:
        problems.append("a call failed: " + "; ".join(str(c.get("error")) for c in out["calls"] if not c.get("ok")))
    reply = out.get("reply", "")
    low = reply.casefold()
    for word in turn.get("reply_has", []):
        if str(word).casefold() not in low:
            problems.append(f"reply lacks {word!r}")
    for word in turn.get("reply_not", []):
        if str(word).casefold() in low:
            problems.append(f"reply has {word!r}")
    if "max_chars" in turn and len(reply) > turn["max_chars"]:
        problems.append(f"reply is {len(reply)} characters, at most {turn['max_chars']}")
    if "pending" in turn:
        kind = (out.get("pending") or {}).get("kind") or "none"
        if kind != turn["pending"]:
            problems.append(f"pending {kind}, expected {turn['pending']}")
    bad = reads_badly(reply)
    if bad:
        problems.append(bad)
    return problems


class Runner:
    """One kernel; users made on demand (each gets the starter agents)."""

    def __init__(self, kernel: KernelProc) -> None:
        self.kernel = kernel
        self.tokens: dict[str, str] = {"main": kernel.token}
        self.times: list[float] = []

    def token(self, user: str) -> str:
        if user not in self.tokens:
            with self.kernel.client() as c:
                made = c.post("/v1/users", json={"name": user})
                made.raise_for_status()
                self.tokens[user] = made.json()["token"]
        return self.tokens[user]

    def run(self, conv: Conversation) -> list[str]:
        with self.kernel.client(self.token(conv.user)) as c:
            for agent, function, args in conv.setup:
                done = c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args, "confirm": True}, timeout=60)  # the user sets up: confirmed
                if done.status_code >= 400:
                    return [f"setup {agent}.{function} failed: {done.text[:200]}"]
            cid = None
            for i, turn in enumerate(conv.turns, 1):
                started = time.perf_counter()
                out = c.post("/v1/chat", json={"message": turn["say"], "conversation_id": cid, "stream": False},
                             timeout=120).json()
                self.times.append(time.perf_counter() - started)
                cid = out.get("conversation_id", cid)
                problems = check_turn(turn, out)
                if problems:
                    return [f"turn {i} {turn['say']!r}: {p} (reply: {out.get('reply', '')[:300]!r})" for p in problems]
        return []


def admit_to_hr_data(kernel: KernelProc, users: set[str]) -> None:
    """The administrator puts the conversations' own users in the HR demo's scopes as HR admins, as
    `me` is: a user the scopes file does not name sees nothing of the data (the kernel's rule), so a
    conversation about HR data needs its user named there, whichever user it runs as."""
    with kernel.client() as c:
        connections = c.get("/v1/data").json()
        demo = next((x for x in connections if x.get("name") == DEMO_CONNECTION), None)
        if demo is None:
            return
        scopes = yaml.safe_load(DEMO_SCOPES.read_text())
        scopes["version"] = int(demo.get("scopes_version") or scopes["version"]) + 1
        scopes["users"] = {**scopes.get("users", {}), **{u: "hr_admin" for u in sorted(users)}}
        done = c.put(f"/v1/data/{DEMO_CONNECTION}/scopes", json={"scopes": yaml.safe_dump(scopes, sort_keys=False)})
        done.raise_for_status()


def run_suite(kernel: KernelProc, path: Path, every: int = 1) -> tuple[int, int, list[str], list[float]]:
    """Each conversation of the split, or with `every` > 1 one in `every` of each family's (its first, then
    every `every`-th: every family is still run)."""
    runner = Runner(kernel)
    convs = load(path)
    if every > 1:
        seen: dict[str, int] = {}
        kept = []
        for conv in convs:
            if seen.get(conv.family, 0) % every == 0:
                kept.append(conv)
            seen[conv.family] = seen.get(conv.family, 0) + 1
        convs = kept
    admit_to_hr_data(kernel, {conv.user for conv in convs if conv.user != "main"})
    failures = []
    for conv in convs:
        problems = runner.run(conv)
        if problems:
            failures.append(f"{conv.name}: " + " | ".join(problems))
    return len(convs) - len(failures), len(convs), failures, runner.times


def _kernel() -> Iterator[KernelProc]:
    k = start_kernel(Path(tempfile.mkdtemp()) / "home", wait_s=300)
    try:
        yield k
    finally:
        k.stop()


if __name__ == "__main__":
    split = sys.argv[1] if len(sys.argv) > 1 else "tuned"
    for kernel in _kernel():
        # A split's name, or the path of any YAML file of families (a scratch batch being written).
        path = Path(split) if split.endswith(".yaml") else HERE / f"{split}.yaml"
        passed, total, failures, times = run_suite(kernel, path)
        # The third, sixteenth and seventeenth held-out batches and side16d2's held-out families: scored, never read.
        for f in failures if split not in SCORED_ONLY else []:
            print("FAIL", f)
        times.sort()
        print(f"{split}: {passed}/{total} conversations right ({passed / total:.0%}); "
              f"median turn {times[len(times) // 2] * 1000:.0f} ms over HTTP, {len(times)} turns")
