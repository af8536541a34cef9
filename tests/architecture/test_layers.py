"""The layering, read from the source with `ast` (imports inside functions and under
TYPE_CHECKING count): what each top-level package may import, and no import cycle.

The layers, bottom up: contracts; sdk; kernel; sidekick, web, gallery, agents, cli;
host (the composition root, which may import everything).
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from imports_scan import Import, all_imports

IMPORTS = all_imports()

# What each layer may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "contracts": set(),
    # The sandbox binds only sdk/ into a worker: agent-side code can import nothing else.
    "sdk": set(),
    "kernel": {"contracts", "sdk"},  # sdk: the worker wire protocol (sdk/protocol.py)
    # sdk: the reply and undo templates' grammar (sdk/replies.py), pure code shared with the
    # worker, which can import only sdk/ inside its sandbox.
    "sidekick": {"contracts", "kernel", "sdk"},
    "web": {"contracts", "kernel"},
    "agents": {"sdk"},
    "gallery": {"contracts"},
    "cli": {"contracts", "sdk"},  # sdk: `dreamer develop` runs an agent's own code
    "host": {"contracts", "sdk", "kernel", "sidekick", "web", "gallery", "agents"},
}

# Imports still crossing a layer they should not, each to be moved onto dreamer.contracts
# (or the HTTP API); the list may only shrink. An entry that no longer exists fails too,
# so it is removed when its import goes.
KNOWN: set[tuple[str, str]] = {
    ("dreamer.cli.commands.bundles", "dreamer.kernel.tools.serverjson"),
    ("dreamer.cli.commands.gallery", "dreamer.gallery.app"),
    ("dreamer.cli.commands.gallery", "dreamer.gallery.client"),
    ("dreamer.cli.commands.gallery", "dreamer.gallery.publish"),
    ("dreamer.cli.commands.gallery", "dreamer.gallery.service"),
    ("dreamer.cli.commands.gallery", "dreamer.gallery.signing"),
    ("dreamer.gallery.app", "dreamer.kernel.api.body"),
    ("dreamer.gallery.app", "dreamer.kernel.api.errors"),
    ("dreamer.gallery.bundle", "dreamer.kernel.bundles.functions"),
    ("dreamer.gallery.bundle", "dreamer.kernel.bundles.manifest"),
    ("dreamer.gallery.service", "dreamer.kernel.store.db"),
    ("dreamer.gallery.store", "dreamer.kernel.store.db"),
    ("dreamer.gallery.store", "dreamer.kernel.store.models"),
}


def _violations() -> list[Import]:
    return [
        imp for imp in IMPORTS
        if imp.source_layer != imp.target_layer and imp.target_layer not in ALLOWED[imp.source_layer]
        # `dreamer up` starts the whole installation: the CLI's one way into the host.
        and not (imp.source == "dreamer.cli.commands.kernel" and imp.target == "dreamer.host.server")
    ]


def test_every_import_crosses_layers_only_downwards() -> None:
    found = _violations()
    new = [imp.where() for imp in found if (imp.source, imp.target) not in KNOWN]
    assert not new, "imports across layers that are not allowed:\n" + "\n".join(sorted(set(new)))


def test_the_list_of_known_crossings_is_current() -> None:
    found = {(imp.source, imp.target) for imp in _violations()}
    gone = sorted(KNOWN - found)
    assert not gone, f"these imports are gone; remove them from KNOWN: {gone}"


@pytest.mark.parametrize("upper", ["sidekick", "web", "gallery", "agents", "cli", "host"])
def test_the_kernel_imports_nothing_above_it(upper: str) -> None:
    above = [imp.where() for imp in IMPORTS if imp.source_layer == "kernel" and imp.target_layer == upper]
    assert not above, "\n".join(above)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in list(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle_even_through_imports_inside_functions() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in IMPORTS:
        if not imp.type_only:  # TYPE_CHECKING imports never run
            edges[imp.source].add(imp.target)
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
