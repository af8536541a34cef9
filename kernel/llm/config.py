"""Model gateway settings: $DREAMER_HOME/config.toml, then the environment on top.

    [llm]
    provider = "anthropic"        # anthropic | openai | offline (the default)
    base_url = "http://127.0.0.1:11434/v1"   # optional; any OpenAI-compatible server
    api_key_env = "MY_KEY"        # the variable holding the key; keys never go in this file
    model = "llama3.2"            # optional: one model for every variant
    timeout = 60                  # seconds per model request
    max_retries = 2               # the client library's retries of failed requests
    max_tokens = 4096             # ceiling on what any model call may ask for (an agent's, Sidekick's)
    temperature = 0               # optional: used when a call names none (0 makes a local model repeatable)
    budget_usd = 10               # per user per calendar month (UTC); "unlimited" for none

    [llm.models]
    fast = "claude-haiku-5-5"
    standard = "claude-sonnet-5-5"
    powerful = "claude-opus-5-5"

    [llm.prices."claude-sonnet-5-5"]   # USD per million tokens
    input = 3.0
    output = 15.0
    cache_read = 0.3
    cache_write = 3.75

The environment wins: DREAMER_LLM_PROVIDER, DREAMER_LLM_BASE_URL, DREAMER_LLM_API_KEY
(else ANTHROPIC_API_KEY / OPENAI_API_KEY), DREAMER_LLM_MODEL,
DREAMER_LLM_MODEL_FAST / _STANDARD / _POWERFUL, DREAMER_LLM_BUDGET_USD,
DREAMER_LLM_TIMEOUT, DREAMER_LLM_MAX_RETRIES, DREAMER_LLM_TEMPERATURE, DREAMER_LLM_MAX_TOKENS.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dreamer.kernel.llm.types import VARIANTS

PROVIDERS = ("offline", "anthropic", "openai")

# Defaults when only the provider is named. OpenAI-compatible servers name their
# models freely (llama3.2, qwen2.5, ...), so that provider has no default.
DEFAULT_MODELS: dict[str, dict[str, str]] = {
    "anthropic": {"fast": "claude-haiku-5-5", "standard": "claude-sonnet-5-5", "powerful": "claude-opus-5-5"},
}
DEFAULT_BUDGET_USD = 10.0
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_TOKENS = 4096
# Sent when no key is configured for a server that needs none (Ollama, llama.cpp);
# the client libraries refuse to start without some key.
NO_KEY = "no-key-configured"
OPENAI_HOST = "api.openai.com"


class LLMConfigError(ValueError):
    """The model configuration cannot be used; the message says what to change."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens. Cache prices default to the input price when unknown."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True)
class LLMConfig:
    provider: str = "offline"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_source: str | None = None  # where the key came from, for `dreamer doctor` (never the key)
    models: dict[str, str] = field(default_factory=dict)
    prices: dict[str, Price] = field(default_factory=dict)
    budget_usd: float | None = DEFAULT_BUDGET_USD  # None: no limit
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float | None = None  # for calls that name none; None: the server's default
    config_file: str | None = None

    def model_for(self, variant: str) -> str:
        if variant not in VARIANTS:
            raise LLMConfigError(f"unknown model variant {variant!r}; use one of {', '.join(VARIANTS)}")
        return self.models[variant]

    def price_for(self, model: str) -> Price:
        return self.prices.get(model, Price())


def load_llm_config(home: Path, env: Mapping[str, str] | None = None) -> LLMConfig:
    """Read config.toml under `home` (if any) and apply the environment; raise
    LLMConfigError with one sentence when the result cannot be used."""
    env = os.environ if env is None else env
    path = home / "config.toml"
    table: dict[str, Any] = {}
    source: str | None = None
    if path.is_file():
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise LLMConfigError(f"{path} is not valid TOML: {exc}") from None
        except OSError as exc:
            raise LLMConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        raw = document.get("llm", {})
        if not isinstance(raw, dict):
            raise LLMConfigError(f"{path}: [llm] must be a table")
        table, source = raw, str(path)
    where = source or "config"

    provider = str(env.get("DREAMER_LLM_PROVIDER") or table.get("provider") or "offline").strip().lower()
    if provider not in PROVIDERS:
        raise LLMConfigError(f"unknown model provider {provider!r}; use one of {', '.join(PROVIDERS)}")
    base_url = _text(env.get("DREAMER_LLM_BASE_URL") or table.get("base_url"), "base_url", where)
    if base_url is not None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LLMConfigError(f"the model base URL {base_url!r} must be an http:// or https:// URL")
        base_url = base_url.rstrip("/")

    models = _models(provider, table, env, where)
    api_key, key_source = _api_key(provider, table, env, where)
    if provider != "offline" and api_key is None:
        if _needs_key(provider, base_url):
            name = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
            raise LLMConfigError(f"the {provider} provider needs an API key: set DREAMER_LLM_API_KEY or {name}")
        api_key = NO_KEY

    return LLMConfig(
        provider=provider,
        base_url=base_url,
        api_key=api_key,
        api_key_source=key_source,
        models=models,
        prices=_prices(table.get("prices", {}), where),
        budget_usd=_budget(env.get("DREAMER_LLM_BUDGET_USD", table.get("budget_usd", DEFAULT_BUDGET_USD)), where),
        timeout_s=float(_positive(env.get("DREAMER_LLM_TIMEOUT", table.get("timeout", DEFAULT_TIMEOUT_S)), "timeout", where)),
        max_retries=int(_count(env.get("DREAMER_LLM_MAX_RETRIES", table.get("max_retries", DEFAULT_MAX_RETRIES)), "max_retries", where)),
        max_tokens=int(_positive(env.get("DREAMER_LLM_MAX_TOKENS", table.get("max_tokens", DEFAULT_MAX_TOKENS)), "max_tokens",
                                 where, integer=True)),
        temperature=_temperature(env.get("DREAMER_LLM_TEMPERATURE", table.get("temperature")), where),
        config_file=source,
    )


