"""A bundle's description is kept by its content: a new account installs the starter agents
without a sandbox per starter, every account still gets the same functions, a changed bundle
is described anew, and a bundle that failed to import is tried (and refused) again."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.functions import FunctionSpec
from dreamer.host.build import build_kernel
from dreamer.kernel.bundles.descriptions import DescriptionCache
from dreamer.kernel.config import load_settings
from dreamer.kernel.core import Kernel
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.models import Installation, User

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from kernelproc import write_bundle

GOOD = '''
from dreamer.sdk import Context, function

@function(exported=True)
def hello(ctx: Context, name: str) -> str:
    """Says hello."""
    return "hello " + name
'''


def spec(name: str) -> FunctionSpec:
    return FunctionSpec.model_validate({"name": name, "description": "d", "parameters": {"type": "object", "properties": {}}})


def test_the_cache_runs_once_per_digest_and_keeps_no_failure() -> None:
    cache = DescriptionCache(entries=2)
    runs: list[str] = []

    async def describe(digest: str, fail: bool = False) -> list[FunctionSpec]:
        async def run() -> list[FunctionSpec]:
            runs.append(digest)
            if fail:
                raise DreamerError("invalid_bundle", "broken")
            return [spec(f"f_{digest}")]
        return await cache.describe(digest, run)

    async def main() -> None:
        assert [s.name for s in await describe("a")] == ["f_a"]
        assert [s.name for s in await describe("a")] == ["f_a"]
        for _ in range(2):
            with pytest.raises(DreamerError):
                await describe("bad", fail=True)
        await describe("b")
        await describe("c")  # over the bound: "a" was least recently used, so it goes
        await describe("a")

    asyncio.run(main())
    assert runs == ["a", "bad", "bad", "b", "c", "a"]
    assert cache.described == 6


class World:
    def __init__(self, home: Path) -> None:
        self.loop = asyncio.Runner()
        settings = load_settings(home=home, database_url=f"sqlite:///{home / 'kernel.db'}", sandbox="bwrap")
        self.kernel: Kernel = build_kernel(settings)
        self.loop.run(self.kernel.start())

    def functions(self, user: str) -> dict[str, list[str]]:
        with self.kernel.store.session() as s:
            uid = s.scalar(select(User.id).where(User.name == user))
            rows = s.scalars(select(Installation).where(Installation.user_id == uid))
            return {r.agent: self._names(uid, r.agent)
                    for r in rows}

    def _names(self, user_id: int, agent: str) -> list[str]:
        installed = self.kernel.installer.cache.agent(user_id, agent)
        assert installed is not None
        return sorted(f.name for f in installed.functions)

    def close(self) -> None:
        self.loop.run(asyncio.wait_for(self.kernel.stop(), 30))
        self.loop.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    w = World(tmp_path_factory.mktemp("descriptions") / "home")
    yield w
    w.close()


def test_new_accounts_get_the_starters_without_describing_them_again(world: World) -> None:
    described = world.kernel.installer.descriptions.described
    assert described >= 1  # the first account's starters were described in the sandbox
    for name in ("ada", "bob"):
        world.loop.run(world.kernel.add_user(name))
    assert world.kernel.installer.descriptions.described == described
    mine = world.functions("me")
    assert world.functions("ada") == world.functions("bob") == mine and mine


def test_a_changed_bundle_is_described_again_and_a_broken_one_is_refused_each_time(world: World, tmp_path: Path) -> None:
    k = world.kernel
    cara, _token = world.loop.run(k.add_user("cara"))  # its own user: the test stands alone
    who = Principal(cara.id, cara.name, cara.timezone)
    before = k.installer.descriptions.described
    first = write_bundle(tmp_path / "v1", "greeter", GOOD, required=[])
    world.loop.run(k.installer.install_folder(who, first))
    second = write_bundle(tmp_path / "v2", "greeter", GOOD.replace("hello ", "hi "), required=[], version="0.2.0")
    world.loop.run(k.installer.install_folder(who, second))
    assert k.installer.descriptions.described == before + 2
    broken = write_bundle(tmp_path / "v3", "greeter", GOOD + "\nraise RuntimeError('no')\n", required=[], version="0.3.0")
    for _ in range(2):
        with pytest.raises(DreamerError) as refused:
            world.loop.run(k.installer.install_folder(who, broken))
        assert refused.value.code == "invalid_bundle"
    assert k.installer.descriptions.described == before + 4
