"""OpenAI through the Responses API (provider ``openai``), via the official ``openai`` SDK.

Wire choices, and why:

* Structured output (mode "native") is ``text.format = {type: json_schema, name, schema,
  strict: true}`` with the schema after the OpenAI strict dialect
  (:func:`~alloy.providers._openai_common.openai_strict_schema`). Mode "tool" is a strict
  function named after the output, forced with ``tool_choice`` (``"required"`` when the
  command's own tools are offered too, so those stay callable). Mode "prompt" sends nothing
  special.
* Tools are Responses function tools; ``strict`` is sent as the ToolDefinition says (the API
  defaults it to true, so non-strict tools say ``strict: false`` explicitly).
* The tool loop is stateless: no ``previous_response_id`` and ``store`` is left as the caller
  has it, so it works under zero data retention. Every turn sends the conversation back as
  input items (``function_call`` + ``function_call_output``). When a reply contains reasoning
  items, all of its output items are kept, in order, as ``Opaque("openai", item)`` parts
  (``"azure"`` for Azure OpenAI) and echoed back verbatim to that service alone, so each
  reasoning item stays next to the item it belongs to. Reasoning
  models are asked for ``include: ["reasoning.encrypted_content"]`` so that echo also works
  with ``store: false``.
* Settings: ``system`` -> ``instructions``; ``max_tokens`` -> ``max_output_tokens``;
  ``reasoning_effort`` -> ``reasoning.effort`` (a level; a budget in tokens, or a model known
  not to reason, is refused); ``prompt_cache_key`` as is (OpenAI caches prompt prefixes by
  itself, so ``prompt_cache`` adds nothing; ``cached_content`` is Gemini's and refused);
  ``timeout`` -> the SDK's per-call timeout; ALLOY_EXTRA_JSON is merged into the body last
  (keys the SDK does not know go through ``extra_body``). ``temperature`` is not sent to
  reasoning models (o-series, gpt-5, codex), which reject it: that is logged at WARNING once
  per model (DEBUG afterwards) and the call goes on.
* Finish reasons: a refusal content part -> "refusal"; ``incomplete_details.reason``
  ``max_output_tokens`` -> "length", ``content_filter`` -> "content_filter"; function calls ->
  "tool_calls".
* Streaming uses ``stream=True`` (SSE events): text and function-argument deltas are yielded
  as they come, and the final Response is parsed from ``response.completed`` (or
  ``response.incomplete``). ``error`` / ``response.failed`` events, and a stream that ends
  without a terminal event, are errors.

For Chat Completions and OpenAI-compatible servers see :mod:`alloy.providers.openai_chat`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from typing_extensions import assert_never

from .._stream_accumulator import tool_call
from .._types import (
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
    stream_error,
    temperature_for,
    usage_from,
)
from ._parts import misplaced
from ._settings import refuse_cache_names

logger = logging.getLogger("alloy.providers.openai")

PROVIDER = "openai"
OUTPUT_TOOL_DESCRIPTION = "Give your final answer by calling this function with it."
ENCRYPTED_REASONING = "reasoning.encrypted_content"


# -- request ----------------------------------------------------------------------------------


def build(
    request: Request,
    model_id: str,
    *,
    stream: bool = False,
    notice: TemperatureNotice | None = None,
    provider: str = PROVIDER,
) -> dict[str, Any]:
    """The ``responses.create`` body for ``request`` (pure; ALLOY_EXTRA_JSON merged in last).
    ``provider`` names the service it goes to: output items kept from that service's replies are
    sent back verbatim, another's are left out (see :func:`model_items`)."""
    body: dict[str, Any] = {"model": model_id}
    if stream:
        body["stream"] = True
    body["input"] = build_input(request, provider)
    if request.system:
        body["instructions"] = request.system
    tools = [function_tool(tool) for tool in request.tools]
    spec = request.output
    if spec is not None and spec.mode == "native":
        body["text"] = {"format": text_format(spec)}
    elif spec is not None and spec.mode == "tool":
        tools.append(output_tool(spec))
        others = [t for t in request.tools if t.name != spec.name]
        body["tool_choice"] = "required" if others else {"type": "function", "name": spec.name}
    if tools:
        body["tools"] = tools
        forced = request.tool_choice
        if forced is not None:
            body["tool_choice"] = (
                forced if forced == "required" else {"type": "function", "name": forced}
            )
        if not request.parallel_tool_calls:
            body["parallel_tool_calls"] = False
    if is_reasoning_model(model_id):
        body["include"] = [ENCRYPTED_REASONING]
    settings = request.settings
    refuse_cache_names(settings, "OpenAI", key=True)
    temperature = temperature_for(model_id, settings, notice or TemperatureNotice())
    if temperature is not None:
        body["temperature"] = temperature
    if settings.max_tokens is not None:
        body["max_output_tokens"] = settings.max_tokens
    effort = reasoning_effort_for(model_id, settings)
    if effort is not None:
        body["reasoning"] = {"effort": effort}
    if settings.prompt_cache_key is not None:
        body["prompt_cache_key"] = settings.prompt_cache_key
    return merge_extra(body, settings.extra)


