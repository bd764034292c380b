"""Gemini through google-genai: ``generateContent`` / ``streamGenerateContent``.

What goes on the wire, and why:

- Structured output is ``response_mime_type="application/json"`` plus ``response_json_schema``
  (JSON Schema, after :func:`~alloy.providers._gemini_dialect.gemini_schema`). Never
  ``response_schema``: the SDK converts that to an OpenAPI subset, crashes on ``type`` lists and
  loses recursion (``providers.md`` 1.3).
- Tools are ``types.FunctionDeclaration(name, description, parameters_json_schema=...)``, never
  Python callables (those switch on the SDK's automatic function calling, which would run tools
  behind the engine's back); automatic function calling is also disabled explicitly.
- Gemini 2.x (and 1.x) reject function declarations together with the JSON response mode
  ("Function calling with a response mime type: 'application/json' is unsupported"). For those
  models a native-mode request that also offers tools carries the output schema as one more
  function, with ``functionCallingConfig`` mode ANY; a call of that function comes back as the
  answer's text, so the engine still sees a native answer. Without tools (the finalize turn,
  plain commands) the JSON mode is used. Gemini 3 takes both at once.
- Forced-tool output mode: the output function plus mode ANY with ``allowedFunctionNames`` (the
  offered tools and the output function, so tools stay callable).
- ``functionCall.id`` and a part's ``thoughtSignature`` are kept (the signature as an
  ``Opaque("gemini", {"thought_signature": <base64>, "call_id": ...})`` part) and sent back on
  the same part. Calls without an id get ``call_<index>``. A ``functionResponse.response`` must
  be an object: a tool's JSON object goes as is, anything else as ``{"result": ...}``, and a
  failed tool as ``{"error": ...}``. No call is left unanswered: a re-ask after a forced output
  call with invalid arguments is sent as that call's ``{"error": ...}`` response.
- ``reasoning_effort`` is ``thinking_config`` (:func:`thinking_config`), checked per model family
  (:data:`._efforts.GEMINI`): ``thinking_level`` on Gemini 3, ``thinking_budget`` on 2.5 or for
  a budget in tokens. ``cached_content`` names a
  context cache made beforehand with the SDK (``client.caches.create``) and is sent as is;
  Gemini refuses a system instruction or tools beside it, so that is a ConfigurationError
  before sending. Implicit caching (Gemini 2.5 and later) needs no field, so ``prompt_cache``
  adds nothing; ``prompt_cache_key`` is OpenAI's and refused.
- Settings: ``system_instruction``, ``temperature``, ``max_output_tokens``; ``timeout`` becomes
  the per-request ``HttpOptions.timeout`` (milliseconds, rounded up); ALLOY_EXTRA_JSON becomes
  ``HttpOptions.extra_body``, which the SDK merges recursively into the REST body, so it is
  written in the wire's shape, e.g. ``{"generationConfig": {"topK": 40}}``.
- Whole replies are read as wire JSON (:func:`parse_body`): a request with a config asks the
  SDK for the reply's HTTP body (``should_return_http_response``, which changes nothing on the
  wire) instead of its ``GenerateContentResponse``, whose building costs more than the rest of
  the adapter's work; a request without one (it would gain an empty ``generationConfig``) gets
  the object. The SDK's automatic continuation does not follow a body it hands back, so when
  the server stops a generation at its per-request limit (``finishReason`` CONTINUATION with a
  ``continuationToken``) the adapter resumes it through the SDK's own call, which follows any
  further tokens, and joins the hops as the SDK does (:func:`joined`). Streams are the SDK's
  objects, continued by the SDK.
- Key: ``api_key`` or ``GOOGLE_API_KEY`` / ``GEMINI_API_KEY`` (read by the SDK); base URL:
  ``base_url`` or ``GOOGLE_GEMINI_BASE_URL``. The SDK does not retry (no ``retry_options``): the
  engine does; continuation never repeats a rejected request. The genai ``Client`` is
  kept for the model's lifetime (one per event loop for async calls), because a client that is
  garbage-collected closes its connection pool under any request still using it.
- Errors: ``ClientError``/``ServerError`` by ``.code`` (a 400 ``API_KEY_INVALID`` is an
  authentication error; a 429's ``RetryInfo.retryDelay`` becomes ``retry_after``); the SDK sends
  through httpx2 when installed (httpx otherwise), and both libraries' timeouts and transport
  errors are mapped; a stream that ends without a finish reason is a connection error. The SDK's
  one-time "non-text parts in the response" log warning is filtered out: it concerns its
  ``response.text`` helper, which alloy does not use.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from .._model import CacheKeyParts
from .._profile import Profile
from .._stream_accumulator import StreamAccumulator, tool_call
from .._types import (
    FinishReason,
    Media,
    ModelTurn,
    Opaque,
    Part,
    Request,
    Response,
    RetryPrompt,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    Usage,
    UserTurn,
)
from ..errors import (
    AuthenticationError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    UnreadableResponseError,
)
from ._base import Reply, SDKModel, Streamed, retry_after_from
from ._efforts import GEMINI
from ._parts import misplaced
from ._settings import refuse_cache_names

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "GeminiModel",
    "answer_function",
    "build",
    "capabilities_for",
    "create",
    "parse",
    "parse_body",
]

logger = logging.getLogger("alloy.providers.gemini")

PROVIDER = "gemini"
MISSING_KEY = (
    "No Gemini API key: set the GEMINI_API_KEY (or GOOGLE_API_KEY) environment variable or pass "
    "api_key=..."
)
OUTPUT_TOOL_DESCRIPTION = (
    "Give your final answer by calling this function; its arguments are the answer."
)

_OLD_MODEL = re.compile(r"^gemini-(1|2)(\.|-)")
_ORDERED_MODEL = re.compile(r"^gemini-(1|2\.0)(\.|-)")
#: Gemini 2.5's thinking budgets for effort levels, as Google's OpenAI-compatible API maps them.
LEVEL_BUDGETS = {"none": 0, "low": 1024, "medium": 8192, "high": 24576}

_FILTERED = frozenset(
    {
        "SAFETY",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "RECITATION",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)


# -- capabilities -------------------------------------------------------------------------------


def _base_id(model_id: str) -> str:
    return model_id.removeprefix("models/").lower()


def json_with_tools(model_id: str) -> bool:
    """Whether the model takes JSON response mode and function declarations in one request."""
    return not _OLD_MODEL.match(_base_id(model_id))


def needs_property_ordering(model_id: str) -> bool:
    """Gemini 2.0 and older do not follow the schema's property order unless told."""
    return bool(_ORDERED_MODEL.match(_base_id(model_id)))


