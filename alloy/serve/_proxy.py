"""The OpenAI-compatible routes' core: a caller's conversation, run by the engine.

The routes read the OpenAI wire format into a :class:`ChatCall` (alloy's own message types),
and this module runs it as a command runs its calls: the engine and its async driver, with the
RailConfig's rails and call options. So a proxied call gets what a command call gets: retries,
fallbacks, the deadline, the response cache, events and OpenTelemetry spans, and any provider
alloy speaks can sit behind the OpenAI wire format. Its plan hands back (``Plan.hand_back``):
the caller runs its own tools, so the model's tool calls are returned to it (after the tool
rails), not run here, and a reply cut off, refused or filtered is its answer.

Output rails run before any byte of the answer leaves the server: when a RailConfig has
output rails, a streamed answer is held back whole, the rails judge it, and only what they let
through is sent (a block is then a 403, since nothing was sent yet). Without output rails the
text streams as it arrives, and a stream that reached the caller is never started over.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from .._answer import TextReader
from .._config import check_options, resolve
from .._cost_cap import for_call
from .._drivers import Engine, Runtime, aclose, read_async, run_async
from .._engine import HandedBack, Plan, Prelude, run
from .._fallback import fallback_models, with_fallbacks
from .._model import StandIn
from .._output import OutputType, SchemaOutput, TextOutput
from .._types import (
    Message,
    Request,
    Result,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    Usage,
)
from ..cache import NotCached, cached, policy_for
from ..events import global_handlers, logger, new_call_id
from ..providers import dialect_for, get_model
from ._rails import RailConfig


@dataclass(frozen=True)
class ChatCall:
    """An OpenAI request in alloy's terms."""

    config: RailConfig
    #: The conversation; the last is the user turn the model answers.
    messages: tuple[Message, ...]
    system: str | None = None
    tools: tuple[ToolDefinition, ...] = ()
    #: The JSON Schema response format, if one was asked for.
    output: SchemaOutput | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    #: The caller's own provider key (only with pass-through on).
    api_key: str | None = None


@dataclass(frozen=True)
class Answer:
    """The model's answer after the rails: what the route renders."""

    text: str | None
    refusal: str | None
    tool_calls: tuple[ToolCall, ...]
    #: stop, length, tool_calls, content_filter or refusal.
    finish: str
    #: The whole call's usage (every attempt, re-ask and fallback).
    usage: Usage
    model: str


@dataclass(frozen=True)
class _Started:
    plan: Plan
    engine: Engine
    runtime: Runtime


class Proxy:
    """Runs ChatCalls through the engine; keeps only what says once per RailConfig why its
    requests are not cached."""

    def __init__(self) -> None:
        self._not_cached: dict[str, NotCached] = {}

    async def complete(self, call: ChatCall) -> Answer:
        """The whole answer, after the rails."""
        started = self._start(call)
        result = await run_async(started.engine, started.runtime)
        return _answer(call, result)

    async def stream(self, call: ChatCall) -> AsyncGenerator[str | Answer, None]:
        """Text pieces as they may be shown, then the Answer (after the rails).

        With output rails, or a JSON answer read from a tool call (by the model or by a
        fallback), nothing is yielded before the answer is whole and railed; its text then
        comes as one piece.
        """
        started = self._start(call)
        plan = started.plan
        models = (plan, *plan.fallbacks)
        hold = bool(plan.rails_of("output")) or any(
            each.request_parts.mode == "tool" for each in models
        )
        results: list[Any] = []
        # A held answer shows nothing while it streams, so a reply that breaks off is still
        # asked again (and may fall over to a fallback): none of it reached the caller.
        reader = _HELD if hold else TextReader()
        pieces = read_async(started.engine, started.runtime, reader, results.append)
        try:
            async for piece in pieces:
                yield piece
        finally:  # the client left: the call ends now (CommandCancelled, its spans closed)
            await aclose(pieces)
        answer = _answer(call, results[0])
        if hold and answer.text:
            yield answer.text
        yield answer

    def _start(self, call: ChatCall) -> _Started:
        """The call's plan, its engine and the runtime that carries it out.

        The plan is what ``Command`` works out for a call of its own, from the RailConfig's
        options (the decorator's layer) and the request's (the call's layer); it is made per
        request, since each request brings its own tools and response format.
        """
        rail = call.config
        asked: dict[str, Any] = {}
        if call.temperature is not None:
            asked["temperature"] = call.temperature
        if call.max_tokens is not None:
            asked["max_tokens"] = call.max_tokens
        if call.api_key:
            asked["api_key"] = call.api_key
        config = resolve(rail.options, check_options(asked, source="the request") if asked else {})
        output: OutputType = call.output if call.output is not None else _TEXT
        model = get_model(config.model, api_key=config.api_key, base_url=config.base_url)
        if isinstance(model, StandIn):
            model = model.for_output(output)
        handlers = global_handlers()
        observed = bool(handlers) or logger.isEnabledFor(logging.DEBUG)
        plan = Plan(
            command=rail.name,
            model=model.name,
            output=output,
            config=config,
            tools=call.tools,
            capabilities=model.capabilities,
            stream=call.stream,
            rails=rail.rails,
            observed=observed,
            dialect=dialect_for(model.name),
            hand_back=True,
        )
        fallbacks = fallback_models(config, output)
        plan = with_fallbacks(plan, fallbacks)
        policy = policy_for(config)
        notice = self._not_cached.setdefault(rail.name, NotCached(rail.name))
        runtime = Runtime(
            cached(model, policy, output.schema, notice),
            {},
            config.parallel_tools_max,
            handlers if observed else (),
            config.log_content,
            tuple(cached(fallback, policy, output.schema, notice) for fallback in fallbacks),
        )
        *earlier, last = call.messages
        prelude = Prelude(tuple(earlier), 0, len(earlier), call.system)
        call_id = new_call_id() if observed else ""
        engine = run(plan, last.parts, call_id=call_id, prelude=prelude)
        return _Started(plan, engine, for_call(runtime, config))


def _answer(call: ChatCall, result: Any) -> Answer:
    """What the route renders of the call's Result."""
    value = result.value
    usage = result.transcript.usage
    model = result.model or ""
    if isinstance(value, HandedBack):
        return Answer(value.text, value.refusal, value.calls, value.finish, usage, model)
    if call.output is None:
        return Answer(value, None, (), "stop", usage, model)
    text = result.output or ""
    if call.config.of_kind("output") and _loaded(text) != value:
        text = json.dumps(value, ensure_ascii=False)  # an output rail rewrote the value
    return Answer(text, None, (), "stop", usage, model)


def _loaded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _UNREADABLE


class _Held:
    """Reads a stream whose text is held back: shows nothing until the call has ended."""

    def begin(self, request: Request) -> tuple[str, ...]:
        return ()

    def feed(self, delta: TextDelta | ToolCallDelta) -> tuple[str, ...]:
        return ()

    def finish(self, result: Result[Any]) -> tuple[str, ...]:
        return ()

    def event(self, output: str) -> None:
        return None


_TEXT = TextOutput()
_HELD = _Held()
_UNREADABLE = object()
