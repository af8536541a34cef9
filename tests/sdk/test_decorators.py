"""@function: both spellings, the registry, and every mistake refused at import time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dreamer.sdk import REGISTRY, Context, DefinitionError, DreamerSDKError, function
from dreamer.sdk.decorators import describe


def test_bare_and_called_forms_register_and_return_the_function() -> None:
    @function
    def plain(ctx: Context, x: int) -> int:
        """Double x."""
        return x * 2

    @function(exported=True, background=True, confirm=True, examples=["double {x}"])
    def fancy(ctx: Context, x: int) -> int:
        return x * 2

    assert plain(None, 2) == 4  # still an ordinary function
    assert REGISTRY.names() == ["plain", "fancy"]
    assert REGISTRY.get("plain").spec() == {
        "name": "plain",
        "description": "Double x.",
        "parameters": REGISTRY.get("plain").parameters.schema,
        "result": {"type": "integer"},
        "exported": False,
        "background": False,
        "confirm": False,
        "examples": [],
        "retries": 0,
    }
    spec = REGISTRY.get("fancy").spec()
    assert (spec["exported"], spec["background"], spec["confirm"], spec["examples"]) == (True, True, True, ["double {x}"])
    assert spec["description"] == ""


def test_description_keeps_the_whole_cleaned_docstring() -> None:
    def f(ctx):
        """Summary line.

            Indented detail
        more.
        """

    assert describe(f).description == "Summary line.\n\n    Indented detail\nmore."


def test_duplicate_names_are_refused() -> None:
    def make() -> Any:
        def add(ctx: Context) -> None: ...

        return add

    def add(ctx: Context) -> None: ...

    function(add)
    with pytest.raises(DefinitionError, match=r"^function 'add' is defined twice \(\S+<locals>.add and \S+make.<locals>.add\)"):
        function(make())


def test_redefining_the_same_function_replaces_it() -> None:
    def add(ctx: Context) -> None: ...

    function(add)
    function(add)  # importlib.reload runs the decorator again
    assert REGISTRY.names() == ["add"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(ctx, *items): pass", r"^f takes \*items; agent functions need named parameters"),
        ("def f(ctx, **options): pass", r"^f takes \*\*options; agent functions need named parameters"),
        ("def f(): pass", r"^f must take the Context as its first parameter"),
        ("def f(*, ctx): pass", r"^f must take the Context as its first parameter"),
        ("def f(ctx, x, /): pass", r"^parameter 'x' of f is positional-only"),
        ("def f(items: list[str]): pass", r"^the first parameter of f receives the Context, but 'items' is annotated list\[str\]"),
        ("def f(ctx):\n    yield 1", r"^f is a generator"),
        ("def f(ctx, x: 'NoSuchType'): pass", r"^the type hints of f cannot be resolved: NameError"),
        ("class Thing: pass\ndef f(ctx, x: Thing): pass", r"^the parameters of f cannot be described as JSON"),
        ("class Thing: pass\ndef f(ctx) -> Thing: pass", r"^the result type of f cannot be described as JSON"),
    ],
)
def test_definition_mistakes_are_refused_with_one_sentence(source: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(DefinitionError, match=message) as caught:
        function(namespace["f"])
    assert caught.value.kind == "import_error"
    assert isinstance(caught.value, DreamerSDKError) and isinstance(caught.value, TypeError)
    assert "\n" not in caught.value.message
    assert len(REGISTRY) == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"exported": "yes"}, r"option exported of f must be True or False"),
        ({"confirm": 1}, r"option confirm of f must be True or False"),
        ({"examples": "add {x}"}, r"examples of f must be a list of phrases"),
        ({"examples": ["  "]}, r"each example of f must be a non-empty phrase"),
        ({"examples": ["add {y} please"]}, r"has the slot \{y\}, which is not a parameter \(parameters: x\)"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    def f(ctx: Context, x: str) -> None: ...

    with pytest.raises(DefinitionError, match=message):
        function(**options)(f)


def test_options_must_be_given_by_name() -> None:
    with pytest.raises(DefinitionError, match=r"@function takes its options by name"):
        function(True)  # type: ignore[call-overload]


def test_non_functions_are_refused() -> None:
    class Thing:
        def method(self, ctx: Context) -> None: ...

    with pytest.raises(DefinitionError, match=r"decorates plain functions"):
        function(Thing)
    with pytest.raises(DefinitionError, match=r"must be an ASCII identifier"):
        function(lambda ctx: None)


def test_first_parameter_may_be_named_anything_and_typed_any() -> None:
    def f(context: Any, x: int) -> int:
        return x

    entry = describe(f)
    assert list(entry.parameters.schema["properties"]) == ["x"]


def test_async_functions_are_run_to_completion() -> None:
    async def later(ctx: Context, x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    entry = describe(later)
    assert entry.call(None, entry.validate({"x": 1})) == 2
