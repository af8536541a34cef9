"""`dreamer up --node`'s settings: PostgreSQL required, names and addresses checked, one pid file per node."""

from __future__ import annotations

import pytest

from dreamer.kernel.config import load_settings

PG = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in ("DREAMER_NODE", "DREAMER_ADVERTISE", "DREAMER_NODE_LEASE", "DREAMER_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DREAMER_HOME", str(tmp_path))


def test_a_single_kernel_has_no_node_and_keeps_its_pid_file() -> None:
    settings = load_settings()
    assert settings.node is None and settings.advertise is None
    assert settings.pid_path.name == "kernel.pid"


def test_a_node_needs_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMER_NODE", "n1")
    with pytest.raises(SystemExit, match="needs PostgreSQL"):
        load_settings()


def test_a_node_gets_its_name_address_and_own_pid_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMER_DATABASE_URL", PG)
    monkeypatch.setenv("DREAMER_NODE", "n1")
    settings = load_settings(host="127.0.0.1", port=8711)
    assert (settings.node, settings.advertise) == ("n1", "http://127.0.0.1:8711")
    assert settings.pid_path.name == "kernel-n1.pid"
    monkeypatch.setenv("DREAMER_ADVERTISE", "http://10.0.0.5:8700/")
    assert load_settings().advertise == "http://10.0.0.5:8700"


@pytest.mark.parametrize(("variable", "value", "sentence"), [
    ("DREAMER_NODE", "N1/../x", "a node name is"),
    ("DREAMER_ADVERTISE", "10.0.0.5:8700", "--advertise is the node's URL"),
    ("DREAMER_NODE_LEASE", "1", "from 2 to 600"),
])
def test_bad_node_settings_are_refused_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, sentence: str
) -> None:
    monkeypatch.setenv("DREAMER_DATABASE_URL", PG)
    monkeypatch.setenv("DREAMER_NODE", "n1")
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit, match=sentence):
        load_settings()


def test_only_a_node_places_users(monkeypatch: pytest.MonkeyPatch) -> None:
    """A single kernel builds no placement middleware (and so takes no user lease); a node does."""
    from dreamer.kernel.api.app import create_app
    from dreamer.kernel.api.placement import PlaceUsers

    def placed(settings: object) -> bool:
        return any(m.cls is PlaceUsers for m in create_app(settings).user_middleware)  # type: ignore[arg-type]

    assert not placed(load_settings())
    monkeypatch.setenv("DREAMER_DATABASE_URL", PG)
    monkeypatch.setenv("DREAMER_NODE", "n1")
    assert placed(load_settings(host="127.0.0.1", port=8711))
