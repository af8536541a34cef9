"""Helpers shared by the model gateway tests (a module of its own, so tests can import it)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from llm_server import FakeLLMServer

from dreamer.kernel.llm.config import LLMConfig, Price
from dreamer.kernel.llm.gateway import Gateway
from dreamer.kernel.store.db import Store
from dreamer.kernel.users.accounts import create_user

T = TypeVar("T")
MODELS = {"fast": "small-1", "standard": "medium-1", "powerful": "large-1"}
SECRET = "sk-test-secret-key"


def add_user(store: Store, name: str = "ada") -> int:
    with store.session() as s:
        user, _token = create_user(s, name)
        return user.id


def config_for(fake: FakeLLMServer, provider: str, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {
        "provider": provider,
        "base_url": fake.anthropic_url if provider == "anthropic" else fake.openai_url,
        "api_key": SECRET,
        "api_key_source": "DREAMER_LLM_API_KEY",
        "models": dict(MODELS),
        "prices": {"medium-1": Price(input=2.0, output=10.0, cache_read=0.5, cache_write=2.5)},
        "budget_usd": None,
        "timeout_s": 5.0,
        "max_retries": 0,
    }
    values.update(overrides)
    return LLMConfig(**values)


def gateway_for(fake: FakeLLMServer, provider: str, store: Store, **overrides: Any) -> Gateway:
    return Gateway(config_for(fake, provider, **overrides), store)


def run(gateway: Gateway, work: Callable[[Gateway], Awaitable[T]]) -> T:
    """Run `work(gateway)` in a fresh event loop and close the gateway's client in it."""

    async def main() -> T:
        try:
            return await work(gateway)
        finally:
            await gateway.aclose()

    return asyncio.run(main())


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]
