"""`@function`: turn a plain Python function into an agent function.

    from dreamer.sdk import Context, function

    @function(exported=True, examples=["add {items} to my grocery list"])
    def add_items(ctx: Context, items: list[str]) -> dict:
        '''Add items to the user's grocery list.'''

Name = the Python name; description = the docstring; parameters after the
Context and the result come from the type hints. Every mistake is reported
when the module is imported (DefinitionError), so `dreamer build` catches it.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

from dreamer.sdk.context import Context
from dreamer.sdk.errors import DefinitionError
from dreamer.sdk.registry import REGISTRY, RegisteredFunction
from dreamer.sdk.replies import check_reply, check_undo, check_undo_hint
from dreamer.sdk.schema import Shapes

F = TypeVar("F", bound=Callable[..., Any])

# Function names as the manifest and the kernel accept them (ASCII identifiers).
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
SLOT_RE = re.compile(r"\{([^{}]*)\}")
MAX_EXAMPLES = 50
MAX_EXAMPLE_CHARS = 300
MAX_RETRIES = 10


@overload
def function(fn: F, /) -> F: ...


@overload
def function(
    *,
    exported: bool = False,
    background: bool = False,
    examples: Sequence[str] | None = None,
    confirm: bool = False,
    retries: int = 0,
    undo: str | bool | None = None,
    undo_args: Mapping[str, str] | None = None,
    undo_when: str | None = None,
    undo_hint: str | Sequence[str] | None = None,
    reads: bool = False,
    reply: str | Sequence[str] | None = None,
    sidekick: bool = True,
) -> Callable[[F], F]: ...


def function(
    fn: Any = None,
    /,
    *,
    exported: bool = False,
    background: bool = False,
    examples: Sequence[str] | None = None,
    confirm: bool = False,
    retries: int = 0,
    undo: str | bool | None = None,
    undo_args: Mapping[str, str] | None = None,
    undo_when: str | None = None,
    undo_hint: str | Sequence[str] | None = None,
    reads: bool = False,
    reply: str | Sequence[str] | None = None,
    sidekick: bool = True,
) -> Any:
    """Register a function of this agent. Use as `@function` or `@function(...)`.

    exported: Sidekick and other agents may call it (with a grant).
    background: callers get an invocation id at once; the function runs on.
    examples: phrases that ask for it, with {parameter} slots
        ("add {items} to my grocery list"); the offline planner matches them.
    confirm: Sidekick asks the user before each call (sending, deleting, paying).
    retries: (background functions) how many times the kernel runs it again after a
        failed or interrupted attempt, so at most 1 + retries attempts; `ctx.attempt` says which.
    undo: the name of this agent's function that reverses a call ("remove_items"), so
        Sidekick can "undo that"; False when a call cannot be reversed; None: not declared.
    undo_args: the inverse's arguments, each taken from this call: "result.added",
        "result.event.id" or "args.items" (default: this call's own arguments).
    undo_when: a result field that must be true for there to be anything to undo
        ("result.added": adding an event that was already there changed nothing).
    undo_hint: with undo=False, what the user can do instead, as reply templates over the
        result ('Say "remove {added} from my grocery list" to take them off.').
    reads: True when a call only reads and changes nothing, so "undo that" passes over it to
        the call before; undo=False is for a call that changes things and cannot be reversed.
    reply: how a result reads to the user: a template over result fields ("Added {added}
        to your grocery list.") or a list of them; each template is used when every field it
        names has a value, and `{!field}` at its start requires the field to be empty.
        `{steps:numbered}` and `{notes.*.text:lines}` show a list one per line. A result's own
        "reply" string is shown instead when it has one.
    sidekick: False hides the function from Sidekick's "what can you do" list (internal helpers).
    """

    def decorate(func: F) -> F:
        REGISTRY.add(
            describe(
                func, exported=exported, background=background, examples=examples, confirm=confirm, retries=retries,
                undo=undo, undo_args=undo_args, undo_when=undo_when, undo_hint=undo_hint, reads=reads, reply=reply,
                sidekick=sidekick,
            )
        )
        return func

    if fn is None:
        return decorate
    if not callable(fn):
        raise DefinitionError(
            f"@function takes its options by name, e.g. @function(exported=True); got {fn!r}"
        )
    return decorate(fn)


def describe(
    func: Any,
    *,
    exported: bool = False,
    background: bool = False,
    examples: Sequence[str] | None = None,
    confirm: bool = False,
    retries: int = 0,
    undo: str | bool | None = None,
    undo_args: Mapping[str, str] | None = None,
    undo_when: str | None = None,
    undo_hint: str | Sequence[str] | None = None,
    reads: bool = False,
    reply: str | Sequence[str] | None = None,
    sidekick: bool = True,
) -> RegisteredFunction:
    """Everything the worker needs to know about one function; DefinitionError if it cannot."""
    if isinstance(func, (staticmethod, classmethod)) or not inspect.isfunction(func):
        raise DefinitionError(f"@function decorates plain functions (def ...), not {type(func).__name__}")
    name = func.__name__
    if not NAME_RE.match(name):
        raise DefinitionError(
            f"function name {name!r} must be an ASCII identifier of at most 64 characters"
        )
    if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
        raise DefinitionError(f"{name} is a generator; an agent function returns its result with return, not yield")
    for option, value in (("exported", exported), ("background", background), ("confirm", confirm),
                          ("sidekick", sidekick), ("reads", reads)):
        if not isinstance(value, bool):
            raise DefinitionError(f"@function option {option} of {name} must be True or False, not {value!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise DefinitionError(f"@function option retries of {name} must be a whole number from 0 to {MAX_RETRIES}, not {retries!r}")
    if retries and not background:
        raise DefinitionError(f"{name} sets retries but is not background=True; only background functions are retried")

    signature = inspect.signature(func)
    params = list(signature.parameters.values())
    _check_parameters(name, params)
    hints = _type_hints(name, func)
    _check_context_hint(name, params[0], hints)

    shapes = Shapes(name, signature, hints)
    return RegisteredFunction(
        name=name,
        func=func,
        description=inspect.cleandoc(func.__doc__) if func.__doc__ else "",
        shapes=shapes,
        exported=exported,
        background=background,
        confirm=confirm,
        retries=retries,
        examples=_check_examples(name, examples, [p.name for p in params[1:]]),
        is_async=inspect.iscoroutinefunction(func),
        undo=check_undo(name, undo, undo_args, undo_when, [p.name for p in params[1:]]),
        undo_hint=check_undo_hint(name, undo, undo_hint, reads),
        reads=reads,
        reply=check_reply(name, reply),
        sidekick=sidekick,
    )


def _type_hints(name: str, func: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func, include_extras=True)
    except NameError:
        pass
    except Exception as exc:  # noqa: BLE001 - TypeError, SyntaxError in string hints
        raise DefinitionError(f"the type hints of {name} cannot be resolved: {type(exc).__name__}: {exc}") from None
    # `from __future__ import annotations` with Context imported only under
    # TYPE_CHECKING leaves "Context" unresolvable at run time; supply it. What
    # still fails (a class defined further down, a typo) is the real problem.
    try:
        return typing.get_type_hints(func, localns={"Context": Context}, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - NameError, TypeError: a builder's hint, said back to them
        raise DefinitionError(
            f"the type hints of {name} cannot be resolved: {type(exc).__name__}: {exc} "
            "(types must be defined or imported before the function)"
        ) from None


def _check_parameters(name: str, params: list[inspect.Parameter]) -> None:
    if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        raise DefinitionError(f"{name} must take the Context as its first parameter: def {name}(ctx: Context, ...)")
    for param in params[1:]:
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise DefinitionError(
                f"{name} takes *{param.name}; agent functions need named parameters, each with a type"
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise DefinitionError(
                f"{name} takes **{param.name}; agent functions need named parameters, each with a type"
            )
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise DefinitionError(
                f"parameter '{param.name}' of {name} is positional-only; arguments arrive by name, so remove the /"
            )


def _check_context_hint(name: str, first: inspect.Parameter, hints: dict[str, Any]) -> None:
    # Catches the easy mistake of forgetting ctx: `def add(items: list[str])`
    # would otherwise silently hide `items` from the schema.
    if first.name not in hints:
        return
    hint = hints[first.name]
    if isinstance(hint, type) and issubclass(hint, Context):
        return
    if hint is Any:
        return
    raise DefinitionError(
        f"the first parameter of {name} receives the Context, but '{first.name}' is annotated "
        f"{_type_name(hint)}: write def {name}(ctx: Context, {first.name}: ...)"
    )


def _check_examples(name: str, examples: Sequence[str] | None, parameters: list[str]) -> tuple[str, ...]:
    if examples is None:
        return ()
    if isinstance(examples, str) or not isinstance(examples, (list, tuple)):
        raise DefinitionError(f"examples of {name} must be a list of phrases, not {type(examples).__name__}")
    if len(examples) > MAX_EXAMPLES:
        raise DefinitionError(f"{name} has {len(examples)} examples; at most {MAX_EXAMPLES} are kept")
    out: list[str] = []
    for example in examples:
        if not isinstance(example, str) or not example.strip():
            raise DefinitionError(f"each example of {name} must be a non-empty phrase, not {example!r}")
        if len(example) > MAX_EXAMPLE_CHARS:
            raise DefinitionError(f"an example of {name} is longer than {MAX_EXAMPLE_CHARS} characters")
        for slot in SLOT_RE.findall(example):
            if slot not in parameters:
                known = ", ".join(parameters) or "none"
                raise DefinitionError(
                    f"example {example!r} of {name} has the slot {{{slot}}}, which is not a parameter (parameters: {known})"
                )
        out.append(example.strip())
    return tuple(out)


def _type_name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else repr(hint).replace("typing.", "")
