"""What every Sidekick planner takes and gives back.

A planner turns one user message into a `Plan`: steps (calls of exported agent
functions), a reply to show, or a `Clarification` to ask first. Both planners —
the offline intent engine and the model-driven one — implement `Planner`.

The executor's rules, which these types exist to make checkable:
- when `plan.pending` is set, run nothing: show `pending.question` and give the
  user's next message to `resume()` (dreamer.sidekick.planner.dialog);
- never run a step of a function whose tool has `confirm=True` unless
  `step.confirmed` is true (only `resume()` sets it, after the user said yes).

Everything here is plain data that survives JSON (`to_dict` / `from_dict`), so a
conversation can store a pending clarification and answer it in a later request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from dreamer.contracts.reply_text import addressed as addressed  # one wording of "the user" as "you", shared with replies

ClarificationKind = Literal["choose", "missing", "confirm"]
KINDS: tuple[str, ...] = ("choose", "missing", "confirm")
MAX_SUMMARY = 160  # characters of a description shown in a question or a list of what agents can do


# A parameter whose schema carries this takes the user's whole request, not a slot's words (the
# SDK's WholeQuestion: sql-explorer's question). One test of it for the planner and the dialogue.
WHOLE_REQUEST = "x-whole-request"


def takes_whole_request(properties: Mapping[str, Any], name: str) -> bool:
    """The parameter `name` of these JSON-schema properties takes the user's whole request."""
    schema = properties.get(name)
    return isinstance(schema, Mapping) and schema.get(WHOLE_REQUEST) is True


@dataclass(frozen=True)
class Tool:
    """One exported function Sidekick may call, as the registry describes it."""

    agent: str
    function: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)  # a JSON schema object
    examples: Sequence[str] = ()
    confirm: bool = False
    agent_description: str = ""
    # "function" (an agent's exported function) or "tool" (a tool of one of the user's
    # MCP tool servers: `agent` is then the server, `function` the tool).
    kind: str = "function"
    # Who published the agent, and when this user installed it (ISO 8601; "" when unknown):
    # choices name the publisher, and an agent installed earlier keeps its phrases on a tie.
    publisher: str = ""
    installed_at: str = ""
    # From the SDK's @function(undo=, reply=, sidekick=): how a call is reversed
    # ({"function", "args", "when"}, False: it cannot be, None: not declared), how its
    # result reads (templates, dreamer.sdk.replies), and whether "what can you do" lists it.
    undo: Mapping[str, Any] | bool | None = None
    reply: Sequence[str] = ()
    listed: bool = True
    # @function(reads=True): a call only reads, so "undo that" passes over it; for undo=False,
    # what the user can do instead (reply templates over the result).
    reads: bool = False
    undo_hint: Sequence[str] = ()

    @property
    def name(self) -> str:
        return f"{self.agent}.{self.function}"

    @property
    def summary(self) -> str:
        """The first sentence of the description, or the name when there is none."""
        first = (self.description or "").strip().split("\n\n")[0].replace("\n", " ")
        head = first.split(". ")[0].strip().rstrip(".")
        if len(head) > MAX_SUMMARY:
            head = head[: MAX_SUMMARY - 1].rstrip() + "…"
        return head or self.function.replace("_", " ")

    @property
    def required(self) -> tuple[str, ...]:
        req = self.parameters.get("required", []) if isinstance(self.parameters, Mapping) else []
        return tuple(r for r in req if isinstance(r, str)) if isinstance(req, (list, tuple)) else ()

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.parameters.get("properties", {}) if isinstance(self.parameters, Mapping) else {}
        return props if isinstance(props, Mapping) else {}

    @classmethod
    def from_spec(
        cls, agent: str, spec: Mapping[str, Any], agent_description: str = "", publisher: str = "",
        installed_at: str = "",
    ) -> Tool:
        """A Tool from a FunctionSpec (functions.json, or one entry of `dreamer agents --json`)."""
        params = spec.get("parameters")
        examples = spec.get("examples")
        return cls(
            agent=agent,
            function=str(spec.get("name", "")),
            description=str(spec.get("description") or ""),
            parameters=params if isinstance(params, Mapping) else {},
            examples=tuple(e for e in examples if isinstance(e, str)) if isinstance(examples, list) else (),
            confirm=bool(spec.get("confirm")),
            agent_description=agent_description,
            publisher=publisher,
            installed_at=installed_at,
            undo=undo if isinstance(undo := spec.get("undo"), (Mapping, bool)) else None,
            reply=tuple(r for r in reply if isinstance(r, str)) if isinstance(reply := spec.get("reply"), list) else (),
            listed=spec.get("sidekick") is not False,
            reads=spec.get("reads") is True,
            undo_hint=tuple(h for h in hint if isinstance(h, str)) if isinstance(hint := spec.get("undo_hint"), list) else (),
        )


