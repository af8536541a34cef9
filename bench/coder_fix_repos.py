"""A dozen tiny repositories, each with a failing test that a small change fixes.

Each case: the files, the instruction a person would give, and the fix (the exact
text to replace in one file) that the scripted model applies. With a real model
the fix is not used: the model has to find it.
"""

from __future__ import annotations

from dataclasses import dataclass

PYTEST_INI = "[pytest]\npythonpath = .\n"


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str]
    instruction: str
    path: str  # the file the fix changes
    old: str
    new: str
    query: str  # what the scripted model searches for first


def _case(name: str, module: str, code: str, test: str, old: str, new: str, query: str) -> Case:
    return Case(
        name=name,
        files={"pytest.ini": PYTEST_INI, f"{module}.py": code, f"tests/test_{module}.py": test},
        instruction=f"The test in tests/test_{module}.py fails. Fix the code (not the test).",
        path=f"{module}.py", old=old, new=new, query=query,
    )


CASES: list[Case] = [
    _case("off-by-one", "pages", "def page_count(items, per_page):\n    return len(items) // per_page\n",
          "from pages import page_count\n\n\ndef test_partial_page():\n    assert page_count(list(range(11)), 5) == 3\n",
          "return len(items) // per_page", "return -(-len(items) // per_page)", "page count"),
    _case("wrong-operator", "calc", "def add(a, b):\n    return a - b\n",
          "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", "return a - b", "return a + b", "add"),
    _case("slice", "cart", "def total(prices):\n    return sum(prices[1:])\n",
          "from cart import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n",
          "sum(prices[1:])", "sum(prices)", "cart total"),
    _case("default-mutable", "bag", "def collect(item, into=[]):\n    into.append(item)\n    return into\n",
          "from bag import collect\n\n\ndef test_fresh_list():\n    collect(1)\n    assert collect(2) == [2]\n",
          "def collect(item, into=[]):\n    into.append(item)",
          "def collect(item, into=None):\n    into = [] if into is None else into\n    into.append(item)", "collect"),
    _case("string-case", "greet", "def greet(name):\n    return 'hello ' + name\n",
          "from greet import greet\n\n\ndef test_greet():\n    assert greet('ada') == 'Hello, Ada!'\n",
          "return 'hello ' + name", "return f'Hello, {name.capitalize()}!'", "greet"),
    _case("comparison", "grade", "def passed(score):\n    return score > 50\n",
          "from grade import passed\n\n\ndef test_boundary():\n    assert passed(50)\n", "score > 50", "score >= 50", "passed score"),
    _case("sort-order", "rank", "def top(scores, n):\n    return sorted(scores)[:n]\n",
          "from rank import top\n\n\ndef test_top():\n    assert top([3, 9, 1, 7], 2) == [9, 7]\n",
          "sorted(scores)[:n]", "sorted(scores, reverse=True)[:n]", "top scores"),
    _case("dict-key", "config", "def port(settings):\n    return settings.get('Port', 8080)\n",
          "from config import port\n\n\ndef test_port():\n    assert port({'port': 9000}) == 9000\n",
          "settings.get('Port', 8080)", "settings.get('port', 8080)", "port settings"),
    _case("strip", "words", "def words(text):\n    return text.split(' ')\n",
          "from words import words\n\n\ndef test_spaces():\n    assert words('  a  b ') == ['a', 'b']\n",
          "text.split(' ')", "text.split()", "words split"),
    _case("integer-division", "average", "def mean(values):\n    return sum(values) // len(values)\n",
          "from average import mean\n\n\ndef test_mean():\n    assert mean([1, 2]) == 1.5\n",
          "sum(values) // len(values)", "sum(values) / len(values)", "mean values"),
    _case("empty-input", "first", "def first(items):\n    return items[0]\n",
          "from first import first\n\n\ndef test_empty():\n    assert first([]) is None\n",
          "return items[0]", "return items[0] if items else None", "first items"),
    _case("range-end", "count", "def count_to(n):\n    return list(range(1, n))\n",
          "from count import count_to\n\n\ndef test_inclusive():\n    assert count_to(3) == [1, 2, 3]\n",
          "range(1, n)", "range(1, n + 1)", "count to"),
]
