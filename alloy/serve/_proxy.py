"""The OpenAI-compatible routes' core: one model request with the rails of a RailConfig.

The routes read the OpenAI wire format into a :class:`ChatCall` (alloy's own message types),
and this module sends it to the configured model through alloy's provider adapters, so any
provider alloy speaks can sit behind the OpenAI wire format. The caller runs its own tools:
tool calls the model makes are returned to it (after the tool rails), not run here.

Output rails run before any byte of the answer leaves the server: when a RailConfig has
output rails, a streamed answer is held back whole, the rails judge it, and only what they let
through is sent (a block is then a 403, since nothing was sent yet). Without output rails the
text streams as it arrives.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any

from .._config import resolve
from .._model import Model, StandIn
from .._output import TextOutput
from .._rail import OutputSubject, PromptSubject, ToolCallSubject, ToolResultSubject
from .._types import (
    Done,
    Message,
    ModelSettings,
    ModelTurn,
    OutputSpec,
    Request,
    Response,
    Text,
    TextDelta,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserTurn,
)
from ..providers import get_model
from ._observe import model_span, record_usage
from ._rails import RailConfig, run_rails


@dataclass(frozen=True)
class ChatCall:
    """An OpenAI request in alloy's terms."""

    config: RailConfig
    messages: tuple[Message, ...]
    system: str | None = None
    tools: tuple[ToolDefinition, ...] = ()
    #: The JSON Schema response format, if one was asked for.
    output: OutputSpec | None = None
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
    usage: Usage
    model: str