def capabilities_for(model_id: str) -> Profile:
    """Every current Gemini model: native JSON Schema and tools, without strict tools."""
    return Profile(schema_with_tools=json_with_tools(model_id), batch=True)


# -- request ------------------------------------------------------------------------------------


def output_function(request: Request, model_id: str) -> str | None:
    """The function that carries the answer, when the output goes as a function call."""
    spec = request.output
    if spec is None:
        return None
    if spec.mode == "tool":
        return spec.name
    return answer_function(request, model_id)


def answer_function(request: Request, model_id: str) -> str | None:
    """The output function whose call is read back as the answer's text: native mode on a model
    that cannot combine the JSON response mode with tools (forced-tool mode keeps the call)."""
    spec = request.output
    if spec is not None and spec.mode == "native" and request.tools:
        return None if json_with_tools(model_id) else spec.name
    return None


def build(request: Request, model_id: str) -> dict[str, Any]:
    """The ``generate_content`` keyword arguments as plain JSON: ``model``, ``contents`` (Content
    dicts) and ``config`` (a GenerateContentConfig dict, absent when nothing is set: the SDK
    would send an empty generationConfig). SDK objects are made from it at send time."""
    body: dict[str, Any] = {"model": model_id, "contents": contents(request)}
    config = config_dict(request, model_id)
    if config:
        body["config"] = config
    return body


