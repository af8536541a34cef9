"""How a function's result reads, and how a call is undone: the `reply=` and `undo=` options.

Both are data in functions.json, checked here when the agent is defined (DefinitionError)
and again by the kernel when a bundle is installed (ValueError), so a bad template or
undo reference is refused before anyone chats with the agent.

Reply templates: "Added {added} to your grocery list." Each `{path}` names a result field
(`{event.title}`; `*` maps over a list: `{notes.*.text}`), optionally with a layout:
`{steps:numbered}` or `{items:lines}`, one per line. A template is used only when every
field it names has a value; `{!path}` (which shows nothing) requires the field to be empty,
so alternatives need no logic: ["On your list: {items}.", "{!items}Your list is empty."].

Undo: {"function": "remove_items", "args": {"items": "result.added"}, "when": "result.added"}.
A reference is "result.<path>" or "args.<parameter>"; no "args" means the call's own arguments.
A call that cannot be reversed says so with undo=False, and may say what to do instead
(`undo_hint`, templates like a reply's); a call that only reads says reads=True, and is
passed over by "undo that".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dreamer.sdk.errors import DefinitionError

MAX_TEMPLATES = 12
MAX_TEMPLATE_CHARS = 500
FIELD_RE = re.compile(r"\{(!?)([A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z0-9_]+|\*))*)(?::(lines|numbered))?\}")
REF_RE = re.compile(r"^(result|args)((?:\.[A-Za-z0-9_]+)+)$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

MISSING = object()


@dataclass(frozen=True)
class Field:
    """One `{...}` of a template."""

    negated: bool
    path: tuple[str, ...]
    layout: str  # "" (inline), "lines" or "numbered"


def template_fields(template: str) -> list[Field]:
    """The fields a template names; ValueError in one sentence when it is malformed."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ValueError(f"a reply template is longer than {MAX_TEMPLATE_CHARS} characters")
    fields = [Field(bool(m.group(1)), tuple(m.group(2).split(".")), m.group(3) or "") for m in FIELD_RE.finditer(template)]
    rest = FIELD_RE.sub("", template)
    if "{" in rest or "}" in rest:
        raise ValueError(f"the reply template {template[:60]!r} has a brace that is not a {{field}}")
    return fields


def check_templates(templates: Any) -> tuple[str, ...]:
    """A reply declaration as a tuple of templates; ValueError when it cannot be one."""
    if templates is None:
        return ()
    if isinstance(templates, str):
        templates = [templates]
    if not isinstance(templates, (list, tuple)):
        raise ValueError(f"reply must be a template or a list of templates, not {type(templates).__name__}")
    if len(templates) > MAX_TEMPLATES:
        raise ValueError(f"reply has {len(templates)} templates; at most {MAX_TEMPLATES} are kept")
    out: list[str] = []
    for template in templates:
        if not isinstance(template, str) or not template.strip():
            raise ValueError(f"each reply template must be a non-empty phrase, not {template!r}")
        template_fields(template)
        out.append(template.strip())
    return tuple(out)


def check_undo_spec(undo: Any, parameters: Sequence[str] | None = None) -> dict[str, Any] | bool | None:
    """An undo declaration in its functions.json form; ValueError naming what is wrong.

    `parameters` (this function's own) is known when the agent is defined; args.X must name one.
    """
    if undo is None or undo is False:
        return undo
    if not isinstance(undo, Mapping):
        raise ValueError("undo must be the name of the inverse function, false, or an object with 'function'")
    extra = set(undo) - {"function", "args", "when"}
    if extra:
        raise ValueError(f"undo has unknown fields: {', '.join(sorted(extra))}")
    name = undo.get("function")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError(f"undo names the inverse function by its name, not {name!r}")
    args = undo.get("args")
    if args is not None:
        if not isinstance(args, Mapping) or not all(isinstance(k, str) and NAME_RE.match(k) for k in args):
            raise ValueError("undo args map the inverse's parameter names to 'result.<field>' or 'args.<parameter>'")
        for ref in args.values():
            _check_ref(ref, parameters)
    when = undo.get("when")
    if when is not None:
        _check_ref(when, parameters)
    return {"function": name, "args": dict(args) if args is not None else None, "when": when}


