"""The functions an agent defines, recorded by `@function` as its modules are imported.

One registry per process: a worker imports exactly one agent, so every
registered function belongs to it, whichever of the bundle's modules defines it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from dreamer.sdk.errors import DefinitionError
from dreamer.sdk.schema import Parameters, Result, Shapes


@dataclass(frozen=True)
class RegisteredFunction:
    name: str
    func: Callable[..., Any]
    description: str
    shapes: Shapes  # the parameters' model and the result's adapter (built on first use in a worker)
    exported: bool
    background: bool
    confirm: bool
    examples: tuple[str, ...]
    is_async: bool
    retries: int = 0
    undo: dict[str, Any] | bool | None = None  # {"function", "args", "when"}, False, or None (not declared)
    reply: tuple[str, ...] = ()
    sidekick: bool = True
    reads: bool = False  # a call only reads: nothing to undo
    undo_hint: tuple[str, ...] = ()  # with undo=False: what the user can do instead (reply templates)

    @property
    def parameters(self) -> Parameters:
        return self.shapes.build()[0]

    @property
    def result(self) -> Result:
        return self.shapes.build()[1]

    @property
    def origin(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"

    def spec(self) -> dict[str, Any]:
        """The FunctionSpec (docs/ARCHITECTURE.md), as written to functions.json."""
        parameters, result = self.shapes.described()
        return {
            "name": self.name,
            "description": self.description,
            "parameters": parameters.schema,
            "result": result.schema,
            "exported": self.exported,
            "background": self.background,
            "confirm": self.confirm,
            "examples": list(self.examples),
            "retries": self.retries,
            # Written only when declared, so a functions.json of an agent that uses none stays as it was.
            **({"undo": self.undo} if self.undo is not None else {}),
            **({"reply": list(self.reply)} if self.reply else {}),
            **({"sidekick": False} if not self.sidekick else {}),
            **({"reads": True} if self.reads else {}),
            **({"undo_hint": list(self.undo_hint)} if self.undo_hint else {}),
        }

    def validate(self, raw_args: Any) -> dict[str, Any]:
        """JSON arguments -> keyword arguments; InvalidArgument names the parameter."""
        return self.parameters.validate(raw_args)

    def call(self, ctx: Any, kwargs: dict[str, Any]) -> Any:
        """Run the function with validated arguments; whatever it raises propagates."""
        if self.is_async:
            import asyncio  # only agents with async functions pay for it

            return asyncio.run(self.func(ctx, **kwargs))
        return self.func(ctx, **kwargs)


class Registry:
    def __init__(self) -> None:
        self._functions: dict[str, RegisteredFunction] = {}

    def add(self, entry: RegisteredFunction) -> None:
        existing = self._functions.get(entry.name)
        # Re-running the same definition (importlib.reload) replaces it; two
        # different definitions with one name would make calls ambiguous.
        if existing is not None and existing.origin != entry.origin:
            raise DefinitionError(
                f"function '{entry.name}' is defined twice ({existing.origin} and {entry.origin}); "
                "function names must be unique within an agent"
            )
        self._functions[entry.name] = entry

    def get(self, name: str) -> RegisteredFunction | None:
        return self._functions.get(name)

    def specs(self) -> list[dict[str, Any]]:
        return [entry.spec() for entry in self._functions.values()]

    def names(self) -> list[str]:
        return list(self._functions)

    def clear(self) -> None:
        self._functions.clear()

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def __iter__(self) -> Iterator[RegisteredFunction]:
        return iter(list(self._functions.values()))

    def __len__(self) -> int:
        return len(self._functions)


# The registry `@function` writes to and the worker reads from.
REGISTRY = Registry()
