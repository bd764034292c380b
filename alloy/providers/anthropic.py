"""Anthropic Messages API adapter (provider ``anthropic``), through the official ``anthropic`` SDK.

Output modes:

- ``native``: ``output_config={"format": {"type": "json_schema", "schema": ...}}`` with the schema
  in the Anthropic dialect (:mod:`._anthropic_dialect`); the answer is the text block(s).
- ``tool``: the schema becomes an output tool named ``spec.name``. ``tool_choice`` forces it
  (``{"type": "tool"}``) when it is the only tool, or ``{"type": "any"}`` when the command also
  has tools, so those stay callable. With extended thinking on (a thinking budget in
  ``reasoning_effort``, or ``extra_json`` with ``{"thinking": {...}}``) the API refuses a forced
  ``tool_choice``, so ``auto`` is sent instead and the output tool is described as the way to
  answer.
- ``prompt``: nothing special is sent.

Capabilities: Claude 4.1 and later (sonnet-4-5, opus-4-1/4-5/4-6, haiku-4-5, sonnet-4-6, opus-5,
sonnet-5, and unknown ids, taken to be current models) have native structured output and strict
tools; claude-3* and the 4.0 models get forced-tool output and non-strict tools. All take tools,
streaming (with tools), images and PDFs.

Deliberate choices:

- ``max_tokens`` is required by the API; without a setting :data:`DEFAULT_MAX_TOKENS` (4096) is
  sent (plus the thinking budget, which counts toward it) and a DEBUG line says so.
- ``reasoning_effort``, checked per model family (:data:`._efforts.ANTHROPIC`): a level (low,
  medium, high, xhigh, max; Opus 4.5, Claude 4.6 and later) is ``output_config.effort``; a
  number of tokens is extended thinking, ``thinking: {type: enabled, budget_tokens}`` (at least
  1024; Claude 3.7 and later); ``"none"`` or 0 is ``thinking: {type: disabled}``; Claude 3.5
  and older take none of these. ``prompt_cache=True`` puts ``cache_control`` breakpoints on the last
  tool, the system prompt and the last block of the conversation
  (:func:`mark_cache_breakpoints`). ``prompt_cache_key`` and ``cached_content`` are other
  providers' and refused.
- anthropic 2.12's ``messages.create()`` has no ``temperature`` parameter: it goes through
  ``extra_body`` and reaches the wire verbatim. With thinking on, the API accepts only the default
  temperature; a value other than 1 is still sent (it was asked for) and a WARNING is logged.
- The SDK refuses non-streamed calls whose ``max_tokens`` may take over ten minutes (a
  client-side ``ValueError``); such a call is streamed internally and accumulated into the same
  Response, logged at DEBUG.
- ``extra_json`` is merged into the body: keys ``create()`` knows become keyword arguments, the
  rest go through ``extra_body``.
- A finalize turn (no tools offered) after tool use still carries ``tool_use``/``tool_result``
  blocks, and the API refuses those without tool definitions; the tools named in the history are
  then declared as stubs with ``tool_choice: none``, so the model cannot call them.
- A ``tool_use`` left unanswered before a re-ask (a forced output tool whose input was invalid)
  gets its ``tool_result`` from the re-ask itself (``is_error: true``), as the API requires.
- ``strict: true`` is sent on tools whose definition is strict, for models with strict tool use;
  strict tools get the dialect schema, non-strict tools the full canonical schema.
- Usage: ``input_tokens`` counts all prompt tokens (uncached + cache writes + cache reads, so
  cached tokens are a part of input as with the other providers); ``cached_tokens`` is
  ``cache_read_input_tokens``, ``cache_write_tokens`` is ``cache_creation_input_tokens``;
  ``reasoning_tokens`` is ``output_tokens_details.thinking_tokens``.
- ``thinking``/``redacted_thinking`` and server-tool blocks come back as ``Opaque`` parts and are
  echoed untouched on the next turn, which tool use with thinking requires.
- Errors: every SDK exception is mapped in :meth:`AnthropicModel.map_error` (429 with
  ``retry-after-ms``/``retry-after``; 500/503/529 and connection errors transient; a 400 about the
  schema or grammar is SchemaRejectedError). An in-stream ``event: error`` arrives as an
  ``APIStatusError`` with status 200 and is classified by its error type (``overloaded_error`` is
  a transient ServerError). An ``EnforcedSpendLimitReachedError`` (429) is a RateLimitError that
  is *not* retried. No credentials at all is a ConfigurationError naming ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .._profile import Profile
from .._stream_accumulator import StreamAccumulator
from .._types import (
    Done,
    FinishReason,
    Media,
    Message,
    Opaque,
    Part,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    Usage,
)
from ..errors import (
    AlloyError,
    BadRequestError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    SchemaRejectedError,
    ServerError,
    UnreadableResponseError,
)
from . import _blocks
from ._base import Reply, SDKModel, Streamed, merge_extra, retry_after_from
from ._efforts import ANTHROPIC
from ._profiles import declared_in
from ._ratelimits import stated_limits
from ._settings import refuse_cache_names

logger = logging.getLogger("alloy.providers.anthropic")

PROVIDER = "anthropic"
#: Sent when the request has no ``max_tokens`` (the Messages API requires one).
DEFAULT_MAX_TOKENS = 4096
OUTPUT_TOOL_DESCRIPTION = (
    "Give your final answer by calling this tool: its input is the answer. "
    "Call it once, when you have everything you need."
)
STUB_TOOL_DESCRIPTION = "Used earlier in this conversation; not available now."
#: A prompt-cache breakpoint with the default five-minute lifetime.
EPHEMERAL = {"type": "ephemeral"}
#: Blocks that take ``cache_control`` (thinking blocks do not).
_CACHEABLE_BLOCKS = frozenset({"text", "image", "document", "tool_use", "tool_result"})
API_KEY_ENV = "ANTHROPIC_API_KEY"

#: ``messages.create()`` keyword arguments in anthropic 2.12; other body keys go in ``extra_body``.
CREATE_KWARGS = frozenset(
    {
        "max_tokens",
        "messages",
        "model",
        "cache_control",
        "container",
        "diagnostics",
        "inference_geo",
        "metadata",
        "output_config",
        "service_tier",
        "speed",
        "stop_sequences",
        "stream",
        "system",
        "thinking",
        "tool_choice",
        "tools",
        "user_profile_id",
        "workspace_id",
    }
)

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}
# In-stream ``error`` events arrive on an HTTP 200; their error type says what really happened.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_SCHEMA_REJECTION = re.compile(
    r"schema|grammar|output_config|output_format|json_schema|strict tool", re.IGNORECASE
)
_AUTH_MISSING = "Could not resolve authentication method"
_STREAMING_REQUIRED = "Streaming is required"


# -- capabilities -------------------------------------------------------------------------

_FAMILY = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?!\d))?")
_LEGACY = re.compile(r"claude-(instant|[123](?:[-.]\d+)?)(?:-|$)")


def supports_native_output(model_id: str) -> bool:
    """Structured outputs and strict tools: Claude 4.1 and later (4.0 and 3.x lack them).

    Unknown ids are assumed to be current models.
    """
    name = model_id.lower().rsplit("/", 1)[-1]
    if _LEGACY.search(name) and not _FAMILY.search(name):
        return False
    match = _FAMILY.search(name)
    if match is None:
        return True
    major, minor = int(match.group(2)), int(match.group(3) or 0)
    return (major, minor) >= (4, 1)


def capabilities_for(model_id: str) -> Profile:
    """The profile of one Claude model: claude-3* and 4.0 get forced-tool output, not native."""
    native = supports_native_output(model_id)
    return Profile(
        json_schema="strict" if native else "no",
        json_object=False,
        strict_tools=native,
        tool_choice=frozenset({"auto", "required", "named", "none"}),
        batch=True,
    )


# -- request building (pure) --------------------------------------------------------------


def thinking_enabled(extra: Mapping[str, Any]) -> bool:
    """Whether ``extra_json`` turns extended thinking on (any type but ``disabled``)."""
    thinking = extra.get("thinking")
    if isinstance(thinking, Mapping):
        return thinking.get("type", "enabled") != "disabled"
    return bool(thinking)


def build(request: Request, model_id: str, capabilities: Profile) -> dict[str, Any]:
    """The JSON body sent to ``POST /v1/messages`` for ``request`` (before ``stream``)."""
    settings = request.settings
    refuse_cache_names(settings, "Anthropic")
    reasoning = reasoning_fields(model_id, settings.reasoning_effort)
    thinking = thinking_enabled({**reasoning, **settings.extra})
    body: dict[str, Any] = {
        "max_tokens": _max_tokens(settings.max_tokens, reasoning),
        "messages": build_messages(request.messages),
        "model": model_id,
    }
    if request.system and request.system.strip():
        body["system"] = request.system
    body.update(reasoning)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
        if thinking and settings.temperature != 1:
            logger.warning(
                "anthropic: temperature=%s sent with extended thinking on; the API accepts only "
                "the default temperature with thinking",
                settings.temperature,
            )

    strict_ok = capabilities.strict_tools
    tools = [tool_param(tool, strict_ok) for tool in request.tools]
    spec = request.output
    tool_choice: dict[str, Any] | None = None
    mode = spec.mode if spec is not None else None
    if spec is not None and spec.mode == "native":
        body["output_config"] = {
            **body.get("output_config", {}),
            "format": {"type": "json_schema", "schema": dict(spec.wire_schema)},
        }
    elif spec is not None and spec.mode == "tool":
        output_tool = ToolDefinition(
            spec.name, OUTPUT_TOOL_DESCRIPTION, spec.schema, spec.strict, spec.dialect_schema
        )
        tools.append(tool_param(output_tool, strict_ok))
        if thinking:
            # The API refuses a forced tool_choice with extended thinking.
            tool_choice = {"type": "auto"}
            logger.debug("anthropic: thinking is on, output tool offered with tool_choice=auto")
        elif request.tools:
            tool_choice = {"type": "any"}
        else:
            tool_choice = {"type": "tool", "name": spec.name}
    if not tools:
        used = _blocks.tool_names_in_history(request.messages)
        if used:
            # Tool blocks in the history need tool definitions, even when none may be called.
            tools = [
                {
                    "name": name,
                    "description": STUB_TOOL_DESCRIPTION,
                    "input_schema": {"type": "object", "properties": {}},
                }
                for name in used
            ]
            tool_choice = {"type": "none"}
    if request.tools and request.tool_choice is not None:
        forced = request.tool_choice
        if thinking:
            raise ConfigurationError(
                f"Model 'anthropic:{model_id}' cannot be made to call a tool with extended "
                "thinking on (the API refuses a forced tool_choice with thinking): let the "
                "model choose, or turn thinking off"
            )
        tool_choice = {"type": "any"} if forced == "required" else {"type": "tool", "name": forced}
    if request.tools and not request.parallel_tool_calls:
        tool_choice = {**(tool_choice or {"type": "auto"}), "disable_parallel_tool_use": True}
    if tools:
        body["tools"] = tools
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if settings.prompt_cache:
        mark_cache_breakpoints(body)
    logger.debug(
        "anthropic: model=%s output mode=%s tools=%d tool_choice=%s",
        model_id,
        mode,
        len(tools),
        tool_choice,
    )
    return merge_extra(body, settings.extra)


def reasoning_fields(model_id: str, effort: str | int | None) -> dict[str, Any]:
    """The body fields for the ``reasoning_effort`` option, once the model's family takes it
    (:data:`~._efforts.ANTHROPIC`): a level is ``output_config.effort``; a budget in tokens is
    extended thinking with that ``budget_tokens``; ``"none"`` and ``0`` turn thinking off."""
    if effort is None:
        return {}
    effort = ANTHROPIC.check(model_id, effort)
    if effort == "none":
        return {"thinking": {"type": "disabled"}}
    if isinstance(effort, int):
        return {"thinking": {"type": "enabled", "budget_tokens": effort}}
    return {"output_config": {"effort": effort}}


def _max_tokens(asked: int | None, reasoning: Mapping[str, Any]) -> int:
    """``max_tokens``, which the API requires and which must leave room above a thinking budget:
    unset, it is the budget plus :data:`DEFAULT_MAX_TOKENS` for the answer."""
    budget = reasoning.get("thinking", {}).get("budget_tokens")
    if asked is None:
        asked = DEFAULT_MAX_TOKENS + (budget or 0)
        logger.debug(
            "anthropic: no max_tokens set; sending the default %d plus the thinking budget %d",
            DEFAULT_MAX_TOKENS,
            budget or 0,
        )
    elif budget is not None and asked <= budget:
        raise ConfigurationError(
            f"max_tokens={asked} leaves no room for an answer after a thinking budget of {budget} "
            "tokens (reasoning_effort): Anthropic counts thinking toward max_tokens, so raise "
            "max_tokens above the budget, or leave it unset"
        )
    return asked


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """``cache_control`` on the last tool, the system prompt and the conversation's last block.

    Anthropic caches a prompt prefix that ends at a breakpoint, in the order tools, system,
    messages, so one after each part keeps the earlier parts cached when a later one changes:
    a new prompt still reads the tools and system prompt, and a tool round or re-ask reads the
    whole conversation before it. Three of the four breakpoints the API allows; an output tool
    (forced-tool mode) is the last tool, so the schema is cached with the tools. A native
    ``output_config`` schema takes no breakpoint (Anthropic keeps its compiled grammars itself).
    """
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": dict(EPHEMERAL)}
    system = body.get("system")
    if isinstance(system, str):
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
    messages = body["messages"]
    if not messages:
        return
    last = messages[-1]
    content = last["content"]
    if isinstance(content, str):
        last["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
    elif content and content[-1].get("type") in _CACHEABLE_BLOCKS:
        content[-1] = {**content[-1], "cache_control": dict(EPHEMERAL)}


def tool_param(tool: ToolDefinition, strict_ok: bool) -> dict[str, Any]:
    """A tool definition; strict tools (where the model has them) get the dialect schema."""
    strict = tool.strict and strict_ok
    schema = dict(tool.wire_parameters if strict else tool.parameters)
    param: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": schema,
    }
    if strict:
        param["strict"] = True
    elif tool.strict:
        logger.debug("anthropic: model has no strict tool use; %s sent without strict", tool.name)
    return param


def build_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages, as the API takes them (see :mod:`._blocks`), a lone
    text block as a plain string, the form the SDK's own examples send."""
    out = _blocks.build_messages(messages, MESSAGES_BLOCKS)
    for entry in out:
        content = entry["content"]
        if len(content) == 1 and content[0].get("type") == "text" and len(content[0]) == 2:
            entry["content"] = content[0]["text"]
    return out