def _check_ref(ref: Any, parameters: Sequence[str] | None) -> None:
    found = REF_RE.match(ref) if isinstance(ref, str) else None
    if found is None:
        raise ValueError(f"{ref!r} is not a reference; write 'result.<field>' or 'args.<parameter>'")
    if found.group(1) == "args" and parameters is not None:
        name = found.group(2).split(".")[1]
        if name not in parameters:
            raise ValueError(f"{ref!r} names no parameter of this function (parameters: {', '.join(parameters) or 'none'})")


def check_reply(function: str, reply: Any) -> tuple[str, ...]:
    try:
        return check_templates(reply)
    except ValueError as exc:
        raise DefinitionError(f"@function option reply of {function}: {exc}") from None


def check_undo(
    function: str, undo: Any, undo_args: Any, undo_when: Any, parameters: Sequence[str]
) -> dict[str, Any] | bool | None:
    if isinstance(undo, bool) and undo:
        raise DefinitionError(f"@function option undo of {function} names the inverse function, or is False")
    if undo is None or undo is False:
        if undo_args is not None or undo_when is not None:
            raise DefinitionError(f"{function} sets undo_args or undo_when without undo='<inverse function>'")
        return undo
    if not isinstance(undo, str):
        raise DefinitionError(f"@function option undo of {function} must be a function name or False, not {undo!r}")
    if undo == function and not undo_args:
        # Undoing by calling itself with the same arguments would do it again; a function
        # that is its own inverse (a move, moved back) says with what in undo_args.
        raise DefinitionError(f"{function} cannot be its own undo without undo_args saying how it goes back")
    try:
        return check_undo_spec({"function": undo, "args": undo_args, "when": undo_when}, parameters)
    except ValueError as exc:
        raise DefinitionError(f"@function option undo of {function}: {exc}") from None


def check_undo_hint_spec(undo: Any, hint: Any, reads: bool) -> tuple[str, ...]:
    """The undo hint's templates, checked against the other undo options; ValueError naming what is wrong."""
    templates = check_templates(hint)
    if reads and undo is not None:
        raise ValueError("reads=True already says there is nothing to undo; leave undo unset")
    if templates and undo is not False:
        raise ValueError("undo_hint says what to do instead of an undo, so it goes with undo=False")
    return templates


def check_undo_hint(function: str, undo: Any, hint: Any, reads: bool) -> tuple[str, ...]:
    try:
        return check_undo_hint_spec(undo, hint, reads)
    except ValueError as exc:
        raise DefinitionError(f"@function options of {function}: {exc}") from None


def lookup(data: Any, path: Sequence[str]) -> Any:
    """The value at a dotted path ("event.title", "notes.*.text"); MISSING when there is none."""
    value = data
    for i, key in enumerate(path):
        if key == "*":
            if not isinstance(value, list):
                return MISSING
            found = [lookup(v, path[i + 1:]) for v in value]
            return [v for v in found if v is not MISSING]
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return MISSING
    return value


def resolve_ref(ref: str, args: Mapping[str, Any], result: Any) -> Any:
    """The value a 'result.x' / 'args.x' reference points at in one call; MISSING when absent."""
    found = REF_RE.match(ref)
    if found is None:
        return MISSING
    path = found.group(2).split(".")[1:]
    return lookup(result if found.group(1) == "result" else dict(args), path)


def is_empty(value: Any) -> bool:
    """Nothing to show: absent, None, "", an empty list or object, or False (0 is a value)."""
    return value is MISSING or value is None or value is False or (isinstance(value, (str, list, dict)) and not value)