def config_dict(request: Request, model_id: str) -> dict[str, Any]:
    """The request's ``GenerateContentConfig`` fields, as JSON (empty when nothing is set)."""
    declarations = [
        {
            "name": tool.name,
            "description": tool.description,
            "parameters_json_schema": dict(tool.wire_parameters),
        }
        for tool in request.tools
    ]
    config: dict[str, Any] = {}
    spec = request.output
    output_tool = output_function(request, model_id)
    if spec is not None and output_tool is not None:
        declarations.append(
            {
                "name": output_tool,
                "description": OUTPUT_TOOL_DESCRIPTION,
                "parameters_json_schema": dict(spec.wire_schema),
            }
        )
        config["tool_config"] = {
            "function_calling_config": {
                "mode": "ANY",
                "allowed_function_names": [output_tool, *(t.name for t in request.tools)],
            }
        }
    elif spec is not None and spec.mode == "native":
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = dict(spec.wire_schema)
    if spec is not None:
        how = "output function" if output_tool else spec.mode
        logger.debug("gemini %s: output mode %s (sent as %s)", model_id, spec.mode, how)
    forced = request.tool_choice
    if request.tools and forced is not None:
        names = [t.name for t in request.tools] if forced == "required" else [forced]
        config["tool_config"] = {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": names}
        }
    if declarations:
        config["tools"] = [{"function_declarations": declarations}]
        config["automatic_function_calling"] = {"disable": True}
    settings = request.settings
    if request.system:
        config["system_instruction"] = request.system
    if settings.temperature is not None:
        config["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        config["max_output_tokens"] = settings.max_tokens
    thinking = thinking_config(model_id, settings.reasoning_effort)
    if thinking:
        config["thinking_config"] = thinking
    refuse_cache_names(settings, "Gemini", content=True)
    if settings.cached_content is not None:
        _check_cacheable(config)
        config["cached_content"] = settings.cached_content
    http: dict[str, Any] = {}
    if settings.timeout is not None:
        http["timeout"] = max(1, math.ceil(settings.timeout * 1000))
    if settings.extra:
        http["extra_body"] = dict(settings.extra)
    if http:
        config["http_options"] = http
    return config


def thinking_config(model_id: str, effort: str | int | None) -> dict[str, Any]:
    """``thinking_config`` for the ``reasoning_effort`` option (empty when it is unset), once
    the model's family takes it (:data:`~._efforts.GEMINI`).

    A budget in tokens is ``thinking_budget``. A level is Gemini 3's ``thinking_level``;
    Gemini 2.5 takes budgets only, so a level there is the budget Google's own
    OpenAI-compatible endpoint maps it to (none 0, low 1024, medium 8192, high 24576).
    """
    if effort is None:
        return {}
    effort = GEMINI.check(model_id, effort)
    if isinstance(effort, int):
        return {"thinking_budget": effort}
    if _OLD_MODEL.match(_base_id(model_id)):
        return {"thinking_budget": LEVEL_BUDGETS[effort]}
    return {"thinking_level": effort.upper()}


def _check_cacheable(config: Mapping[str, Any]) -> None:
    """Gemini refuses a system instruction, tools or a tool config beside ``cached_content``
    (they must be in the cache): say so before sending, with what to do instead."""
    found = [key for key in ("system_instruction", "tools", "tool_config") if key in config]
    if found:
        raise ConfigurationError(
            f"Gemini refuses {', '.join(found)} beside cached_content: put the system prompt "
            "in the cache when you create it (caches.create(config={'system_instruction': "
            "...})) and use cached_content with commands that have no system prompt, no "
            "tools and no forced-tool output"
        )


def contents(request: Request) -> list[dict[str, Any]]:
    """The conversation as Gemini ``Content`` dicts (user / model roles), in JSON: inline data
    and thought signatures stay base64 text until send time (see :func:`sdk_contents`)."""
    out: list[dict[str, Any]] = []
    pending: list[ToolCall] = []  # the last model turn's calls, until their results are sent
    for message in request.messages:
        match message:
            case ModelTurn():
                parts = _model_parts(message.parts)
                pending = [p for p in message.parts if isinstance(p, ToolCall)]
                if parts:  # an empty model turn is not sendable; the next prompt says why
                    out.append({"role": "model", "parts": parts})
            case UserTurn():
                out.append({"role": "user", "parts": _user_parts(message.parts, pending)})
                pending = []
            case _:
                assert_never(message)
    return out


def _user_parts(parts: tuple[Part, ...], pending: list[ToolCall]) -> list[dict[str, Any]]:
    """A user turn's parts; every call of the model turn before it gets its functionResponse.

    A re-ask after a forced output call whose arguments were invalid is that call's (error)
    response, so the call is not left unanswered; any other call without a result gets one.
    """
    responses: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    answered: set[str] = set()
    for part in parts:
        match part:
            case ToolResult():
                responses.append(_function_response(part.call_id, part.name, tool_response(part)))
                answered.add(part.call_id)
            case RetryPrompt():
                text = part.render()
                unanswered = [c for c in pending if c.id not in answered]
                if unanswered:
                    responses.extend(
                        _function_response(c.id, c.name, {"error": text}) for c in unanswered
                    )
                    answered.update(c.id for c in unanswered)
                else:
                    others.append({"text": text})
            case Text():
                others.append({"text": part.text})
            case Media():
                if part.data is not None:
                    others.append({"inline_data": {"mime_type": part.mime_type, "data": part.data}})
                else:
                    others.append(
                        {"file_data": {"file_uri": part.url, "mime_type": part.mime_type}}
                    )
            case Opaque():
                pass  # signatures ride on model parts; other providers' data means nothing here
            case ToolCall():
                raise misplaced(part, "user")
            case _:
                assert_never(part)
    for call in pending:
        if call.id not in answered:
            error = {"error": "No result was produced for this call."}
            responses.append(_function_response(call.id, call.name, error))
    return responses + others


def _function_response(call_id: str, name: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"function_response": {"id": call_id, "name": name, "response": response}}


def tool_response(result: ToolResult) -> dict[str, Any]:
    """``functionResponse.response`` must be an object: wrap lists, scalars, plain text, errors."""
    if result.is_error:
        return {"error": result.content}
    try:
        value = json.loads(result.content)
    except ValueError:
        return {"result": result.content}
    return value if isinstance(value, dict) else {"result": value}


def _model_parts(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    signatures: dict[str | None, str] = {}
    for part in parts:
        if isinstance(part, Opaque) and part.provider == PROVIDER:
            payload = part.payload if isinstance(part.payload, Mapping) else {}
            encoded = payload.get("thought_signature")
            if isinstance(encoded, str):
                signatures.setdefault(payload.get("call_id"), encoded)
    out: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case Text():
                out.append(_signed({"text": part.text}, signatures.pop(None, None)))
            case ToolCall():
                call = {"id": part.id, "name": part.name, "args": dict(part.args)}
                out.append(_signed({"function_call": call}, signatures.pop(part.id, None)))
            case Opaque():
                pass  # read above: its signature rides on the part it belongs to
            case Media() | ToolResult() | RetryPrompt():
                raise misplaced(part, "model")
            case _:
                assert_never(part)
    if None in signatures:
        # The signature came on a part with no text to keep (Gemini sends one on an empty final
        # part when streaming); it still goes back, on an empty text part as it arrived.
        out.append(_signed({"text": ""}, signatures.pop(None)))
    return out


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    if signature is not None:
        part["thought_signature"] = signature
    return part


def sdk_contents(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON contents with base64 text turned into the bytes google-genai's models take
    (validating a dict, they would encode a str as UTF-8, not decode it)."""
    out = []
    for turn in turns:
        parts = turn["parts"]
        if any("inline_data" in p or "thought_signature" in p for p in parts):
            turn = {**turn, "parts": [_part_bytes(p) for p in parts]}
        out.append(turn)
    return out


def _part_bytes(part: dict[str, Any]) -> dict[str, Any]:
    if "inline_data" in part:
        blob = part["inline_data"]
        part = {**part, "inline_data": {**blob, "data": base64.b64decode(blob["data"])}}
    if "thought_signature" in part:
        part = {**part, "thought_signature": _b64decode(part["thought_signature"])}
    return part


def _b64decode(value: str) -> bytes:
    padded = value + "=" * (-len(value) % 4)
    return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))


def _b64encode(value: bytes) -> str:
    return base64.b64encode(value).decode()


# -- response -----------------------------------------------------------------------------------


def parse(
    response: types.GenerateContentResponse, *, output_tool: str | None = None, calls: int = 0
) -> Response:
    """A ``GenerateContentResponse`` as a normalized Response; ``calls`` tool calls without an
    id came before it (in an earlier hop of the generation), so its own are numbered after."""
    state = StreamState(output_tool)
    state.calls = calls
    state.feed(response)
    return state.response(require_finish=False)


def parse_body(body: Mapping[str, Any], *, output_tool: str | None = None) -> Response:
    """A ``generateContent`` reply as its wire JSON gives it (camelCase, as received or
    recorded) as a normalized Response: the same one :func:`parse` makes of the SDK's object
    for it, read without building that object."""
    parts: list[Part] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    feedback = body.get("promptFeedback")
    blocked = _wire_name(feedback.get("blockReason")) if feedback is not None else None
    candidates = body.get("candidates")
    candidate = candidates[0] if candidates else None
    raw_finish = None
    if candidate is not None:
        raw_finish = _wire_name(candidate.get("finishReason"))
        content = candidate.get("content")
        for part in (content.get("parts") if content is not None else None) or ():
            call = part.get("functionCall")
            call_id = None
            if call is not None:
                args = call.get("args") or {}
                if not isinstance(args, dict):
                    raise TypeError(f"functionCall.args must be an object, got {args!r:.80}")
                if output_tool and call.get("name") == output_tool:
                    texts.append(json.dumps(args))
                    continue
                call_id = call.get("id") or f"call_{len(calls)}"
                calls.append(tool_call(call_id, call.get("name") or "", json.dumps(args)))
            elif part.get("text") and not part.get("thought"):
                texts.append(part["text"])
            signature = part.get("thoughtSignature")
            if signature:
                payload: dict[str, Any] = {"thought_signature": _b64encode(_b64decode(signature))}
                if call_id is not None:
                    payload["call_id"] = call_id
                parts.append(Opaque(PROVIDER, payload))
    if texts:
        parts.append(Text("".join(texts)))
    finish = finish_reason(raw_finish, blocked=blocked)
    if finish == "stop" and calls:
        finish = "tool_calls"
    usage = body.get("usageMetadata")
    details = {"finish_reason": raw_finish, "block_reason": blocked}
    return Response(
        (*parts, *calls),
        usage=_wire_usage(usage) if usage is not None else Usage(),
        finish_reason=finish,
        model=body.get("modelVersion"),
        request_id=body.get("responseId"),
        provider_details={k: v for k, v in details.items() if v is not None},
        response_id=body.get("responseId"),
    )


def _wire_name(value: Any) -> str | None:
    """A finish or block reason as the wire spells it (google-genai's enums take any case)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"a finish or block reason must be a string, got {value!r:.80}")
    return value.upper()


def _wire_usage(meta: Mapping[str, Any]) -> Usage:
    """:func:`usage_from` for ``usageMetadata`` as JSON."""
    thoughts = meta.get("thoughtsTokenCount") or 0
    return Usage(
        input_tokens=(meta.get("promptTokenCount") or 0)
        + (meta.get("toolUsePromptTokenCount") or 0),
        output_tokens=(meta.get("candidatesTokenCount") or 0) + thoughts,
        cached_tokens=meta.get("cachedContentTokenCount") or 0,
        reasoning_tokens=thoughts,
        requests=1,
    )


def continuation(body: Mapping[str, Any]) -> bytes | None:
    """The token to resume a generation the server stopped at its per-request token limit (no
    finish reason yet, or ``CONTINUATION``), as google-genai's automatic continuation reads it;
    None when the reply is complete."""
    candidates = body.get("candidates")
    if not candidates:
        return None
    first = candidates[0]
    token = first.get("continuationToken")
    if token and _wire_name(first.get("finishReason")) in (None, "CONTINUATION"):
        return _b64decode(token)
    return None


@dataclass(frozen=True, slots=True)
class WholeReply:
    """A whole reply read as wire JSON, and what google-genai returned for the rest of the
    generation when the server stopped it at its per-request limit (None: it was complete)."""

    body: Mapping[str, Any]
    rest: types.GenerateContentResponse | None = None

    def parse(self, output_tool: str | None) -> Response:
        first = parse_body(self.body, output_tool=output_tool)
        if self.rest is None:
            return first
        before = sum(1 for part in first.parts if isinstance(part, ToolCall))
        return joined(first, parse(self.rest, output_tool=output_tool, calls=before))


def joined(first: Response, rest: Response) -> Response:
    """One reply from the hops of a continued generation, as google-genai merges them: each
    hop's parts in order, the token counts summed, the finish reason and ids of the last."""
    return Response(
        first.parts + rest.parts,
        usage=first.usage + rest.usage,
        finish_reason=rest.finish_reason,
        model=rest.model or first.model,
        request_id=rest.request_id or first.request_id,
        provider_details=rest.provider_details,
        response_id=rest.response_id or first.response_id,
    )


class StreamState:
    """Folds response chunks (one for a whole reply, many for a stream) into one Response."""

    def __init__(self, output_tool: str | None) -> None:
        self.output_tool = output_tool
        self.acc = StreamAccumulator()
        self.calls = 0
        self.raw_finish: str | None = None
        self.blocked: str | None = None

    def feed(self, chunk: types.GenerateContentResponse) -> list[TextDelta | ToolCallDelta]:
        events: list[TextDelta | ToolCallDelta] = []
        acc = self.acc
        acc.model = chunk.model_version or acc.model
        acc.request_id = chunk.response_id or acc.request_id
        acc.response_id = chunk.response_id or acc.response_id
        if chunk.usage_metadata is not None:
            acc.usage = usage_from(chunk.usage_metadata)
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.blocked = _enum_name(feedback.block_reason)
        candidate = chunk.candidates[0] if chunk.candidates else None
        if candidate is None:
            return events
        if candidate.finish_reason is not None:
            self.raw_finish = _enum_name(candidate.finish_reason)
        content = candidate.content
        for part in (content.parts if content is not None else None) or ():
            call = part.function_call
            if call is not None and call.name == self.output_tool and self.output_tool:
                events.append(acc.add(TextDelta(json.dumps(call.args or {}))))
                continue
            call_id = None
            if call is not None:
                call_id = call.id or f"call_{self.calls}"
                events.append(acc.add_call(self.calls, call_id, call.name or "", call.args or {}))
                self.calls += 1
            elif part.text and not part.thought:
                events.append(acc.add(TextDelta(part.text)))
            if part.thought_signature:
                payload: dict[str, Any] = {"thought_signature": _b64encode(part.thought_signature)}
                if call_id is not None:
                    payload["call_id"] = call_id
                acc.add_opaque(Opaque(PROVIDER, payload))
        return events

    @property
    def finished(self) -> bool:
        return self.raw_finish is not None or self.blocked is not None

    def response(self, *, require_finish: bool = True) -> Response:
        if require_finish and not self.finished:
            raise ProviderConnectionError(
                "gemini stream ended before its final chunk (no finishReason)", provider=PROVIDER
            )
        acc = self.acc
        finish = finish_reason(self.raw_finish, blocked=self.blocked)
        acc.finish_reason = None if finish == "stop" else finish
        details = {"finish_reason": self.raw_finish, "block_reason": self.blocked}
        acc.provider_details = {k: v for k, v in details.items() if v is not None}
        return acc.response()


def finish_reason(raw: str | None, *, blocked: str | None = None) -> FinishReason:
    """Gemini's finishReason (or a prompt block) as a normalized finish reason."""
    if blocked is not None:
        return "content_filter"
    if raw == "MAX_TOKENS":
        return "length"
    if raw in _FILTERED:
        return "content_filter"
    if raw not in (None, "STOP", "FINISH_REASON_UNSPECIFIED"):
        logger.debug("gemini finishReason %s read as a normal stop", raw)
    return "stop"


def usage_from(meta: types.GenerateContentResponseUsageMetadata) -> Usage:
    """Usage: thoughts count as output (they are billed so) and are also the reasoning tokens."""
    thoughts = meta.thoughts_token_count or 0
    return Usage(
        input_tokens=(meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0),
        output_tokens=(meta.candidates_token_count or 0) + thoughts,
        cached_tokens=meta.cached_content_token_count or 0,
        reasoning_tokens=thoughts,
        requests=1,
    )


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


# -- errors -------------------------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _details(exc: Any) -> list[Mapping[str, Any]]:
    body = exc.details if isinstance(exc.details, Mapping) else {}
    error = body.get("error", body)
    items = error.get("details") if isinstance(error, Mapping) else None
    return [d for d in items or () if isinstance(d, Mapping)]


def retry_delay(exc: Any) -> float | None:
    """``google.rpc.RetryInfo.retryDelay`` ("20s") from the error body, else ``retry-after``."""
    for detail in _details(exc):
        delay = detail.get("retryDelay")
        if isinstance(delay, str) and (match := _DURATION.match(delay)):
            return float(match.group(1))
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return retry_after_from(headers) if headers is not None else None


def _key_invalid(exc: Any) -> bool:
    return any(d.get("reason") == "API_KEY_INVALID" for d in _details(exc))


def _transport_classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeouts, other transport errors) of httpx and httpx2, whichever are installed."""
    timeouts: list[type[BaseException]] = []
    transport: list[type[BaseException]] = [ConnectionError]
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:  # pragma: no cover - google-genai needs one of them
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.TransportError)
    return tuple(timeouts), tuple(transport)


# -- the model ----------------------------------------------------------------------------------


class _QuietTextWarning(logging.Filter):
    """Drops google-genai's "there are non-text parts in the response" warning.

    The SDK logs it (once) when it tries to fill ``response.parsed`` from a reply that carries a
    function call next to the JSON mode; alloy reads the parts itself, so it says nothing true.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Warning: there are non-text parts")


def http_options(base_url: str | None) -> types.HttpOptions:
    """The client's HTTP options: its endpoint, and an httpx transport for async requests.

    google-genai sends async requests with aiohttp whenever aiohttp is installed (another
    package may bring it), whose failures alloy does not map and whose dropped connections it
    may answer with nothing; an httpx transport keeps the async client on the library the sync
    client uses and :func:`_transport_classes` maps."""
    from google.genai import types

    library = "httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"
    transport = importlib.import_module(library).AsyncHTTPTransport()
    return types.HttpOptions(base_url=base_url, async_client_args={"transport": transport})


def _quiet_sdk_text_warning() -> None:
    sdk_logger = logging.getLogger("google_genai.types")
    if not any(isinstance(f, _QuietTextWarning) for f in sdk_logger.filters):
        sdk_logger.addFilter(_QuietTextWarning())


#: Fields every generateContent reply holds at least one of (a blocked prompt has no candidates,
#: but its prompt feedback and usage).
_REPLY_FIELDS = ("candidates", "prompt_feedback", "usage_metadata", "model_version", "response_id")
#: The same, as the wire spells them.
_WIRE_REPLY_FIELDS = ("candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId")


class GeminiModel(SDKModel):
    """A Gemini model through google-genai; see the module docstring for what is sent."""

    provider = PROVIDER
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    #: google-genai converts a request recursively, a few frames per level, and exhausts
    #: Python's recursion limit inside the SDK near 480 levels (fewer from a deep call stack).
    max_request_nesting = 256

    def __init__(
        self, model_id: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        super().__init__(model_id, api_key=api_key, base_url=base_url)
        self.capabilities = capabilities_for(model_id)

    def make_client(self, *, asynchronous: bool) -> Any:
        """A ``genai.Client`` (async calls go through its ``.aio``), kept for reuse."""
        from google import genai

        _quiet_sdk_text_warning()
        kwargs: dict[str, Any] = {"http_options": http_options(self.base_url)}
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            return genai.Client(**kwargs)
        except ValueError as exc:
            if "api key" not in str(exc).lower():
                raise
        raise ConfigurationError(MISSING_KEY)

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        api_client = getattr(client, "_api_client", None)
        return (getattr(api_client, "api_key", None),)

    async def close_async_client(self, client: Any) -> None:
        await client.aio.aclose()

    def map_error(self, exc: Exception) -> ProviderError | None:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            return self._api_error(exc)
        if isinstance(exc, errors.UnknownApiResponseError):
            return UnreadableResponseError(  # the SDK's message holds the whole body
                f"gemini sent a response that is not JSON: {self.redact.clip(str(exc))}",
                provider=PROVIDER,
            )
        timeouts, transport = _transport_classes()
        if isinstance(exc, timeouts):
            return ProviderTimeoutError(
                "gemini request timed out (raise timeout= if the model needs longer)",
                provider=PROVIDER,
            )
        if isinstance(exc, transport):
            return ProviderConnectionError(
                self.redact(f"gemini connection failed: {type(exc).__name__}: {exc}"),
                provider=PROVIDER,
            )
        return None

    def _api_error(self, exc: Any) -> ProviderError:
        code = int(exc.code) if exc.code else None
        message = str(exc.message or exc)
        if exc.status:
            message = f"{exc.status}: {message}"
        if code == 400 and _key_invalid(exc):
            return AuthenticationError(
                self.redact(f"gemini rejected the API key: {message}"),
                provider=PROVIDER,
                status_code=code,
            )
        return self.status_error(code or 500, message, retry_after=retry_delay(exc))

    # -- the request and its SDK calls --
    def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
        return build(request, self.model_id)

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        """The body without the attempt's timeout (``config.http_options.timeout``: the
        engine shortens it to fit a deadline, which changes nothing the model sees); the
        sampling options are the ``config``'s, and ``extra_json``'s ``generationConfig``
        (which the SDK merges into the REST body) over them."""
        body = self.build(request, stream=stream)
        config = body.get("config")
        if not isinstance(config, dict):
            return CacheKeyParts(body, body)
        sampling = dict(config)
        http = config.get("http_options")
        if isinstance(http, dict):
            extra = http.get("extra_body")
            written = extra.get("generationConfig") if isinstance(extra, dict) else None
            if isinstance(written, dict):
                sampling.update(written)
            if "timeout" in http:
                kept = {name: value for name, value in http.items() if name != "timeout"}
                rest = {name: value for name, value in config.items() if name != "http_options"}
                body = {**body, "config": {**rest, "http_options": kept} if kept else rest}
        return CacheKeyParts(body, sampling)

    def sdk_arguments(self, body: dict[str, Any], *, raw: bool = False) -> dict[str, Any]:
        """``generate_content()``'s arguments, SDK objects made from the plain body.

        google-genai validates ``contents`` against a wide union, at a cost that depends on its
        form: a list of ``Content`` objects costs it far more per item than a list of dicts, and
        one ``Content`` (validated here) or a bare string costs least. So a prompt of one text
        (every first request of a text prompt) goes as that string, another lone turn as one
        ``Content``, and a conversation (tool rounds, re-asks) as dicts. The wire body is the
        same either way; the config dict is validated into its object per call. ``raw`` asks the
        SDK for the reply's HTTP body instead of its response object (see :meth:`whole`).
        ``alloy.batch`` builds its Gemini requests with it too, so a batch sends what a call would.
        """
        from google.genai import types

        turns = sdk_contents(body["contents"])
        contents: Any = turns
        if len(turns) == 1:
            turn = turns[0]
            parts = turn["parts"]
            if turn["role"] == "user" and len(parts) == 1 and parts[0].keys() == {"text"}:
                contents = parts[0]["text"]  # the SDK makes it the same user turn
            else:
                contents = types.Content.model_validate(turn)
        arguments: dict[str, Any] = {"model": body["model"], "contents": contents}
        config = body.get("config")
        if config:
            if raw:
                config = {**config, "should_return_http_response": True}
            arguments["config"] = types.GenerateContentConfig.model_validate(config)
        return arguments

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        """A whole reply, read as wire JSON where the request has a config (see :meth:`whole`)."""
        if "config" not in body:
            return Reply(client.models.generate_content(**self.sdk_arguments(body)))
        answer = client.models.generate_content(**self.sdk_arguments(body, raw=True))
        data = self._wire_json(answer)
        token = continuation(data)
        if token is None:
            return Reply(WholeReply(data))
        rest = client.models.generate_content(**self._continued(body, token))
        return Reply(WholeReply(data, rest))

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        """Async twin of :meth:`send`."""
        models = client.aio.models
        if "config" not in body:
            return Reply(await models.generate_content(**self.sdk_arguments(body)))
        answer = await models.generate_content(**self.sdk_arguments(body, raw=True))
        data = self._wire_json(answer)
        token = continuation(data)
        if token is None:
            return Reply(WholeReply(data))
        rest = await models.generate_content(**self._continued(body, token))
        return Reply(WholeReply(data, rest))

    def _continued(self, body: dict[str, Any], token: bytes) -> dict[str, Any]:
        """The arguments that resume a generation from ``token``; google-genai follows any
        further tokens itself and returns the rest of the generation as one response."""
        arguments = self.sdk_arguments(body)
        config = arguments["config"].model_copy(update={"continuation_token": token})
        return {**arguments, "config": config}

    def _wire_json(self, answer: Any) -> dict[str, Any]:
        """The JSON object of the HTTP body google-genai handed back for a whole reply."""
        text = answer.sdk_http_response.body
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError) as exc:
            raise self.unreadable(exc, text) from None
        if not isinstance(data, dict):
            raise self.unreadable(TypeError("not a JSON object"), text)
        return data

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        chunks = client.models.generate_content_stream(**self.sdk_arguments(body))
        return Streamed(chunks, chunks.close)

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        chunks = await client.aio.models.generate_content_stream(**self.sdk_arguments(body))
        return Streamed(chunks, chunks.aclose)

    def parse(self, reply: Reply, request: Request) -> Response:
        output_tool = answer_function(request, self.model_id)
        body = reply.body
        if isinstance(body, WholeReply):
            if not any(body.body.get(name) for name in _WIRE_REPLY_FIELDS):
                raise self.unreadable(
                    TypeError("none of a generateContent reply's fields"), body.body
                )
            return body.parse(output_tool)
        if not any(getattr(body, name, None) for name in _REPLY_FIELDS):
            # google-genai reads an empty body, [], null or JSON of another shape as a reply
            # with nothing in it, which would pass for an empty answer.
            raise self.unreadable(TypeError("none of a generateContent reply's fields"), body)
        return parse(body, output_tool=output_tool)

    def stream_parser(self, request: Request) -> StreamState:
        return StreamState(answer_function(request, self.model_id))


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> GeminiModel:
    """Registry factory: ``gemini:<model id>``, e.g. ``gemini:gemini-2.5-flash``."""
    base_url = base_url or None
    return GeminiModel(model_id or "gemini-2.5-flash", api_key=api_key, base_url=base_url)
