"""Model configuration (config.toml and the environment), the offline provider, and
what the gateway tells `dreamer doctor`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Gateway, LLMConfigError, Message, Price, load_llm_config
from dreamer.kernel.llm.config import DEFAULT_MODELS, NO_KEY
from dreamer.kernel.store.db import Store

FILE = """
[llm]
provider = "openai"
base_url = "http://127.0.0.1:11434/v1/"
api_key_env = "MY_LLM_KEY"
timeout = 12.5
max_retries = 1
max_tokens = 2000
budget_usd = 25

[llm.models]
fast = "llama3.2:1b"
standard = "llama3.2"

[llm.prices."llama3.2"]
input = 0.1
output = 0.2
"""


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)
    return home


def test_no_configuration_means_offline(tmp_path: Path) -> None:
    config = load_llm_config(tmp_path, {})
    assert (config.provider, config.models, config.api_key, config.budget_usd) == ("offline", {}, None, 10.0)


def test_the_config_file(tmp_path: Path) -> None:
    config = load_llm_config(write(tmp_path, FILE), {"MY_LLM_KEY": "k-1"})
    assert config.provider == "openai"
    assert config.base_url == "http://127.0.0.1:11434/v1"
    assert (config.api_key, config.api_key_source) == ("k-1", "MY_LLM_KEY")
    # powerful is not named: the standard model serves it.
    assert config.models == {"fast": "llama3.2:1b", "standard": "llama3.2", "powerful": "llama3.2"}
    assert config.prices == {"llama3.2": Price(input=0.1, output=0.2)}
    assert (config.timeout_s, config.max_retries, config.max_tokens, config.budget_usd) == (12.5, 1, 2000, 25.0)
    assert config.config_file == str(tmp_path / "config.toml")


def test_the_environment_wins(tmp_path: Path) -> None:
    env = {
        "DREAMER_LLM_PROVIDER": "anthropic", "DREAMER_LLM_BASE_URL": "https://proxy.example/anthropic",
        "DREAMER_LLM_API_KEY": "k-env", "MY_LLM_KEY": "k-file", "DREAMER_LLM_MODEL_POWERFUL": "claude-big",
        "DREAMER_LLM_BUDGET_USD": "unlimited", "DREAMER_LLM_TIMEOUT": "3", "DREAMER_LLM_MAX_RETRIES": "0",
    }
    config = load_llm_config(write(tmp_path, FILE), env)
    assert (config.provider, config.base_url) == ("anthropic", "https://proxy.example/anthropic")
    assert (config.api_key, config.api_key_source) == ("k-env", "DREAMER_LLM_API_KEY")
    assert config.models == {"fast": "llama3.2:1b", "standard": "llama3.2", "powerful": "claude-big"}
    assert (config.budget_usd, config.timeout_s, config.max_retries) == (None, 3.0, 0)


def test_one_model_for_every_variant(tmp_path: Path) -> None:
    env = {"DREAMER_LLM_PROVIDER": "openai", "DREAMER_LLM_BASE_URL": "http://localhost:8080/v1", "DREAMER_LLM_MODEL": "qwen"}
    config = load_llm_config(tmp_path, env)
    assert config.models == {"fast": "qwen", "standard": "qwen", "powerful": "qwen"}
    assert config.api_key == NO_KEY and config.api_key_source is None  # a local server needs no key


def test_anthropic_defaults(tmp_path: Path) -> None:
    config = load_llm_config(tmp_path, {"DREAMER_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant"})
    assert config.models == DEFAULT_MODELS["anthropic"]
    assert (config.api_key_source, config.base_url) == ("ANTHROPIC_API_KEY", None)


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("", {"DREAMER_LLM_PROVIDER": "gemini"}, "unknown model provider 'gemini'; use one of offline, anthropic, openai"),
        ("", {"DREAMER_LLM_PROVIDER": "anthropic"}, "the anthropic provider needs an API key: set DREAMER_LLM_API_KEY or ANTHROPIC_API_KEY"),
        ("", {"DREAMER_LLM_PROVIDER": "openai"}, "the openai provider needs a model name: set DREAMER_LLM_MODEL (for example llama3.2 on Ollama)"),
        ("", {"DREAMER_LLM_PROVIDER": "openai", "DREAMER_LLM_MODEL": "m", "DREAMER_LLM_BASE_URL": "ftp://x"},
         "the model base URL 'ftp://x' must be an http:// or https:// URL"),
        ("[llm\nprovider=", {}, "is not valid TOML"),
        ('[llm]\nprovider = "openai"\nmodel = "m"\napi_key = "sk-123"', {}, "keys do not go in the config file"),
        ('[llm]\nbudget_usd = -1', {}, "budget_usd cannot be negative"),
        ('[llm]\ntimeout = "soon"', {}, "timeout must be a number, not 'soon'"),
        ('[llm.models]\nhuge = "x"', {"DREAMER_LLM_PROVIDER": "openai"}, "unknown model variant 'huge'"),
        ('[llm.prices.m]\ninput = 1\nouptut = 2', {}, "unknown price field 'ouptut' for 'm'"),
        ("", {"DREAMER_LLM_BUDGET_USD": "lots"}, "budget_usd must be a number, not 'lots'"),
    ],
)
def test_unusable_configuration_is_one_sentence(tmp_path: Path, text: str, env: dict[str, str], message: str) -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_llm_config(write(tmp_path, text), env)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_key_in_the_file_is_refused_without_echoing_it(tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_llm_config(write(tmp_path, '[llm]\nprovider = "anthropic"\napi_key = "sk-ant-SECRET"'), {})
    assert "SECRET" not in str(caught.value)


def test_offline_says_how_to_configure_a_model(tmp_path: Path, sqlite_store: Store) -> None:
    gateway = Gateway.from_home(tmp_path, sqlite_store, env={})
    assert not gateway.available
    request = ChatRequest(messages=[Message.user("hi")])
    for attempt in (gateway.complete(request, user_id=1), _drain(gateway, request)):
        with pytest.raises(DreamerError) as caught:
            asyncio.run(attempt)
        assert caught.value.code == "not_available" and caught.value.status == 501
        assert caught.value.message.startswith("no model is configured; set DREAMER_LLM_PROVIDER=anthropic")
    assert gateway.describe()["provider"] == "offline"
    assert gateway.model_for("standard") == "offline"


def test_a_broken_configuration_does_not_stop_the_kernel(tmp_path: Path, sqlite_store: Store) -> None:
    gateway = Gateway.from_home(tmp_path, sqlite_store, env={"DREAMER_LLM_PROVIDER": "anthropic"})
    described = gateway.describe()
    assert described["provider"] == "offline" and not described["available"]
    assert described["problem"] == "the anthropic provider needs an API key: set DREAMER_LLM_API_KEY or ANTHROPIC_API_KEY"
    with pytest.raises(DreamerError) as caught:
        asyncio.run(gateway.complete(ChatRequest(messages=[Message.user("hi")]), user_id=1))
    assert caught.value.message == (
        "the model is not available because its configuration is wrong: "
        "the anthropic provider needs an API key: set DREAMER_LLM_API_KEY or ANTHROPIC_API_KEY"
    )


def test_describe_shows_where_the_key_is_never_the_key(tmp_path: Path, sqlite_store: Store) -> None:
    env = {"DREAMER_LLM_PROVIDER": "openai", "DREAMER_LLM_BASE_URL": "http://127.0.0.1:9/v1",
           "DREAMER_LLM_MODEL": "m1", "DREAMER_LLM_API_KEY": "sk-very-secret"}
    described = Gateway.from_home(write(tmp_path, '[llm.prices.m1]\ninput = 1\noutput = 2'), sqlite_store, env=env).describe()
    assert described["provider"] == "openai" and described["available"]
    assert described["models"] == {"fast": "m1", "standard": "m1", "powerful": "m1"}
    assert (described["base_url"], described["api_key_from"], described["budget_usd"]) == ("http://127.0.0.1:9/v1", "DREAMER_LLM_API_KEY", 10.0)
    assert described["unpriced_models"] == [] and described["problem"] is None
    assert "sk-very-secret" not in repr(described)


def test_unknown_variants_are_refused(tmp_path: Path, sqlite_store: Store) -> None:
    gateway = Gateway.from_home(tmp_path, sqlite_store, env={"DREAMER_LLM_PROVIDER": "openai", "DREAMER_LLM_BASE_URL": "http://h/v1", "DREAMER_LLM_MODEL": "m"})
    with pytest.raises(DreamerError) as caught:
        gateway.model_for("turbo")
    assert caught.value.code == "invalid_argument"


async def _drain(gateway: Gateway, request: ChatRequest) -> None:
    async for _ in gateway.stream(request, user_id=1):
        pass
