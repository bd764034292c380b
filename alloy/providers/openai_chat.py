"""OpenAI Chat Completions (provider ``openai-chat``), for OpenAI and OpenAI-compatible servers.

Choose it with the model prefix ``openai-chat:`` (``@command(model="openai-chat:gpt-4o")``, or
``ALLOY_MODEL=openai-chat:llama3.2``); bare ``gpt-...`` names and ``openai:`` use the Responses
API instead. Point it at a compatible server (vLLM, LM Studio, OpenRouter, Ollama's ``/v1``) with
the ``base_url`` option or ``OPENAI_BASE_URL`` (include the ``/v1``). Such servers often need no
key: when none is set and the base URL is not OpenAI's, a placeholder key is sent.

Wire choices, and why:

* Structured output (mode "native") is ``response_format = {type: json_schema, json_schema:
  {name, schema, strict: true}}`` with the schema after the OpenAI strict dialect. Mode "tool" is
  a strict function named after the output, forced through ``tool_choice`` (``"required"`` when
  the command's own tools are offered too). Mode "prompt" sends nothing special.
* Tools are ``{"type": "function", "function": {...}}``; ``strict: true`` is added for strict
  ToolDefinitions only (it is off by default in this API, and some compatible servers know no
  ``strict``). Tool calls go back as an assistant message with ``tool_calls`` followed by one
  ``role: tool`` message per result.
* Settings: ``system`` -> a leading system message; ``max_tokens`` -> ``max_tokens``, or
  ``max_completion_tokens`` for OpenAI reasoning models, which refuse ``max_tokens``;
  ``reasoning_effort`` -> ``reasoning_effort`` (a level; a budget in tokens, or a model known
  not to reason, is refused); ``prompt_cache_key`` as is; ``timeout`` -> the SDK's per-call timeout; ALLOY_EXTRA_JSON is merged into the body last (keys
  the SDK does not know go through ``extra_body``). ``temperature`` is not sent to reasoning
  models (o-series, gpt-5, codex), which reject it: logged at WARNING once per model, DEBUG
  afterwards, and the call goes on.
* Finish reasons: ``message.refusal`` -> "refusal"; ``length`` -> "length"; ``content_filter``
  -> "content_filter"; tool calls -> "tool_calls".
* Streaming sends ``stream: true`` with ``stream_options.include_usage`` so the last chunk
  carries usage; content and tool-call fragments are yielded as they arrive. A stream that ends
  without a ``finish_reason`` (a cut connection) is a ProviderConnectionError.
* PDFs go as ``file`` parts with inline data; a PDF by URL cannot be sent through this API (a
  ConfigurationError says so).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from typing_extensions import assert_never

from .._stream_accumulator import StreamAccumulator, tool_call
from .._types import (
    FinishReason,
    Media,
    ModelTurn,
    Opaque,
    OutputSpec,
    Part,
    Request,
    Response,
    RetryPrompt,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    UserTurn,
    dump_args,
)
from ..errors import ConfigurationError, ProviderConnectionError
from ._base import Reply, merge_extra
from ._openai_common import (
    OpenAIModel,
    TemperatureNotice,
    as_dict,
    data_url,
    is_reasoning_model,
    reasoning_effort_for,
    temperature_for,
    usage_from,
)
from ._parts import misplaced
from ._settings import refuse_cache_names

logger = logging.getLogger("alloy.providers.openai_chat")

PROVIDER = "openai-chat"
OUTPUT_TOOL_DESCRIPTION = "Give your final answer by calling this function with it."

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


# -- request ----------------------------------------------------------------------------------


def build(
    request: Request,
    model_id: str,
    *,
    stream: bool = False,
    notice: TemperatureNotice | None = None,
) -> dict[str, Any]:
    """The ``chat.completions.create`` body for ``request`` (pure; extra JSON merged last)."""
    body: dict[str, Any] = {"model": model_id}
    if stream:
        body["stream"] = True
    body["messages"] = build_messages(request)
    if stream:
        body["stream_options"] = {"include_usage": True}
    tools = [function_tool(tool) for tool in request.tools]
    spec = request.output
    if spec is not None and spec.mode == "native":
        body["response_format"] = {"type": "json_schema", "json_schema": json_schema(spec)}
    elif spec is not None and spec.mode == "tool":
        tools.append(output_tool(spec))
        others = [t for t in request.tools if t.name != spec.name]
        body["tool_choice"] = (
            "required" if others else {"type": "function", "function": {"name": spec.name}}
        )
    if tools:
        body["tools"] = tools
        forced = request.tool_choice
        if forced is not None:
            body["tool_choice"] = (
                forced
                if forced == "required"
                else {"type": "function", "function": {"name": forced}}
            )
        if not request.parallel_tool_calls:
            body["parallel_tool_calls"] = False
    settings = request.settings
    refuse_cache_names(settings, "OpenAI", key=True)
    temperature = temperature_for(model_id, settings, notice or TemperatureNotice())
    if temperature is not None:
        body["temperature"] = temperature
    if settings.max_tokens is not None:
        key = "max_completion_tokens" if is_reasoning_model(model_id) else "max_tokens"
        body[key] = settings.max_tokens
    effort = reasoning_effort_for(model_id, settings)
    if effort is not None:
        body["reasoning_effort"] = effort
    if settings.prompt_cache_key is not None:
        body["prompt_cache_key"] = settings.prompt_cache_key
    return merge_extra(body, settings.extra)


def json_schema(spec: OutputSpec) -> dict[str, Any]:
    schema = dict(spec.wire_schema if spec.strict else spec.schema)
    return {"name": spec.name, "schema": schema, "strict": spec.strict}


def function_tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.strict:
        function["parameters"] = dict(tool.wire_parameters)
        function["strict"] = True
    else:
        function["parameters"] = dict(tool.parameters)
    return {"type": "function", "function": function}


def output_tool(spec: OutputSpec) -> dict[str, Any]:
    return function_tool(
        ToolDefinition(
            spec.name, OUTPUT_TOOL_DESCRIPTION, spec.schema, spec.strict, spec.dialect_schema
        )
    )


def build_messages(request: Request) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        match message:
            case UserTurn():
                messages.extend(user_messages(message.parts))
            case ModelTurn():
                said = assistant_message(message)
                # An empty turn (alloy's record of an empty answer, or only another API's
                # data) is no message this API takes: it needs content or tool calls.
                if said["content"] is not None or "tool_calls" in said:
                    messages.append(said)
            case _:
                assert_never(message)
    return messages


def user_messages(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    """Tool results as ``role: tool`` messages, then one user message for the rest."""
    messages: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case ToolResult():
                messages.append(
                    {"role": "tool", "tool_call_id": part.call_id, "content": part.content}
                )
            case Text():
                content.append({"type": "text", "text": part.text})
            case RetryPrompt():
                content.append({"type": "text", "text": part.render()})
            case Media():
                content.append(media_part(part))
            case Opaque():
                pass  # another API's data: nothing this one can take
            case ToolCall():
                raise misplaced(part, "user")
            case _:
                assert_never(part)
    if content:
        if all(c["type"] == "text" for c in content):
            messages.append({"role": "user", "content": "\n\n".join(c["text"] for c in content)})
        else:
            messages.append({"role": "user", "content": content})
    return messages


def media_part(media: Media) -> dict[str, Any]:
    if media.kind == "image":
        url = media.url or data_url(media.mime_type, media.data or "")
        return {"type": "image_url", "image_url": {"url": url}}
    if media.url:
        raise ConfigurationError(
            "Chat Completions cannot take a PDF by URL: pass its bytes instead, or use the "
            "Responses API (model 'openai:...')"
        )
    return {
        "type": "file",
        "file": {
            "filename": "document.pdf",
            "file_data": data_url(media.mime_type, media.data or ""),
        },
    }


def assistant_message(turn: ModelTurn) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in turn.parts:
        match part:
            case Text():
                texts.append(part.text)
            case ToolCall():
                arguments = part.raw_args if part.raw_args is not None else dump_args(part.args)
                calls.append(
                    {
                        "id": part.id,
                        "type": "function",
                        "function": {"name": part.name, "arguments": arguments},
                    }
                )
            case Opaque():
                pass  # another API's data: nothing this one can take
            case Media() | ToolResult() | RetryPrompt():
                raise misplaced(part, "model")
            case _:
                assert_never(part)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


# -- response ---------------------------------------------------------------------------------


def chat_usage(raw: Mapping[str, Any] | None) -> Usage:
    return usage_from(
        raw,
        input_key="prompt_tokens",
        output_key="completion_tokens",
        input_details="prompt_tokens_details",
        output_details="completion_tokens_details",
    )


def parse(raw: Mapping[str, Any], *, request_id: str | None = None) -> Response:
    """A ``chat.completion`` body as a normalized Response (pure)."""
    choices = raw.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    parts: list[Part] = []
    if message.get("content"):
        parts.append(Text(message["content"]))
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call.get("function") or {}
        parts.append(
            tool_call(
                str(call.get("id") or f"call_{index}"),
                str(function.get("name") or ""),
                function.get("arguments"),
            )
        )
    refusal = message.get("refusal") or None
    called = any(isinstance(p, ToolCall) for p in parts)
    return Response(
        tuple(parts),
        usage=chat_usage(raw.get("usage")),
        finish_reason=finish_reason(choice.get("finish_reason"), refusal is not None, called),
        model=raw.get("model"),
        request_id=request_id,
        refusal=refusal,
        provider_details={"id": raw.get("id")},
        response_id=raw.get("id"),
    )


def finish_reason(raw: str | None, refused: bool, called: bool) -> FinishReason:
    reason = _FINISH.get(raw or "stop", "stop")
    if reason in ("length", "content_filter"):
        return reason
    if refused:
        return "refusal"
    if called:
        return "tool_calls"
    return reason


class StreamParser:
    """``chat.completion.chunk`` dicts in, deltas out, one Response at the end."""

    def __init__(self) -> None:
        self.acc = StreamAccumulator()
        self.acc.usage = Usage(requests=1)
        self.finish: str | None = None
        self.refusal: list[str] = []
        self._positions: dict[int, int] = {}

    def feed(self, event: Any) -> list[TextDelta | ToolCallDelta]:
        """One ``chat.completion.chunk`` (an SDK object or its dict); Chat streams report their
        errors through the SDK, which raises them."""
        chunk = as_dict(event)
        out: list[TextDelta | ToolCallDelta] = []
        if chunk.get("model"):
            self.acc.model = chunk["model"]
        if chunk.get("id"):
            self.acc.response_id = chunk["id"]
        if chunk.get("usage"):
            self.acc.usage = chat_usage(chunk["usage"])
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                out.append(self.acc.add(TextDelta(delta["content"])))
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            for position, call in enumerate(delta.get("tool_calls") or ()):
                index = call.get("index")
                index = position if index is None else int(index)
                function = call.get("function") or {}
                out.append(
                    self.acc.add(
                        ToolCallDelta(
                            index,
                            call.get("id") or None,
                            function.get("name") or None,
                            function.get("arguments") or "",
                        )
                    )
                )
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return out

    def response(self) -> Response:
        if self.finish is None:
            raise ProviderConnectionError(
                "openai-chat stream ended without a finish_reason (connection cut?)",
                provider=PROVIDER,
            )
        refusal = "".join(self.refusal) or None
        self.acc.refusal = refusal
        partial = self.acc.response()
        self.acc.finish_reason = finish_reason(
            self.finish, refusal is not None, bool(partial.tool_calls)
        )
        return self.acc.response()


# -- the model --------------------------------------------------------------------------------


class OpenAIChatModel(OpenAIModel):
    """A model behind a Chat Completions endpoint (OpenAI or a compatible server)."""

    provider = PROVIDER
    reply_field = ("choices", list)
    path = "/chat/completions"

    def build(self, request: Request, *, stream: bool = False) -> dict[str, Any]:
        body = build(request, self.model_id, stream=stream, notice=self.temperature_notice)
        spec = request.output
        logger.debug(
            "openai-chat request: model=%s output_mode=%s tools=%d stream=%s base_url=%s",
            self.model_id,
            spec.mode if spec else "text",
            len(request.tools),
            stream,
            self.base_url,
        )
        return body

    def endpoint(self, client: Any) -> Any:
        return client.chat.completions

    def endpoint_class(self) -> type:
        from openai.resources.chat.completions import Completions

        return Completions

    def parse(self, reply: Reply, request: Request) -> Response:
        return parse(reply.body, request_id=reply.request_id)

    def stream_parser(self, request: Request) -> StreamParser:
        return StreamParser()


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> OpenAIChatModel:
    """Registry factory for ``openai-chat:<model>``."""
    if not model_id:
        raise ConfigurationError("Name the model, e.g. 'openai-chat:gpt-4o'")
    return OpenAIChatModel(model_id, api_key=api_key, base_url=base_url)


__all__ = ["OpenAIChatModel", "StreamParser", "build", "create", "parse"]