def _models(provider: str, table: dict[str, Any], env: Mapping[str, str], where: str) -> dict[str, str]:
    if provider == "offline":
        return {}
    raw = table.get("models", {})
    if not isinstance(raw, dict):
        raise LLMConfigError(f"{where}: [llm.models] must be a table of variant = \"model\"")
    unknown = sorted(set(raw) - set(VARIANTS))
    if unknown:
        raise LLMConfigError(f"{where}: unknown model variant {unknown[0]!r} in [llm.models]; use {', '.join(VARIANTS)}")
    chosen: dict[str, str | None] = {}
    for variant in VARIANTS:
        # The most specific setting wins, the environment before the file.
        candidates = (
            env.get(f"DREAMER_LLM_MODEL_{variant.upper()}"),
            env.get("DREAMER_LLM_MODEL"),
            raw.get(variant),
            table.get("model"),
            DEFAULT_MODELS.get(provider, {}).get(variant),
        )
        chosen[variant] = next((v for v in (_text(c, f"models.{variant}", where) for c in candidates) if v), None)
    # A server with one model serves every variant with it.
    standard = chosen["standard"] or chosen["fast"] or chosen["powerful"]
    if standard is None:
        raise LLMConfigError(
            f"the {provider} provider needs a model name: set DREAMER_LLM_MODEL (for example llama3.2 on Ollama)"
        )
    return {variant: chosen[variant] or standard for variant in VARIANTS}


def _api_key(provider: str, table: dict[str, Any], env: Mapping[str, str], where: str) -> tuple[str | None, str | None]:
    if provider == "offline":
        return None, None
    named = _text(table.get("api_key_env"), "api_key_env", where)
    candidates = ["DREAMER_LLM_API_KEY"]
    if named:
        candidates.append(named)
    candidates.append("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY")
    for name in candidates:
        value = (env.get(name) or "").strip()
        if value:
            return value, name
    if "api_key" in table:
        raise LLMConfigError(f"{where}: keys do not go in the config file; put it in a variable and name it with api_key_env")
    return None, None


def _needs_key(provider: str, base_url: str | None) -> bool:
    """The vendors' own endpoints need a key; a local server usually does not."""
    if base_url is None:
        return True
    host = urlsplit(base_url).hostname or ""
    return host == OPENAI_HOST or host.endswith("anthropic.com")


def _prices(raw: object, where: str) -> dict[str, Price]:
    if not isinstance(raw, dict):
        raise LLMConfigError(f"{where}: [llm.prices] must be a table of model = {{input, output}}")
    prices: dict[str, Price] = {}
    for model, entry in raw.items():
        if not isinstance(entry, dict):
            raise LLMConfigError(f"{where}: the price of {model!r} must be a table with input and output")
        unknown = sorted(set(entry) - {"input", "output", "cache_read", "cache_write"})
        if unknown:
            raise LLMConfigError(f"{where}: unknown price field {unknown[0]!r} for {model!r}")
        values = {k: _non_negative(v, f"prices.{model}.{k}", where) for k, v in entry.items()}
        prices[str(model)] = Price(**values)
    return prices


def _budget(raw: object, where: str) -> float | None:
    if isinstance(raw, str) and raw.strip().lower() in ("unlimited", "none", "off", ""):
        return None
    return _non_negative(raw, "budget_usd", where)


def _temperature(raw: object, where: str) -> float | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = _non_negative(raw, "temperature", where)
    if value > 2:
        raise LLMConfigError(f"{where}: temperature must be from 0 to 2")
    return value


def _text(raw: object, name: str, where: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise LLMConfigError(f"{where}: {name} must be a string")
    return raw.strip() or None


def _number(raw: object, name: str, where: str) -> float:
    # A config file holds numbers and strings; anything else (a bool, a list) is not a number.
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise LLMConfigError(f"{where}: {name} must be a number, not {raw!r}")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise LLMConfigError(f"{where}: {name} must be a number, not {raw!r}") from None
    if not math.isfinite(value):
        raise LLMConfigError(f"{where}: {name} must be a finite number")
    return value


def _non_negative(raw: object, name: str, where: str) -> float:
    value = _number(raw, name, where)
    if value < 0:
        raise LLMConfigError(f"{where}: {name} cannot be negative")
    return value


def _positive(raw: object, name: str, where: str, *, integer: bool = False) -> float:
    value = _number(raw, name, where)
    if value <= 0 or (integer and value != int(value)):
        kind = "a whole number" if integer else "a number"
        raise LLMConfigError(f"{where}: {name} must be {kind} greater than zero")
    return value


def _count(raw: object, name: str, where: str) -> float:
    value = _non_negative(raw, name, where)
    if value != int(value) or value > 10:
        raise LLMConfigError(f"{where}: {name} must be a whole number from 0 to 10")
    return value
