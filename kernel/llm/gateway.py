"""The model gateway: one object the kernel holds, in front of whichever provider
is configured. Every call goes through the user's budget before it and the usage
table after it, and gets a GenAI span."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from opentelemetry.trace import Span, Status, StatusCode, Tracer

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import requests_log
from dreamer.kernel.llm import structured as structured_output
from dreamer.kernel.llm import usage as accounting
from dreamer.kernel.llm.config import LLMConfig, LLMConfigError, load_llm_config
from dreamer.kernel.llm.providers.base import Provider
from dreamer.kernel.llm.providers.offline import OfflineProvider
from dreamer.kernel.llm.types import VARIANTS, ChatRequest, ChatResponse, Done, StreamEvent
from dreamer.kernel.store.db import Store
from dreamer.kernel.tracing import semconv

log = logging.getLogger("dreamer.kernel.llm")


def make_provider(config: LLMConfig) -> Provider:
    # Imported here so an installation without a model never loads the client libraries.
    if config.provider == "anthropic":
        from dreamer.kernel.llm.providers.anthropic_api import AnthropicProvider

        return AnthropicProvider(config)
    if config.provider == "openai":
        from dreamer.kernel.llm.providers.openai_api import OpenAIProvider

        return OpenAIProvider(config)
    return OfflineProvider()


class Gateway:
    def __init__(self, config: LLMConfig, store: Store, *, tracer: Tracer | None = None,
                 provider: Provider | None = None, problem: str | None = None) -> None:
        self.config = config
        self.store = store
        self.tracer = tracer
        self.problem = problem  # why the configuration was not usable, if it was not
        self.provider: Provider = provider or (OfflineProvider(problem) if problem else make_provider(config))

    @classmethod
    def from_home(cls, home: Path, store: Store, *, tracer: Tracer | None = None,
                  env: Mapping[str, str] | None = None) -> "Gateway":
        """The gateway the configuration asks for. A configuration that cannot be used
        does not stop the kernel: the gateway is offline and says why on every call
        and in `dreamer doctor`."""
        try:
            config = load_llm_config(home, os.environ if env is None else env)
        except LLMConfigError as exc:
            log.warning("the model is not available: %s", exc)
            return cls(LLMConfig(), store, tracer=tracer, problem=str(exc))
        return cls(config, store, tracer=tracer)

    @property
    def available(self) -> bool:
        return self.provider.name != "offline"

    def model_for(self, variant: str) -> str:
        if variant not in VARIANTS:
            raise DreamerError("invalid_argument", f"unknown model variant {variant!r}; use one of {', '.join(VARIANTS)}")
        return self.config.models.get(variant, "offline")

    def describe(self) -> dict[str, Any]:
        """What `dreamer doctor` shows: never the key, only where it came from."""
        models = dict(self.config.models)
        return {
            "provider": self.provider.name,
            "available": self.available,
            "models": models,
            "base_url": self.config.base_url,
            "api_key_from": self.config.api_key_source,
            "budget_usd": self.config.budget_usd,
            "budget_period": "month (UTC)",
            "unpriced_models": sorted({m for m in models.values() if m not in self.config.prices}),
            "timeout_s": self.config.timeout_s,
            "max_retries": self.config.max_retries,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
            "config_file": self.config.config_file,
            "problem": self.problem or (None if self.available else "no model is configured; the offline planner serves chat"),
        }

    # -- calls -----------------------------------------------------------------------------

    async def complete(self, request: ChatRequest, *, user_id: int, agent: str | None = None,
                       invocation_id: str | None = None, timeout: float | None = None,
                       turn_key: str | None = None) -> ChatResponse:
        """One answer; the user's budget is checked first and the usage recorded after.
        `turn_key` names the Sidekick turn a call of Sidekick's own planner belongs to."""
        model = self._admit(request, user_id)
        request = self._defaults(request)
        with self._span(model, invocation_id) as span:
            call = _Call(request, model, user_id, invocation_id, turn_key, span)
            try:
                async with _deadline(timeout, self._place()):
                    response = await self.provider.complete(request, model)
            except Exception as exc:
                self._log(call, None, exc)
                raise
            self._account(response, model, user_id, agent, invocation_id, span)
            self._log(call, response, None)
            return response

    async def stream(self, request: ChatRequest, *, user_id: int, agent: str | None = None,
                     invocation_id: str | None = None, turn_key: str | None = None) -> AsyncIterator[StreamEvent]:
        """Events as the answer arrives; usage is recorded when Done comes through."""
        model = self._admit(request, user_id)
        request = self._defaults(request)
        with self._span(model, invocation_id) as span:
            call = _Call(request, model, user_id, invocation_id, turn_key, span)
            try:
                async for event in self.provider.stream(request, model):
                    if isinstance(event, Done):
                        self._account(event.response, model, user_id, agent, invocation_id, span)
                        self._log(call, event.response, None)
                    yield event
            except Exception as exc:
                self._log(call, None, exc)
                raise

    async def structured(self, request: ChatRequest, schema: dict[str, Any], *, user_id: int,
                         agent: str | None = None, invocation_id: str | None = None,
                         retries: int = 2, timeout: float | None = None,
                         turn_key: str | None = None) -> structured_output.Structured:
        """A JSON answer valid against `schema`; each attempt is budgeted and recorded."""
        structured_output.validator_for(schema)  # a bad schema fails before any model call
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout

        async def attempt(asking: ChatRequest) -> ChatResponse:
            left = None if deadline is None else max(0.01, deadline - loop.time())
            return await self.complete(asking, user_id=user_id, agent=agent, invocation_id=invocation_id, timeout=left,
                                       turn_key=turn_key)

        return await structured_output.structured(attempt, request, schema, retries)

    async def probe(self) -> list[dict[str, Any]]:
        """For `dreamer doctor`: whether each configured model answers and calls tools
        (dreamer.kernel.llm.probe); empty when no model is configured."""
        if not self.available:
            return []
        from dreamer.kernel.llm.probe import probe

        return [found.to_dict() for found in await probe(self.provider, self.config.models,
                                                         max(self.config.timeout_s, 1.0))]

    async def aclose(self) -> None:
        await self.provider.aclose()

    # -- inside ----------------------------------------------------------------------------

    def _admit(self, request: ChatRequest, user_id: int) -> str:
        if not self.available:
            raise DreamerError("not_available", getattr(self.provider, "message", "no model is configured"))
        model = self.model_for(request.variant)
        if request.max_tokens < 1:
            raise DreamerError("invalid_argument", "max_tokens must be at least 1")
        accounting.check_budget(self.store, user_id, self.config.budget_usd)
        return model

    def _defaults(self, request: ChatRequest) -> ChatRequest:
        """The configured temperature for a call that names none, and the configured ceiling on tokens for every
        call (Sidekick's own loop asks for 1024: an administrator with a slow local model caps what it writes)."""
        if request.temperature is None and self.config.temperature is not None:
            request = replace(request, temperature=self.config.temperature)
        if request.max_tokens > self.config.max_tokens:
            request = replace(request, max_tokens=self.config.max_tokens)
        return request

    def _account(self, response: ChatResponse, asked: str, user_id: int, agent: str | None,
                 invocation_id: str | None, span: Any) -> None:
        # Servers may answer with a more exact name (a dated snapshot, a quantisation):
        # record that, and price it by its own entry if there is one, else by the name asked for.
        model = response.model or asked
        price = self.config.prices.get(model) or self.config.price_for(asked)
        cost = accounting.cost_usd(response.usage, price)
        accounting.record(
            self.store, user_id=user_id, agent=agent, provider=self.provider.name, model=model,
            usage=response.usage, cost=cost, invocation_id=invocation_id,
        )
        if span is not None:
            span.set_attribute("dreamer.llm.cost_usd", cost)
            span.set_attribute(semconv.GEN_AI_RESPONSE_MODEL, model)
            span.set_attribute(semconv.GEN_AI_RESPONSE_FINISH_REASONS, [response.stop_reason])
            span.set_attribute(semconv.GEN_AI_USAGE_INPUT_TOKENS, response.usage.input_tokens)
            span.set_attribute(semconv.GEN_AI_USAGE_OUTPUT_TOKENS, response.usage.output_tokens)

    def _log(self, call: "_Call", response: ChatResponse | None, error: BaseException | None) -> None:
        """Keep what was asked and answered for the training export; like tracing, a
        failure here never fails the call."""
        latency_ms = (time.monotonic() - call.started) * 1000
        context = call.span.get_span_context() if call.span is not None else None
        try:
            if response is not None:
                body, status = requests_log.response_body(response), "ok"
                usage, finish = response.usage.to_dict(), response.stop_reason
            else:
                code = error.code if isinstance(error, DreamerError) else type(error).__name__
                text = error.message if isinstance(error, DreamerError) else type(error).__name__
                body, status, usage, finish = {"error": {"code": code, "message": text}}, "error", None, None
            requests_log.record(
                self.store, user_id=call.user_id, provider=self.provider.name, model=response.model if response else call.model,
                request=requests_log.request_body(call.request, call.model), response=body, latency_ms=latency_ms,
                status=status, usage=usage, finish_reason=finish, invocation_id=call.invocation_id, turn_key=call.turn_key,
                span_id=format(context.span_id, "016x") if context is not None and context.is_valid else None,
                trace_id=format(context.trace_id, "032x") if context is not None and context.is_valid else None,
            )
        except Exception as exc:  # noqa: BLE001 - keeping a request for export must never fail the call
            log.warning("could not keep the model request for export: %s", exc)

    @contextmanager
    def _span(self, model: str, invocation_id: str | None) -> Iterator[Span | None]:
        """A `chat MODEL` span under the current one. Not made current itself: a
        stream's generator may be resumed in another context, and nothing nests under it."""
        if self.tracer is None:
            yield None
            return
        attributes: dict[str, Any] = {
            semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT,
            semconv.GEN_AI_PROVIDER_NAME: self.provider.name,
            semconv.GEN_AI_REQUEST_MODEL: model,
        }
        if invocation_id:
            attributes[semconv.DREAMER_INVOCATION_ID] = invocation_id
        span = self.tracer.start_span(semconv.chat_span(model), attributes=attributes)
        try:
            yield span
        except GeneratorExit:
            span.set_attribute("dreamer.llm.abandoned", True)  # the reader stopped early: not a failure
            raise
        except DreamerError as exc:
            span.set_status(Status(StatusCode.ERROR, exc.message))
            span.set_attribute(semconv.ERROR_TYPE, exc.code)
            raise
        except BaseException as exc:
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.set_attribute(semconv.ERROR_TYPE, type(exc).__name__)
            raise
        finally:
            span.end()

    def _place(self) -> str:
        return getattr(self.provider, "place", self.provider.name)


@dataclass
class _Call:
    """One model call as the export keeps it: what was asked, by whom, since when."""

    request: ChatRequest
    model: str
    user_id: int
    invocation_id: str | None
    turn_key: str | None
    span: Span | None
    started: float = field(default_factory=time.monotonic)


class _deadline:
    """asyncio.timeout that ends in a DreamerError naming the provider."""

    def __init__(self, seconds: float | None, place: str) -> None:
        self.seconds, self.place = seconds, place
        self._timeout = asyncio.timeout(seconds)

    async def __aenter__(self) -> None:
        await self._timeout.__aenter__()

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        try:
            await self._timeout.__aexit__(kind, exc, tb)
        except TimeoutError:
            raise DreamerError(
                "timeout", f"the model provider at {self.place} did not answer within {self.seconds:g} s "
                "(the time left for this invocation)"
            ) from None
        return False