def text_format(spec: OutputSpec) -> dict[str, Any]:
    schema = dict(spec.wire_schema if spec.strict else spec.schema)
    return {"type": "json_schema", "name": spec.name, "schema": schema, "strict": spec.strict}


def function_tool(tool: ToolDefinition) -> dict[str, Any]:
    parameters = dict(tool.wire_parameters if tool.strict else tool.parameters)
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
        "strict": tool.strict,
    }


def output_tool(spec: OutputSpec) -> dict[str, Any]:
    return function_tool(
        ToolDefinition(
            spec.name, OUTPUT_TOOL_DESCRIPTION, spec.schema, spec.strict, spec.dialect_schema
        )
    )


def build_input(request: Request, provider: str = PROVIDER) -> str | list[dict[str, Any]]:
    """Input items for the whole conversation; a lone text prompt is sent as a plain string."""
    messages = request.messages
    if (
        len(messages) == 1
        and isinstance(messages[0], UserTurn)
        and len(messages[0].parts) == 1
        and isinstance(messages[0].parts[0], Text)
    ):
        return messages[0].parts[0].text
    items: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case UserTurn():
                items.extend(user_items(message.parts))
            case ModelTurn():
                items.extend(model_items(message, provider))
            case _:
                assert_never(message)
    return items


def user_items(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    """Tool results as ``function_call_output`` items, then one user message for the rest."""
    items: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case ToolResult():
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": part.call_id,
                        "output": part.content,
                    }
                )
            case Text():
                content.append({"type": "input_text", "text": part.text})
            case RetryPrompt():
                text = part.render()
                content.append({"type": "input_text", "text": text})
            case Media():
                content.append(media_part(part))
            case Opaque():
                pass  # data of another API, or a model turn's: nothing a user message takes
            case ToolCall():
                raise misplaced(part, "user")
            case _:
                assert_never(part)
    if content:
        if len(content) == 1 and content[0]["type"] == "input_text":
            items.append({"role": "user", "content": content[0]["text"]})
        else:
            items.append({"role": "user", "content": content})
    return items


def media_part(media: Media) -> dict[str, Any]:
    if media.kind == "image":
        url = media.url or data_url(media.mime_type, media.data or "")
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if media.url:
        return {"type": "input_file", "file_url": media.url}
    return {
        "type": "input_file",
        "filename": "document.pdf",
        "file_data": data_url(media.mime_type, media.data or ""),
    }


def model_items(turn: ModelTurn, provider: str = PROVIDER) -> list[dict[str, Any]]:
    """A model turn as input items: the output items ``provider`` gave it verbatim, else rebuilt
    from its parts (reasoning items are tied to the service that made them: OpenAI's are no use
    to Azure OpenAI, and the other way round)."""
    kept = [p.payload for p in turn.parts if isinstance(p, Opaque) and p.provider == provider]
    if kept:
        return [dict(item) for item in kept]
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
                        "type": "function_call",
                        "call_id": part.id,
                        "name": part.name,
                        "arguments": arguments,
                    }
                )
            case Opaque():
                pass  # another API's data: nothing this one can take
            case Media() | ToolResult() | RetryPrompt():
                raise misplaced(part, "model")
            case _:
                assert_never(part)
    text = "".join(texts)
    return [{"role": "assistant", "content": text}, *calls] if text else calls


# -- response ---------------------------------------------------------------------------------


def parse(
    raw: Mapping[str, Any], *, request_id: str | None = None, provider: str = PROVIDER
) -> Response:
    """A Responses API body (``Response`` JSON) as a normalized Response (pure); its output
    items are kept for ``provider``, the service that answered."""
    output = [item for item in raw.get("output") or () if isinstance(item, Mapping)]
    keep = any(item.get("type") not in ("message", "function_call") for item in output)
    parts: list[Part] = [Opaque(provider, _clean(item)) for item in output] if keep else []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        kind = item.get("type")
        if kind == "message":
            for content in item.get("content") or ():
                if content.get("type") == "output_text":
                    parts.append(Text(content.get("text") or ""))
                elif content.get("type") == "refusal":
                    refusals.append(content.get("refusal") or "")
        elif kind == "function_call":
            calls.append(
                tool_call(
                    str(item.get("call_id") or item.get("id") or ""),
                    str(item.get("name") or ""),
                    item.get("arguments"),
                )
            )
    parts.extend(calls)
    refusal = "".join(refusals) if refusals else None
    return Response(
        tuple(parts),
        usage=usage_from(
            raw.get("usage"),
            input_key="input_tokens",
            output_key="output_tokens",
            input_details="input_tokens_details",
            output_details="output_tokens_details",
        ),
        finish_reason=finish_reason(raw, refusal is not None, bool(calls)),
        model=raw.get("model"),
        request_id=request_id,
        refusal=refusal,
        provider_details={"id": raw.get("id"), "status": raw.get("status")},
        response_id=raw.get("id"),
    )


