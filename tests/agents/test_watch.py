"""The watch agent, run for real in the SDK worker: adding a watch for a host that is not
granted says so at once (the scope and the exact command in its result and its reply),
instead of every scheduled check failing unseen for the next half hour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_worker import Worker, WorkerFailed

from dreamer.agents.bundles import starter_bundles
from dreamer.contracts.reply_text import result_text
from dreamer.contracts.scopes import ScopeError, parse_scope
from dreamer.kernel.net.policy import canonical_host
from dreamer.kernel.permissions.check import allowed

WATCH = next(b for b in starter_bundles() if b.name == "watch")


@pytest.fixture
def watch(start_worker: Callable[..., Worker], tmp_path: Path) -> Worker:
    return start_worker(WATCH, "watch.server", "watch", tmp_path / "watch-data")


def grants(worker: Worker, granted: set[str]) -> list[str]:
    """Answer grants.check from `granted` as the kernel does; returns the scopes asked about."""
    asked: list[str] = []

    def check(_: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["scope"])
        try:
            parse_scope(params["scope"])
        except ScopeError as exc:  # the kernel's grants.check refuses what is not a scope
            raise WorkerFailed({"code": -32000, "message": str(exc), "data": {"kind": "invalid_argument"}}) from None
        holder = allowed(granted, params["scope"])
        return {"granted": holder is not None, "by": holder}

    worker.syscalls["grants.check"] = check
    return asked


def said(worker: Worker, result: dict[str, Any]) -> str:
    return result_text(result, worker.describe()["add_watch"]["reply"], "Watch a web page")


# (url, the scope the kernel's fetch would need for it): ports, case, IDN, addresses.
HOSTS = [
    ("https://www.example.edu/courses", "net:www.example.edu"),
    ("http://127.0.0.1:8080/status", "net:127.0.0.1"),
    ("https://Shop.Example.COM/Sale?x=1", "net:shop.example.com"),
    ("https://bücher.example/neu", "net:xn--bcher-kva.example"),
    ("http://[::1]:9000/", "net:*"),
]


@pytest.mark.parametrize(("url", "scope"), HOSTS)
def test_a_watch_of_an_ungranted_host_says_which_grant_it_needs(watch: Worker, url: str, scope: str) -> None:
    asked = grants(watch, {"schedule", "notify"})
    added = watch.invoke("add_watch", {"url": url, "what": "enrollment open"})
    assert asked == [scope]
    assert added["needs_grant"] == scope and added["grant_command"] == f"dreamer grant watch {scope}"
    host = url.split("//")[1].split("/")[0].rsplit(":", 1)[0] if "[" not in url else "[::1]"
    assert scope == canonical_host(host.lower()).scope  # named as the kernel's fetch names it
    text = said(watch, added)
    assert text.startswith(f"I added {url} to your watches, but I may not read it yet: it needs {scope}.")
    assert f"`dreamer grant watch {scope}`" in text and "I will post" not in text
    assert [w["url"] for w in watch.invoke("list_watches")] == [url]  # kept: the grant makes it work


@pytest.mark.parametrize(("granted", "what", "reply"), [
    ({"net:www.example.edu"}, "enrollment open", 'Watching {url} for "enrollment open"; I will post to your feed when it shows up.'),
    ({"net:*.example.edu"}, "", "Watching {url}; I will post to your feed when it changes."),
    ({"net:*"}, "fees", 'Watching {url} for "fees"; I will post to your feed when it shows up.'),
])
def test_a_watch_of_a_granted_host_reads_as_before(watch: Worker, granted: set[str], what: str, reply: str) -> None:
    grants(watch, granted)
    url = "https://www.example.edu/courses"
    added = watch.invoke("add_watch", {"url": url, "what": what})
    assert "needs_grant" not in added and "grant_command" not in added
    assert said(watch, added) == reply.format(url=url)


@pytest.mark.parametrize("url", ["ftp://example.com/x", "https:///nohost", "https://exa_mple.com/"])
def test_an_address_no_grant_can_name_is_refused_in_one_sentence(watch: Worker, url: str) -> None:
    grants(watch, set())
    with pytest.raises(WorkerFailed) as err:
        watch.invoke("add_watch", {"url": url})
    assert err.value.kind == "invalid_argument" and "\n" not in err.value.message
    assert watch.invoke("list_watches") == []  # nothing half-added
