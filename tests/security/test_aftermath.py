"""After every attack (conftest runs this module last for each backend): the other user
was served throughout, no victim's data changed, nothing landed outside the hostile
agent's data folder, and the audit chain is intact."""

from __future__ import annotations

from pathlib import Path

from security_world import ME_NOTES, OTHER_NOTES, World, credentials_digest


def test_the_other_users_calls_were_answered_throughout(world: World) -> None:
    world.bystander.stop()
    assert world.bystander.failures == []
    assert world.bystander.successes > 0


def test_the_victims_data_is_unchanged_for_both_users(world: World) -> None:
    for user in ("me", "other"):
        assert world.notes(user) == world.notes_before[user]
    assert [row[1] for row in world.notes("me")["rows"]] == ME_NOTES
    assert [row[1] for row in world.notes("other")["rows"]] == OTHER_NOTES


def test_nothing_the_attacks_made_is_outside_the_hostile_agents_data(world: World) -> None:
    own = world.data_dir("me", "hostile")
    strays = [
        str(path) for path in world.home.rglob(f"*{world.marker}*")
        if not path.is_relative_to(own)
    ]
    assert strays == []
    assert not list(Path("/tmp").glob(f"{world.marker}*"))
    assert credentials_digest(world.home) == world.credentials_sha256


def test_the_audit_chain_is_intact(world: World) -> None:
    verified = world.kernel.cli_json("audit", "verify")
    assert verified["ok"] is True and verified["first_bad"] is None, verified
    assert verified["entries"] > 0