def finish_reason(raw: Mapping[str, Any], refused: bool, called: bool) -> Any:
    if raw.get("status") == "incomplete":
        reason = (raw.get("incomplete_details") or {}).get("reason")
        if reason == "content_filter":
            return "content_filter"
        if reason != "max_output_tokens":
            logger.debug("OpenAI response incomplete (%s): treated as truncated", reason)
        return "length"
    if refused:
        return "refusal"
    if called:
        return "tool_calls"
    return "stop"


def _clean(item: Mapping[str, Any]) -> dict[str, Any]:
    """An output item ready to be sent back as input: unset (null) fields left out."""
    return {k: v for k, v in item.items() if v is not None}


class StreamParser:
    """Responses SSE events in, deltas out; the final Response comes from the terminal event."""

    def __init__(self, provider: str = PROVIDER) -> None:
        self.provider = provider
        self.items: dict[int, dict[str, Any]] = {}
        self.final: Mapping[str, Any] | None = None

    def feed(self, raw: Any) -> list[TextDelta | ToolCallDelta]:
        """One event (an SDK object or its dict); a failure the stream reports is raised here,
        since the SDK yields it as an event instead of raising."""
        event = as_dict(raw)
        kind = event.get("type")
        index = int(event.get("output_index") or 0)
        if kind == "response.output_text.delta":
            return [TextDelta(event.get("delta") or "")]
        if kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") == "function_call":
                return [ToolCallDelta(index, item.get("call_id"), item.get("name"))]
        elif kind == "response.function_call_arguments.delta":
            return [ToolCallDelta(index, args_delta=event.get("delta") or "")]
        elif kind == "response.output_item.done":
            self.items[index] = dict(event.get("item") or {})
        elif kind in ("response.completed", "response.incomplete"):
            self.final = event.get("response") or {}
        elif kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            raise stream_error(PROVIDER, error.get("code"), error.get("message"))
        elif kind == "error":
            raise stream_error(PROVIDER, event.get("code"), event.get("message"))
        return []

    def response(self) -> Response:
        if self.final is None:
            raise ProviderConnectionError(
                "openai stream ended before response.completed (connection cut?)",
                provider=PROVIDER,
            )
        raw = dict(self.final)
        if not raw.get("output") and self.items:
            raw["output"] = [self.items[i] for i in sorted(self.items)]
        return parse(raw, provider=self.provider)


# -- the model --------------------------------------------------------------------------------


class OpenAIResponsesModel(OpenAIModel):
    """An OpenAI model behind the Responses API."""

    provider = PROVIDER
    reply_field = ("output", list)
    path = "/responses"

    def build(self, request: Request, *, stream: bool = False) -> dict[str, Any]:
        body = build(
            request,
            self.model_id,
            stream=stream,
            notice=self.temperature_notice,
            provider=self.provider,
        )
        spec = request.output
        logger.debug(
            "openai responses request: model=%s output_mode=%s tools=%d stream=%s",
            self.model_id,
            spec.mode if spec else "text",
            len(request.tools),
            stream,
        )
        return body

    def endpoint(self, client: Any) -> Any:
        return client.responses

    def endpoint_class(self) -> type:
        from openai.resources.responses import Responses

        return Responses

    def parse(self, reply: Reply, request: Request) -> Response:
        return parse(reply.body, request_id=reply.request_id, provider=self.provider)

    def stream_parser(self, request: Request) -> StreamParser:
        return StreamParser(self.provider)


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> OpenAIResponsesModel:
    """Registry factory for ``openai:<model>``."""
    if not model_id:
        raise ConfigurationError("Name the OpenAI model, e.g. 'openai:gpt-5-mini'")
    return OpenAIResponsesModel(model_id, api_key=api_key, base_url=base_url)


__all__ = [
    "OpenAIResponsesModel",
    "StreamParser",
    "build",
    "create",
    "parse",
]