class Proxy:
    """Sends ChatCalls to their models with their rails; holds no per-request state."""

    def __init__(self, tracer: Any = None) -> None:
        self.tracer = tracer

    def model_for(self, call: ChatCall) -> tuple[Model, ModelSettings]:
        """The model a call goes to and its settings (the server's configuration, the
        RailConfig's model, the request's temperature and token limit)."""
        options: dict[str, Any] = {}
        if call.config.model:
            options["model"] = call.config.model
        if call.api_key:
            options["api_key"] = call.api_key
        config = resolve({}, options)
        model = get_model(config.model, api_key=config.api_key, base_url=config.base_url)
        if isinstance(model, StandIn):
            model = model.for_output(_TEXT)
        temperature = call.temperature if call.temperature is not None else config.temperature
        max_tokens = call.max_tokens if call.max_tokens is not None else config.max_tokens
        return model, ModelSettings(temperature, max_tokens, config.timeout)

    async def prepare(self, call: ChatCall) -> tuple[Model, Request]:
        """The model and the request, after the input rails and the tool-result rails."""
        model, settings = self.model_for(call)
        messages = await self._railed_messages(call)
        output = call.output
        if output is not None and not model.capabilities.native_schema:
            output = replace(output, mode="tool")
        request = Request(
            model=model.name,
            messages=messages,
            system=call.system,
            tools=call.tools,
            output=output,
            settings=settings,
            stream=call.stream,
        )
        return model, request

    async def complete(self, call: ChatCall) -> Answer:
        """The whole answer, after the rails."""
        model, request = await self.prepare(call)
        with model_span(self.tracer, model.name) as span:
            response = await model.arequest(request)
            record_usage(span, response.usage, response.finish_reason)
        return await self.finish(call, request, response)

    async def stream(self, call: ChatCall) -> AsyncGenerator[str | Answer, None]:
        """Text pieces as they may be shown, then the Answer (after the rails).

        With output rails, or a JSON answer read from a tool call, nothing is yielded before
        the answer is whole and railed; its text then comes as one piece.
        """
        model, request = await self.prepare(call)
        hold = bool(call.config.of_kind("output")) or (
            request.output is not None and request.output.mode == "tool"
        )
        response: Response | None = None
        with model_span(self.tracer, model.name) as span:
            async for event in model.astream(request):
                if isinstance(event, TextDelta):
                    if not hold and event.text:
                        yield event.text
                elif isinstance(event, Done):
                    response = event.response
            if response is None:
                from ..errors import UnreadableResponseError

                raise UnreadableResponseError("the model's stream ended without its end event")
            record_usage(span, response.usage, response.finish_reason)
        answer = await self.finish(call, request, response)
        if hold and answer.text:
            yield answer.text
        yield answer

    async def finish(self, call: ChatCall, request: Request, response: Response) -> Answer:
        """The Answer: tool rails over each tool call, output rails over the text."""
        where = f"rails {call.config.name}"
        text_parts = [p.text for p in response.parts if isinstance(p, Text)]
        text: str | None = "".join(text_parts) if text_parts else None
        calls = [p for p in response.parts if isinstance(p, ToolCall)]
        finish: str = response.finish_reason
        spec = request.output
        if spec is not None and spec.mode == "tool":
            answer = next((c for c in calls if c.name == spec.name), None)
            if answer is not None:
                calls.remove(answer)
                text = json.dumps(dict(answer.args), ensure_ascii=False)
                finish = "stop" if not calls else finish
        railed_calls = []
        for tool_call in calls:
            subject = await run_rails(
                call.config.of_kind("tool"), ToolCallSubject(tool_call), where
            )
            assert isinstance(subject, ToolCallSubject)
            railed_calls.append(subject.call)
        refusal = response.refusal
        output_rails = call.config.of_kind("output")
        if output_rails:
            if text is not None:
                text = await _rail_output(output_rails, text, spec is not None, where)
            if refusal is not None:
                refusal = await _rail_output(output_rails, refusal, False, where)
        return Answer(
            text=text,
            refusal=refusal,
            tool_calls=tuple(railed_calls),
            finish=finish,
            usage=response.usage,
            model=response.model or request.model,
        )

    async def _railed_messages(self, call: ChatCall) -> tuple[Message, ...]:
        """The conversation after the input rails (the last user text) and the tool rails
        (every tool result the caller sends back, with the call it answers)."""
        where = f"rails {call.config.name}"
        messages = list(call.messages)
        tool_rails = call.config.of_kind("tool")
        if tool_rails:
            made = {
                part.id: part
                for message in messages
                if isinstance(message, ModelTurn)
                for part in message.parts
                if isinstance(part, ToolCall)
            }
            for index, message in enumerate(messages):
                if not isinstance(message, UserTurn):
                    continue
                parts = list(message.parts)
                changed = False
                for position, part in enumerate(parts):
                    if isinstance(part, ToolResult):
                        made_call = made.get(part.call_id) or ToolCall(part.call_id, part.name, {})
                        subject = await run_rails(
                            tool_rails, ToolResultSubject(made_call, part), where
                        )
                        assert isinstance(subject, ToolResultSubject)
                        if subject.result is not part:
                            parts[position] = subject.result
                            changed = True
                if changed:
                    messages[index] = UserTurn(tuple(parts))
        input_rails = call.config.of_kind("input")
        if input_rails:
            for index in range(len(messages) - 1, -1, -1):
                message = messages[index]
                if isinstance(message, UserTurn) and any(
                    isinstance(p, Text) for p in message.parts
                ):
                    subject = await run_rails(input_rails, PromptSubject(message.parts), where)
                    assert isinstance(subject, PromptSubject)
                    others = tuple(p for p in message.parts if not isinstance(p, Text))
                    messages[index] = UserTurn((*others, *subject.parts))
                    break
        return tuple(messages)


async def _rail_output(rails: Any, text: str, as_json: bool, where: str) -> str:
    """Output rails over an answer: its parsed JSON when a JSON format was asked for."""
    value: Any = text
    if as_json:
        try:
            value = json.loads(text)
        except ValueError:
            value = text
    subject = await run_rails(rails, OutputSubject(value), where)
    assert isinstance(subject, OutputSubject)
    if subject.value is value:
        return text
    railed = subject.value
    return railed if isinstance(railed, str) else json.dumps(railed, ensure_ascii=False)


_TEXT = TextOutput()
