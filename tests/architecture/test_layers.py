"""The layering, read from the source with `ast` (imports inside functions and under
TYPE_CHECKING count): what each top-level package may import, and no import cycle.

The layers, bottom up: sdk; contracts; kernel; sidekick, web, gallery, agents, cli;
host (the composition root, which may import everything).
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from imports_scan import Import, all_imports

IMPORTS = all_imports()

# What each layer may import besides itself.
ALLOWED: dict[str, set[str]] = {
    # The sandbox binds only sdk/ into a worker: agent-side code can import nothing else.
    "sdk": set(),
    # sdk: the reply and undo templates' grammar (sdk/replies.py), which functions.json
    # carries and a worker must also read inside its sandbox, where only sdk/ exists; and the
    # scaffold's placeholder description (sdk/templates.py), which pages show as "No description yet".
    "contracts": {"sdk"},
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

# The CLI starts servers as well as talking to them: `dreamer up` starts the whole
# installation and `dreamer gallery serve` a gallery, each through its composition root
# in host/. These are the CLI's only ways into the host; nothing else in the CLI may import it.
ENTRY_POINTS: set[tuple[str, str]] = {
    ("dreamer.cli.commands.kernel", "dreamer.host.server"),
    ("dreamer.cli.commands.gallery", "dreamer.host.gallery_server"),
}


def _violations() -> list[Import]:
    return [
        imp for imp in IMPORTS
        if imp.source_layer != imp.target_layer and imp.target_layer not in ALLOWED[imp.source_layer]
        and (imp.source, imp.target) not in ENTRY_POINTS
    ]


def test_every_import_crosses_layers_only_downwards() -> None:
    found = sorted({imp.where() for imp in _violations()})
    assert not found, "imports across layers that are not allowed:\n" + "\n".join(found)


@pytest.mark.parametrize("upper", ["sidekick", "web", "gallery", "agents", "cli", "host"])
def test_the_kernel_imports_nothing_above_it(upper: str) -> None:
    above = [imp.where() for imp in IMPORTS if imp.source_layer == "kernel" and imp.target_layer == upper]
    assert not above, "\n".join(above)


def test_the_scanner_reads_the_whole_tree() -> None:
    # An empty or broken scan would pass every rule here; the tree has many hundreds of imports.
    assert len(IMPORTS) > 100
    assert len({imp.source_layer for imp in IMPORTS}) >= 8


def test_the_web_app_calls_kernel_services_never_a_route_handler() -> None:
    # The pages read through the same kernel services the handlers call; a handler is
    # the HTTP edge (its Query defaults, its response shapes) and not an in-process API.
    into_routes = [
        imp.where() for imp in IMPORTS
        if imp.source_layer == "web" and (imp.target == "dreamer.kernel.api.routes"
                                          or imp.target.startswith("dreamer.kernel.api.routes."))
    ]
    assert not into_routes, "\n".join(into_routes)


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