def _tool_result(call_id: str, content: str, is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def _media_block(media: Media) -> dict[str, Any]:
    if media.url is not None and media.data is None:
        source: dict[str, Any] = {"type": "url", "url": media.url}
    else:
        source = {"type": "base64", "media_type": media.mime_type, "data": media.data or ""}
    kind = "image" if media.kind == "image" else "document"
    return {"type": kind, "source": source}


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.args)}


MESSAGES_BLOCKS = _blocks.BlockWire(
    provider=PROVIDER,
    api="the Messages API",
    text=lambda text: {"type": "text", "text": text},
    tool_call=_tool_use,
    tool_result=_tool_result,
    media=_media_block,
    call_id=lambda block: block["id"] if block["type"] == "tool_use" else None,
)


def sdk_kwargs(body: Mapping[str, Any]) -> dict[str, Any]:
    """Split a wire body into ``messages.create()`` keyword arguments plus ``extra_body``."""
    kwargs = {k: v for k, v in body.items() if k in CREATE_KWARGS}
    extra = {k: v for k, v in body.items() if k not in CREATE_KWARGS}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


# -- response parsing (pure) --------------------------------------------------------------


def _as_dict(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    to_dict = getattr(raw, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict(mode="json", exclude_none=True, warnings=False))
    return dict(raw.model_dump(mode="json", exclude_none=True, warnings=False))


def usage_from(data: Mapping[str, Any] | None) -> Usage:
    """Normalized usage from a Messages ``usage`` object."""
    if not data:
        return Usage(requests=1)
    fresh = data.get("input_tokens") or 0
    written = data.get("cache_creation_input_tokens") or 0
    read = data.get("cache_read_input_tokens") or 0
    details = data.get("output_tokens_details") or {}
    return Usage(
        input_tokens=fresh + written + read,
        output_tokens=data.get("output_tokens") or 0,
        cached_tokens=read,
        reasoning_tokens=details.get("thinking_tokens") or 0,
        requests=1,
        cache_write_tokens=written,
    )


def finish_reason(stop_reason: str | None, has_calls: bool) -> FinishReason:
    if stop_reason is None:
        return "tool_calls" if has_calls else "stop"
    reason = _FINISH.get(stop_reason)
    if reason is None:
        logger.debug("anthropic: unknown stop_reason %r treated as stop", stop_reason)
        return "tool_calls" if has_calls else "stop"
    if stop_reason == "pause_turn":
        logger.debug("anthropic: stop_reason pause_turn treated as stop")
    return reason


def _refusal(stop_reason: str | None, text: str, details: Any) -> str | None:
    if stop_reason != "refusal":
        return None
    explanation = details.get("explanation") if isinstance(details, Mapping) else None
    return text or explanation or "The model refused (stop_reason=refusal)."


def parse(raw: Any, *, request_id: str | None = None) -> Response:
    """A normalized Response from a Messages API ``Message`` (SDK object or JSON dict)."""
    data = _as_dict(raw)
    parts: list[Part] = []
    for index, block in enumerate(data.get("content") or ()):
        kind = _block_type(index, block)
        if kind == "text":
            if block.get("text"):
                parts.append(Text(block["text"]))
        elif kind == "tool_use":
            parts.append(_blocks.tool_call(block["id"], block["name"], block.get("input")))
        else:
            parts.append(Opaque(PROVIDER, _echo_block(block)))
    response = Response(tuple(parts))
    stop = data.get("stop_reason")
    return Response(
        response.parts,
        usage=usage_from(data.get("usage")),
        finish_reason=finish_reason(stop, bool(response.tool_calls)),
        model=data.get("model"),
        request_id=request_id,
        refusal=_refusal(stop, response.text, data.get("stop_details")),
        provider_details={"id": data.get("id"), "stop_reason": stop},
        response_id=data.get("id"),
    )


def _block_type(index: int, block: Any) -> str:
    """A content block's ``type``; a block without one is a reply alloy cannot read (echoed
    back on the next turn, it would be refused, and nothing says what it holds)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if not isinstance(kind, str):
        raise UnreadableResponseError(
            f"anthropic sent a reply alloy could not read: content block {index} has no 'type'",
            provider=PROVIDER,
        )
    return kind


def _echo_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A response block as it must be sent back: without nulls the request side rejects."""
    return {k: v for k, v in block.items() if v is not None}


class StreamParser:
    """Raw Messages SSE events in, deltas out; :meth:`response` gives the final Response."""

    def __init__(self) -> None:
        self.acc = StreamAccumulator()
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self._stop_details: Any = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json_seen: set[int] = set()
        self.finished = False
        self.message_id: str | None = None

    def feed(self, event: Any) -> list[TextDelta | ToolCallDelta]:
        """Handle one event (SDK object or dict); return the deltas it carried."""
        data = _as_dict(event)
        kind = data.get("type")
        out: list[TextDelta | ToolCallDelta] = []
        if kind == "message_start":
            message = data.get("message") or {}
            self.message_id = message.get("id")
            self.acc.model = message.get("model")
            self._usage.update(
                {k: v for k, v in (message.get("usage") or {}).items() if v is not None}
            )
        elif kind == "content_block_start":
            index = int(data.get("index", 0))
            block = dict(data.get("content_block") or {})
            _block_type(index, block)
            self._blocks[index] = block
            if block.get("type") == "text" and block.get("text"):
                out.append(self.acc.add(TextDelta(block["text"])))
            elif block.get("type") == "tool_use":
                out.append(self.acc.add(ToolCallDelta(index, block.get("id"), block.get("name"))))
        elif kind == "content_block_delta":
            out.extend(self._delta(int(data.get("index", 0)), data.get("delta") or {}))
        elif kind == "content_block_stop":
            out.extend(self._stop_block(int(data.get("index", 0))))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            self._stop = delta.get("stop_reason") or self._stop
            self._stop_details = delta.get("stop_details") or self._stop_details
            self._usage.update(
                {k: v for k, v in (data.get("usage") or {}).items() if v is not None}
            )
        elif kind == "message_stop":
            self.finished = True
        return out

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[TextDelta | ToolCallDelta]:
        kind = delta.get("type")
        block = self._blocks.setdefault(index, {})
        if kind == "text_delta":
            text = delta.get("text") or ""
            return [self.acc.add(TextDelta(text))] if text else []
        if kind == "input_json_delta":
            self._json_seen.add(index)
            piece = delta.get("partial_json") or ""
            return [self.acc.add(ToolCallDelta(index, args_delta=piece))] if piece else []
        if kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")
        return []

    def _stop_block(self, index: int) -> list[TextDelta | ToolCallDelta]:
        block = self._blocks.get(index) or {}
        kind = block.get("type")
        if kind == "tool_use":
            initial = block.get("input")
            if index not in self._json_seen and isinstance(initial, Mapping) and initial:
                return [self.acc.add(ToolCallDelta(index, args_delta=json.dumps(initial)))]
        elif kind not in ("text", None):
            self.acc.add_opaque(Opaque(PROVIDER, _echo_block(block)))
        return []

    def response(self) -> Response:
        if not self.finished:
            raise ProviderConnectionError(
                "anthropic stream ended before message_stop (connection dropped mid-stream)",
                provider=PROVIDER,
            )
        self.acc.usage = usage_from(self._usage)
        draft = self.acc.response()
        return Response(
            draft.parts,
            usage=draft.usage,
            finish_reason=finish_reason(self._stop, bool(draft.tool_calls)),
            model=draft.model,
            request_id=self.acc.request_id,
            refusal=_refusal(self._stop, draft.text, self._stop_details),
            provider_details={"id": self.message_id, "stop_reason": self._stop},
            response_id=self.message_id,
        )


# -- the model ----------------------------------------------------------------------------


class StreamingRequired(BadRequestError):
    """The SDK refuses a non-streamed call whose ``max_tokens`` may take over ten minutes;
    :meth:`AnthropicModel.request` streams such a call instead, so this never reaches users."""


class AnthropicModel(SDKModel):
    """Claude through ``anthropic.Anthropic`` / ``AsyncAnthropic`` (SDK retries off)."""

    provider = PROVIDER
    key_env: ClassVar[tuple[str, ...]] = (API_KEY_ENV, "ANTHROPIC_AUTH_TOKEN")
    states_rate_limits = True  # anthropic-ratelimit-* on every reply
    reply_field = ("content", list)
    #: What a cloud declares of its Claude models, by model id prefix (empty: Claude's family).
    declared_profiles: ClassVar[Mapping[str, Profile]] = {}

    def __init__(
        self, model_id: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        super().__init__(model_id, api_key=api_key, base_url=base_url)
        declared = declared_in(self.declared_profiles, model_id)
        self.capabilities = declared or capabilities_for(model_id)

    def make_client(self, *, asynchronous: bool) -> Any:
        import anthropic

        options: dict[str, Any] = {"max_retries": 0}
        # Explicit values win; otherwise the SDK reads ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL.
        if self.api_key:
            options["api_key"] = self.api_key
        if self.base_url:
            options["base_url"] = self.base_url
        cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        return cls(**options)

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        return (getattr(client, "api_key", None), getattr(client, "auth_token", None))

    # -- the request and its SDK calls --
    def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
        body = build(request, self.model_id, self.capabilities)
        if stream:
            body["stream"] = True
        return body

    def _arguments(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        kwargs = sdk_kwargs(body)
        timeout = request.settings.timeout
        if timeout is not None:
            kwargs["timeout"] = timeout
        return kwargs

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        raw = client.messages.with_raw_response.create(**self._arguments(body, request))
        return self._reply(raw)

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        create = client.messages.with_raw_response.create
        return self._reply(await create(**self._arguments(body, request)))

    def _reply(self, raw: Any) -> Reply:
        """The raw wire JSON, which the parser reads directly (see the OpenAI adapters)."""
        headers = raw.headers
        request_id = headers.get("request-id")
        body = self.json_body(raw.http_response, request_id)
        return Reply(body, request_id, stated_limits(headers))

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        return _streamed(client.messages.create(**self._arguments(body, request)))

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        return _streamed(await client.messages.create(**self._arguments(body, request)))

    def parse(self, reply: Reply, request: Request) -> Response:
        return parse(reply.body, request_id=reply.request_id)

    def stream_parser(self, request: Request) -> StreamParser:
        return StreamParser()

    # -- a whole reply the SDK will only stream --
    def request(self, request: Request) -> Response:
        try:
            return super().request(request)
        except StreamingRequired:
            pass  # streamed below, outside this handler, so nothing is chained
        logger.debug("anthropic: max_tokens too large for a non-streamed call; streaming")
        return _last(self.stream(request))

    async def arequest(self, request: Request) -> Response:
        try:
            return await super().arequest(request)
        except StreamingRequired:
            pass
        logger.debug("anthropic: max_tokens too large for a non-streamed call; streaming")
        final: Response | None = None
        async for event in self.astream(request):
            if isinstance(event, Done):
                final = event.response
        assert final is not None
        return final

    # -- errors --
    def map_error(self, exc: Exception) -> AlloyError | None:
        import anthropic
        import httpx2

        if isinstance(exc, TypeError) and _AUTH_MISSING in str(exc):
            return ConfigurationError(
                f"No Anthropic API key: set {API_KEY_ENV} or pass api_key=... (model {self.name!r})"
            )
        if isinstance(exc, ValueError) and str(exc).startswith(_STREAMING_REQUIRED):
            return StreamingRequired(str(exc), provider=PROVIDER)
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderTimeoutError(
                f"anthropic request timed out: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, anthropic.APIConnectionError):
            return ProviderConnectionError(
                f"anthropic connection failed: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, anthropic.APIStatusError):
            return self._status(exc)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return UnreadableResponseError(
                f"anthropic returned a body the SDK could not read: {self.redact(str(exc))}",
                provider=PROVIDER,
                status_code=exc.status_code,
            )
        if isinstance(exc, httpx2.TimeoutException):
            return ProviderTimeoutError(
                f"anthropic request timed out: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, httpx2.TransportError):
            return ProviderConnectionError(
                f"anthropic connection failed: {self.redact(str(exc) or type(exc).__name__)}",
                provider=PROVIDER,
            )
        if isinstance(exc, anthropic.APIError):
            return ServerError(
                f"anthropic request failed: {self.redact(str(exc))}", provider=PROVIDER
            )
        return None

    def _status(self, exc: Any) -> ProviderError:
        import anthropic

        status: int = exc.status_code
        message = exc.api_message or exc.message or f"HTTP {status}"
        request_id = exc.request_id
        headers = getattr(exc.response, "headers", None)
        retry_after = retry_after_from(headers)
        limits = stated_limits(headers)
        if status < 400:
            # An ``event: error`` inside a 200 stream (e.g. overloaded): classify by its type.
            status = _ERROR_TYPE_STATUS.get(exc.type or "", 500)
            message = f"error event in stream ({exc.type or 'unknown'}): {message}"
        if isinstance(exc, anthropic.EnforcedSpendLimitReachedError) or (
            exc.error_code == "enforced_spend_limit_reached"
        ):
            error = self.status_error(
                429,
                f"spend limit reached, not retried: {message}",
                request_id=request_id,
                rate_limits=limits,
            )
            error.transient = False
            return error
        if status == 400 and _SCHEMA_REJECTION.search(message):
            return SchemaRejectedError(
                f"anthropic returned HTTP 400 (schema rejected): {self.redact(message)}",
                provider=PROVIDER,
                status_code=400,
                request_id=request_id,
            )
        return self.status_error(
            status, message, retry_after=retry_after, request_id=request_id, rate_limits=limits
        )


def _streamed(events: Any) -> Streamed:
    """An SDK stream with the request id and rate limits of its HTTP response."""
    headers = getattr(getattr(events, "response", None), "headers", None)
    request_id = headers.get("request-id") if headers is not None else None
    return Streamed(events, events.close, request_id, stated_limits(headers))


def _last(events: Iterator[StreamEvent]) -> Response:
    final: Response | None = None
    for event in events:
        if isinstance(event, Done):
            final = event.response
    assert final is not None
    return final


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> AnthropicModel:
    """Registry factory for ``anthropic:<model id>``."""
    return AnthropicModel(model_id, api_key=api_key, base_url=base_url)


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicModel",
    "StreamParser",
    "build",
    "build_messages",
    "capabilities_for",
    "create",
    "parse",
    "sdk_kwargs",
    "supports_native_output",
]