def tools_from_agents(agents: Iterable[Mapping[str, Any]]) -> list[Tool]:
    """The exported functions of installed agents, from the `dreamer agents --json` shape."""
    tools: list[Tool] = []
    for agent in agents:
        name = agent.get("name")
        if not isinstance(name, str):
            continue
        about = str(agent.get("description") or agent.get("title") or "")
        for spec in agent.get("functions") or []:
            if isinstance(spec, Mapping) and spec.get("exported") and isinstance(spec.get("name"), str):
                tools.append(Tool.from_spec(name, spec, about, str(agent.get("publisher") or ""),
                                            str(agent.get("installed_at") or "")))
    return tools


@dataclass(frozen=True)
class Step:
    """One call: `agent.function(**args)`."""

    agent: str
    function: str
    args: Mapping[str, Any] = field(default_factory=dict)
    confirmed: bool = False  # the user said yes to this call (only resume() sets it)

    @property
    def name(self) -> str:
        return f"{self.agent}.{self.function}"

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "function": self.function, "args": dict(self.args), "confirmed": self.confirmed}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        return cls(str(data["agent"]), str(data["function"]), dict(data.get("args") or {}), bool(data.get("confirmed")))


@dataclass(frozen=True)
class Option:
    """One answer to a "choose" question; the user picks by number or by words of the label."""

    label: str
    step: Step

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "step": self.step.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Option:
        return cls(str(data["label"]), Step.from_dict(data["step"]))


@dataclass(frozen=True)
class FunctionFacts:
    """What a clarification needs to know about a function to go on without the tool list."""

    summary: str
    confirm: bool
    required: tuple[str, ...]
    properties: Mapping[str, Any]  # JSON schema of each parameter, to read an answer by its type

    @classmethod
    def of(cls, tool: Tool) -> FunctionFacts:
        return cls(tool.summary, tool.confirm, tool.required, dict(tool.properties))

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "confirm": self.confirm,
            "required": list(self.required),
            "properties": dict(self.properties),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FunctionFacts:
        return cls(
            str(data.get("summary", "")),
            bool(data.get("confirm")),
            tuple(data.get("required") or ()),
            dict(data.get("properties") or {}),
        )


@dataclass(frozen=True)
class PartialPlan:
    """A plan that is not settled yet: the steps so far, and where the open question is.

    `choices[i]` holds the candidates for step i when the planner could not tell
    which function was meant (best first; steps[i] is choices[i][0] until the user
    picks); a single candidate there is a guess the user must confirm ("did you
    mean ...?"); it is empty for settled steps. `facts` maps "agent.function" of every
    step and candidate to what resume() must know about it. `now` and `timezone`
    are kept so that an answer like "friday" means the same day as the question did.
    """

    steps: tuple[Step, ...]
    choices: tuple[tuple[Step, ...], ...]
    facts: Mapping[str, FunctionFacts]
    index: int = 0
    now: str = ""
    timezone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [s.to_dict() for s in self.steps],
            "choices": [[s.to_dict() for s in c] for c in self.choices],
            "facts": {k: v.to_dict() for k, v in self.facts.items()},
            "index": self.index,
            "now": self.now,
            "timezone": self.timezone,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartialPlan:
        return cls(
            steps=tuple(Step.from_dict(s) for s in data.get("steps") or ()),
            choices=tuple(tuple(Step.from_dict(s) for s in c) for c in data.get("choices") or ()),
            facts={str(k): FunctionFacts.from_dict(v) for k, v in (data.get("facts") or {}).items()},
            index=int(data.get("index") or 0),
            now=str(data.get("now") or ""),
            timezone=data.get("timezone"),
        )


