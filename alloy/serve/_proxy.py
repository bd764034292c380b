"""The OpenAI-compatible routes' core: a caller's conversation, run by the engine.

The routes read the OpenAI wire format into a :class:`ChatCall` (alloy's own message types),
and this module runs it as a command runs its calls, on the same seam (:mod:`alloy._call`:
prepared, started, driven by the async driver), with the RailConfig's rails and call options.
So a proxied call gets what a command call gets: retries, fallbacks, the deadline, the
response cache, events and OpenTelemetry spans, and any provider alloy speaks can sit behind
the OpenAI wire format. Its plan hands back (``Plan.hand_back``):
the caller runs its own tools, so the model's tool calls are returned to it (after the tool
rails), not run here, and a reply cut off, refused or filtered is its answer.

Output rails run before any byte of the answer leaves the server: when a RailConfig has
output rails, a streamed answer is held back whole, the rails judge it, and only what they let
through is sent (a block is then a 403, since nothing was sent yet). Without output rails the
text streams as it arrives, and a stream that reached the caller is never started over.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any

from .._call import Call, Prepared, Spec, prepare
from .._config import check_options
from .._drivers import aclose
from .._engine import HandedBack, Plan
from .._output import OutputType, SchemaOutput, TextOutput
from .._stream_readers import Reader
from .._types import (
    Message,
    Request,
    Result,
    System,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    Usage,
)
from ._errors import ServeError
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
    #: Forced tool use: ``"required"`` or the name of the tool to call; None: the model picks.
    tool_choice: str | None = None
    #: False: at most one tool call in the answer.
    parallel_tool_calls: bool = True


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


class Proxy:
    """Runs ChatCalls on the seam below commands (:mod:`alloy._call`): a RailConfig is a
    command's spec whose prompt function hands the caller's conversation on, prepared per
    request (each brings its own tools and response format) and started once."""

    def __init__(self) -> None:
        #: Each RailConfig's spec of text answers, made on its first request; a JSON answer's
        #: schema comes with its request, and so does its spec.
        self._specs: dict[str, Spec] = {}
        #: The usual request's call prepared, by RailConfig and streaming: no options, tools
        #: or response format of its own, so every such request shares it while it is
        #: :meth:`~alloy._call.Prepared.current` (the configuration and listeners unchanged).
        self._plain: dict[tuple[str, bool], Prepared] = {}

    async def complete(self, call: ChatCall) -> Answer:
        """The whole answer, after the rails."""
        _, started = self._start(call)
        return _answer(call, await started.arun())

    async def stream(self, call: ChatCall) -> AsyncGenerator[str | ToolCallDelta | Answer, None]:
        """Text pieces and tool-call argument deltas as they may be shown, then the Answer
        (after the rails).

        With output rails, or a JSON answer read from a tool call (by the model or by a
        fallback), nothing is yielded before the answer is whole and railed; its text then
        comes as one piece. With tool rails, tool calls come whole in the Answer (the rails
        judge each call before the caller sees it).
        """
        prepared, started = self._start(call)
        plan = prepared.plan
        models = (plan, *plan.fallbacks)
        hold = bool(plan.rails_of("output")) or any(
            each.request_parts.mode == "tool" for each in models
        )
        results: list[Any] = []
        # A held answer shows nothing while it streams, so a reply that breaks off is still
        # asked again (and may fall over to a fallback): none of it reached the caller.
        reader: Reader[Any] = (
            _HELD
            if hold
            else _Shown(
                tool_deltas=not plan.rails_of("tool"), one_call=not call.parallel_tool_calls
            )
        )
        pieces = started.aread(reader, results.append)
        try:
            async for piece in pieces:
                yield piece
        finally:  # the client left: the call ends now (CommandCancelled, its spans closed)
            await aclose(pieces)
        answer = _answer(call, results[0])
        if hold and answer.text:
            yield answer.text
        yield answer

    def _start(self, call: ChatCall) -> tuple[Prepared, Call]:
        """The call prepared (the RailConfig's options as the decorator's layer, the
        request's as the call's) and started on the caller's conversation."""
        rail = call.config
        asked: dict[str, Any] = {}
        if call.temperature is not None:
            asked["temperature"] = call.temperature
        if call.max_tokens is not None:
            asked["max_tokens"] = call.max_tokens
        if call.api_key:
            asked["api_key"] = call.api_key
        plain = not asked and call.output is None and not call.tools
        key = (rail.name, call.stream)
        prepared = self._plain.get(key) if plain else None
        if prepared is None or not prepared.current():
            if call.output is None:
                spec = self._specs.get(rail.name) or self._specs.setdefault(
                    rail.name, _spec(rail, _TEXT)
                )
            else:
                spec = _spec(rail, call.output)
            prepared = prepare(
                spec,
                check_options(asked, source="the request") if asked else None,
                stream=call.stream,
                tool_definitions=call.tools,
                hand_back=True,
            )
            if plain:
                self._plain[key] = prepared
        if call.tool_choice is not None or not call.parallel_tool_calls:
            prepared = replace(prepared, plan=_with_tool_use(prepared.plan, call))
        system = [System(call.system)] if call.system is not None else []
        return prepared, prepared.begin(([*system, *call.messages],), {})


def _with_tool_use(plan: Plan, call: ChatCall) -> Plan:
    """``plan`` and its fallbacks forcing the tool use ``call`` asks for; a 400 naming the
    first model that cannot be made to call a tool, when one is forced."""
    if call.tool_choice is not None and not plan.profile.forced_tools:
        raise ServeError(
            400,
            f"The model {plan.model!r} behind {call.config.name!r} cannot be made to call a "
            "tool; send tool_choice 'auto'",
            type="invalid_request_error",
            param="tool_choice",
            code="unsupported_parameter",
        )
    return replace(
        plan,
        tool_choice=call.tool_choice,
        parallel_tool_calls=call.parallel_tool_calls,
        fallbacks=tuple([_with_tool_use(each, call) for each in plan.fallbacks]),
    )


def _spec(rail: RailConfig, output: OutputType) -> Spec:
    """A RailConfig as a command's spec: its name, options and rails, and a prompt function
    that hands the caller's conversation on as it came."""

    def conversation(turns: list[Any]) -> list[Any]:
        return turns

    conversation.__name__ = conversation.__qualname__ = rail.name
    return Spec(conversation, output, rail.options, (), rail.rails)


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


class _Shown:
    """Reads a stream as it reaches the caller: its text, and its tool calls' argument deltas
    as the model makes them (``tool_deltas``; only the first call's with ``one_call``, as the
    engine then hands back only the first)."""

    def __init__(self, *, tool_deltas: bool, one_call: bool) -> None:
        self.tool_deltas = tool_deltas
        self.one_call = one_call
        self.first: int | None = None

    def begin(self, request: Request) -> tuple[str, ...]:
        self.first = None
        return ()

    def feed(self, delta: TextDelta | ToolCallDelta) -> tuple[str | ToolCallDelta, ...]:
        if type(delta) is TextDelta:
            return (delta.text,) if delta.text else ()
        if not self.tool_deltas or not isinstance(delta, ToolCallDelta):
            return ()
        if self.one_call:
            if self.first is None:
                self.first = delta.index
            elif delta.index != self.first:
                return ()
        return (delta,)

    def finish(self, result: Result[Any]) -> tuple[str, ...]:
        return ()

    def event(self, output: Any) -> None:
        return None


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
