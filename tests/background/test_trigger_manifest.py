"""Triggers in agent.yaml: every bad declaration is refused with one sentence naming the field."""

from __future__ import annotations

import pytest

from dreamer.contracts.manifest import parse_manifest
from dreamer.contracts.errors import DreamerError

BASE = """name: watcher
version: 1.0.0
title: W
description: d
publisher: tests
entry: watcher.server
permissions: {required: [schedule]}
"""


def manifest(triggers: str, base: str = BASE) -> object:
    return parse_manifest(base + "triggers:\n" + triggers)


def test_good_triggers_of_every_type() -> None:
    m = manifest(
        '  - {type: cron, schedule: "0  7 * * mon-fri", entrypoint: morning, name: Morning}\n'
        "  - {type: webhook, entrypoint: on_hook, name: Incoming}\n"
        "  - {type: input, content_types: [Text/Plain, 'image/*'], entrypoint: on_share, name: Shared}\n"
        "  - {type: event, event: notes.article.saved, entrypoint: on_save, name: Saved}\n"
        + "events: [page.changed]\n"
    )
    assert [t.type for t in m.triggers] == ["cron", "webhook", "input", "event"]  # type: ignore[attr-defined]
    assert m.triggers[0].schedule == "0 7 * * mon-fri"  # type: ignore[attr-defined]
    assert m.triggers[2].content_types == ["text/plain", "image/*"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("triggers", "words"),
    [
        ('  - {type: cron, schedule: "61 * * * *", entrypoint: f, name: x}\n', "'61'"),
        ('  - {type: cron, schedule: "* * *", entrypoint: f, name: x}\n', "has 3 fields; it needs 5"),
        ('  - {type: cron, schedule: "0 7 * * */2", entrypoint: f, name: x}\n', "uses a step"),
        ("  - {type: cron, entrypoint: f, name: x}\n", "a cron trigger needs 'schedule'"),
        ("  - {type: sometimes, entrypoint: f, name: x}\n", "'triggers.0.type'"),
        ('  - {type: webhook, schedule: "* * * * *", entrypoint: f, name: x}\n', "a webhook trigger takes no 'schedule'"),
        ("  - {type: event, event: saved, entrypoint: f, name: x}\n", "AGENT.EVENT"),
        ("  - {type: input, entrypoint: f, name: x}\n", "needs 'content_types'"),
        ("  - {type: input, content_types: [plain], entrypoint: f, name: x}\n", "type/subtype"),
        ("  - {type: webhook, entrypoint: 'not valid', name: x}\n", "'triggers.0.entrypoint'"),
        ("  - {type: webhook, entrypoint: f, name: x}\n  - {type: webhook, entrypoint: g, name: x}\n", "same name"),
    ],
)
def test_bad_triggers_are_refused(triggers: str, words: str) -> None:
    with pytest.raises(DreamerError) as caught:
        manifest(triggers)
    assert caught.value.code == "invalid_bundle" and words in caught.value.message, caught.value.message
    assert caught.value.message.startswith("agent.yaml: field ") and "\n" not in caught.value.message


def test_triggers_need_the_schedule_permission_and_events_a_name() -> None:
    with pytest.raises(DreamerError, match="must ask for the 'schedule' permission"):
        manifest("  - {type: webhook, entrypoint: f, name: x}\n", BASE.replace("[schedule]", "[notify]"))
    with pytest.raises(DreamerError, match="does not have the form"):
        parse_manifest(BASE + "events: [Article Saved]\n")