@dataclass(frozen=True)
class Clarification:
    """A question Sidekick must ask before anything runs.

    kind "choose": the user picks one of `options` (numbered from 1).
    kind "missing": the function of step `partial.index` needs `missing[0]` (and
        then the rest of `missing`); the next message is read as its value.
    kind "confirm": the steps of `partial.steps` that need a yes are listed in the
        question; "yes" marks them confirmed, "no" drops the whole request.
    """

    kind: ClarificationKind
    question: str
    partial: PartialPlan
    options: tuple[Option, ...] = ()
    missing: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "options": [o.to_dict() for o in self.options],
            "missing": list(self.missing),
            "partial": self.partial.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Clarification:
        """The clarification `to_dict` wrote; ValueError in one sentence for anything else."""
        try:
            kind = data.get("kind")
            if kind not in KINDS:
                raise ValueError(f"its kind is one of {', '.join(KINDS)}, not {kind!r}")
            return cls(
                kind=kind,  # type: ignore[arg-type]
                question=str(data.get("question", "")),
                partial=PartialPlan.from_dict(data.get("partial") or {}),
                options=tuple(Option.from_dict(o) for o in data.get("options") or ()),
                missing=tuple(str(m) for m in data.get("missing") or ()),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"The pending question cannot be read back: {exc}.") from None


@dataclass(frozen=True)
class Plan:
    """The planner's answer to one message.

    steps: the calls, in order. When `pending` is None they may run now (a step
        of a confirm=True function only if `confirmed`); when `pending` is set
        they are what the planner understood so far, and nothing may run yet.
    reply: text for the user when there is nothing to run (nothing matched,
        a request was cancelled), else None: the executor reports the results.
    pending: the question to ask first, or None.
    """

    steps: tuple[Step, ...] = ()
    reply: str | None = None
    pending: Clarification | None = None
    # True when nothing the user has fits the message (reply is then only a fallback text);
    # Sidekick answers in one sentence of its own (sidekick/dialogue/smalltalk.py).
    unmatched: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [s.to_dict() for s in self.steps],
            "reply": self.reply,
            "pending": self.pending.to_dict() if self.pending else None,
        }


@dataclass(frozen=True)
class PlanContext:
    """The state of the conversation a planner may use.

    now: the current time, timezone-aware (tests pass a fixed one); dates such as
        "next friday" are computed from it in `timezone`.
    timezone: the user's IANA timezone name ("Europe/Berlin"); UTC when None.
    pending: the clarification the previous turn left open, if any; the planner
        first tries to read the message as its answer.
    history: earlier turns, for planners that can use them (the offline one does not).
    """

    now: datetime | None = None
    timezone: str | None = None
    pending: Clarification | None = None
    history: Sequence[Mapping[str, Any]] = ()
    # Skills (name, description, body, server) of the tool servers whose tools are in use;
    # the model-driven planner shows them to the model, the offline one has no use for them.
    skills: Sequence[Mapping[str, str]] = ()
    # The agent the user's previous turn used, if any: between two agents' functions that fit
    # equally, it is the one meant ("add bread" right after working with the grocery list).
    recent_agent: str | None = None

    def local_now(self) -> datetime:
        """`now` (or the clock) in the user's timezone; UTC when the zone is unknown."""
        tz = zone(self.timezone)
        now = self.now or datetime.now(timezone.utc)
        if now.tzinfo is None:
            now = now.replace(tzinfo=tz)
        return now.astimezone(tz)


def zone(name: str | None) -> Any:
    """The tzinfo for an IANA name; UTC when it is unset or unknown on this machine."""
    if name:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name)
        except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
            pass
    return timezone.utc


class Planner(Protocol):
    """Turns a user's message into a Plan over the given tools.

    `tools` are the exported functions of the user's agents as of this message;
    a planner must not assume they are the same as last time (installing an
    agent makes its functions available at once). Implementations are
    synchronous; an async caller runs a slow one in a thread.
    """

    def plan(self, text: str, tools: Sequence[Tool], context: PlanContext | None = None) -> Plan: ...
