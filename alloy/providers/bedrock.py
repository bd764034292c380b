"""AWS Bedrock Converse adapter (provider ``bedrock``), through boto3's ``bedrock-runtime`` client.

``bedrock:MODEL`` sends ``converse`` and ``converse_stream``; the model id is a Bedrock model
id or inference profile (``us.anthropic.claude-haiku-4-5-20251001-v1:0``, ``amazon.nova-lite-v1:0``)
or an ARN. Field names are botocore's service model (``bedrock-runtime`` 2023-09-30).

A schema goes as ``outputConfig.textFormat`` (``json_schema``, the schema as a JSON string) or
as an output tool forced through ``toolConfig``; which one a model gets is its declared profile
(``alloy.providers._profiles_cloud.BEDROCK``, by the id without region and version). A Bedrock API
key (``api_key=``, ``AWS_BEARER_TOKEN_BEDROCK``) is sent as a Bearer token on an unsigned
client; without one boto3's credential chain signs with SigV4, read again once after a 401 or an
expired token. boto3 is synchronous: the async calls run it in a worker thread, one event of a
stream at a time; botocore's own retries are off (the engine retries). Credentials, regions,
stop reasons, usage and errors as users see them: docs/providers.md, "AWS Bedrock (Converse)".
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import os
import re
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .._model import CacheKeyParts, CacheScope
from .._profile import Profile
from .._stream_accumulator import StreamAccumulator
from .._types import (
    FinishReason,
    Media,
    Message,
    Opaque,
    Part,
    Request,
    Response,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    Usage,
)
from ..errors import (
    AlloyError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from . import _blocks
from ._base import Redactor, Reply, SDKModel, Streamed, merge_extra
from ._profiles import declared_in
from ._profiles_cloud import BEDROCK
from ._refresh import RefreshesOn401
from ._settings import refuse_cache_names, unsupported

logger = logging.getLogger("alloy.providers.bedrock")

PROVIDER = "bedrock"
API_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
#: The region a custom endpoint (``base_url``) is signed for when none is configured.
ENDPOINT_REGION = "us-east-1"
OUTPUT_TOOL_DESCRIPTION = (
    "Give your final answer by calling this tool: its input is the answer. "
    "Call it once, when you have everything you need."
)
STUB_TOOL_DESCRIPTION = "Used earlier in this conversation; not available now."
CACHE_POINT = {"cachePoint": {"type": "default"}}

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "refusal",
    "content_filtered": "content_filter",
    "malformed_model_output": "stop",
    "malformed_tool_use": "tool_calls",
}
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "text/plain": "txt",
    "text/html": "html",
    "text/markdown": "md",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}

# -- model ids ----------------------------------------------------------------------------

_ARN = re.compile(r"^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:[a-z-]+/(?P<id>.+)$")
_REGION_PREFIX = re.compile(r"^(?:us|us-gov|eu|apac|ap|jp|au|ca|global)\.(?=[a-z0-9-]+\.)")
_VERSION = re.compile(r"(?:-v\d+)?(?::\d+)?$")
_DATE = re.compile(r"-\d{8}$")


def base_model_id(model_id: str) -> str:
    """The foundation model a Bedrock id names, for family and price lookups:
    ``us.anthropic.claude-haiku-4-5-20251001-v1:0`` is ``anthropic.claude-haiku-4-5``.

    An ARN's resource id is read; a cross-region prefix (``us.``, ``eu.``, ``apac.``,
    ``global.``...), the version suffix (``-v1:0``) and a release date are left out.
    """
    model = model_id.strip()
    match = _ARN.match(model)
    if match:
        model = match.group("id")
    model = _REGION_PREFIX.sub("", model)
    model = _VERSION.sub("", model)
    return _DATE.sub("", model)


def capabilities_for(model_id: str) -> Profile:
    """What Bedrock declares for the model (:data:`._profiles_cloud.BEDROCK`)."""
    return declared_in(BEDROCK, model_id) or BEDROCK[""]


def dialect(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """Claude's keyword subset (Bedrock's structured outputs take the same as Anthropic's)."""
    from ._anthropic_dialect import anthropic_schema

    return anthropic_schema(schema)


# -- request building (pure) --------------------------------------------------------------


def build(request: Request, model_id: str, capabilities: Profile) -> dict[str, Any]:
    """The ``converse`` keyword arguments for ``request``, as plain JSON (media as base64)."""
    settings = request.settings
    refuse_cache_names(settings, "Bedrock")
    if settings.reasoning_effort is not None:
        raise unsupported(
            "Bedrock",
            "reasoning_effort",
            settings.reasoning_effort,
            "Converse takes thinking only as model-specific fields; send them with "
            'extra_json={"additionalModelRequestFields": {...}}',
        )
    body: dict[str, Any] = {"modelId": model_id, "messages": build_messages(request.messages)}
    if request.system and request.system.strip():
        body["system"] = [{"text": request.system}]
    inference: dict[str, Any] = {}
    if settings.max_tokens is not None:
        inference["maxTokens"] = settings.max_tokens
    if settings.temperature is not None:
        inference["temperature"] = settings.temperature
    if inference:
        body["inferenceConfig"] = inference

    strict_ok = capabilities.strict_tools
    tools = [tool_spec(tool, strict_ok) for tool in request.tools]
    choice: dict[str, Any] | None = None
    spec = request.output
    if spec is not None and spec.mode == "native":
        structure: dict[str, Any] = {
            "schema": json.dumps(dict(spec.wire_schema), ensure_ascii=False),
            "name": spec.name,
        }
        body["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": structure}}
        }
    elif spec is not None and spec.mode == "tool":
        output_tool = ToolDefinition(
            spec.name, OUTPUT_TOOL_DESCRIPTION, spec.schema, spec.strict, spec.dialect_schema
        )
        tools.append(tool_spec(output_tool, strict_ok))
        # ``any`` with the output tool alone forces it too, and every model with tool use
        # takes it; a named ``tool`` is documented for Claude and Nova only.
        named = not request.tools and "named" in capabilities.tool_choice
        choice = {"tool": {"name": spec.name}} if named else {"any": {}}
    if request.tools and request.tool_choice is not None:
        forced = request.tool_choice
        choice = {"any": {}} if forced == "required" else {"tool": {"name": forced}}
    if not tools:
        # Tool blocks in the history need the tools declared, even when none may be called.
        tools = [
            {
                "toolSpec": {
                    "name": name,
                    "description": STUB_TOOL_DESCRIPTION,
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
            for name in _blocks.tool_names_in_history(request.messages)
        ]
    if tools:
        config: dict[str, Any] = {"tools": tools}
        if choice is not None:
            config["toolChoice"] = choice
        body["toolConfig"] = config
    if request.tools and not request.parallel_tool_calls:
        logger.debug("bedrock: Converse has no parallel tool call setting; none sent")
    if settings.prompt_cache:
        mark_cache_points(body)
    return merge_extra(body, settings.extra)


def tool_spec(tool: ToolDefinition, strict_ok: bool) -> dict[str, Any]:
    """A ``toolSpec``; strict tools (where the model has them) get the dialect schema."""
    strict = tool.strict and strict_ok
    schema = dict(tool.wire_parameters if strict else tool.parameters)
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": schema}}
    if tool.description:
        spec["description"] = tool.description
    if strict:
        spec["strict"] = True
    return {"toolSpec": spec}


def mark_cache_points(body: dict[str, Any]) -> None:
    """A ``cachePoint`` after the tools, the system prompt and the last message: Bedrock caches
    the prompt prefix before each one, in the order tools, system, messages."""
    config = body.get("toolConfig")
    if config:
        config["tools"].append(dict(CACHE_POINT))
    if body.get("system"):
        body["system"].append(dict(CACHE_POINT))
    messages = body["messages"]
    if messages:
        messages[-1]["content"].append(dict(CACHE_POINT))


def build_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages, as Converse takes them (see :mod:`._blocks`)."""
    return _blocks.build_messages(messages, CONVERSE_BLOCKS)


def _tool_result(call_id: str, content: str, is_error: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"toolUseId": call_id, "content": [{"text": content or "(empty)"}]}
    if is_error:
        result["status"] = "error"
    return {"toolResult": result}


def media_block(media: Media) -> dict[str, Any]:
    """An image or document block; its bytes stay base64 here (see :func:`sdk_params`)."""
    if media.data is None:
        raise ConfigurationError(
            f"bedrock: media must be sent inline (Converse takes bytes or s3:// locations, not "
            f"{media.url!r}); load it first, e.g. with alloy.Image.from_path"
        )
    if media.kind == "image":
        fmt = _IMAGE_FORMATS.get(media.mime_type)
        if fmt is None:
            raise ConfigurationError(
                f"bedrock: images must be PNG, JPEG, GIF or WebP, not {media.mime_type!r}"
            )
        return {"image": {"format": fmt, "source": {"bytes": media.data}}}
    fmt = _DOCUMENT_FORMATS.get(media.mime_type)
    if fmt is None:
        raise ConfigurationError(f"bedrock: documents cannot be {media.mime_type!r}")
    return {"document": {"format": fmt, "name": "document", "source": {"bytes": media.data}}}


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": dict(call.args)}}


CONVERSE_BLOCKS = _blocks.BlockWire(
    provider=PROVIDER,
    api="Converse",
    text=lambda text: {"text": text},
    tool_call=_tool_use,
    tool_result=_tool_result,
    media=media_block,
    call_id=lambda block: block["toolUse"]["toolUseId"] if "toolUse" in block else None,
)


def sdk_params(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body as boto3 takes it: media ``bytes`` decoded from base64 (botocore encodes them)."""
    params = dict(body)
    params["messages"] = [
        {**message, "content": [_decoded(block) for block in message["content"]]}
        for message in body["messages"]
    ]
    return params


def _decoded(block: Mapping[str, Any]) -> Mapping[str, Any]:
    for kind in ("image", "document"):
        inner = block.get(kind)
        if isinstance(inner, Mapping) and isinstance(inner.get("source", {}).get("bytes"), str):
            source = {**inner["source"], "bytes": base64.b64decode(inner["source"]["bytes"])}
            return {kind: {**inner, "source": source}}
    return block


# -- response parsing (pure) --------------------------------------------------------------


def usage_from(data: Mapping[str, Any] | None) -> Usage:
    """Normalized usage from a Converse ``usage`` (cache reads and writes are input too)."""
    if not data:
        return Usage(requests=1)
    read = data.get("cacheReadInputTokens") or 0
    written = data.get("cacheWriteInputTokens") or 0
    return Usage(
        input_tokens=(data.get("inputTokens") or 0) + read + written,
        output_tokens=data.get("outputTokens") or 0,
        cached_tokens=read,
        requests=1,
        cache_write_tokens=written,
    )


def finish_reason(stop_reason: str | None, has_calls: bool) -> FinishReason:
    reason = _FINISH.get(stop_reason or "")
    if reason is None:
        if stop_reason is not None:
            logger.debug("bedrock: unknown stopReason %r treated as stop", stop_reason)
        return "tool_calls" if has_calls else "stop"
    if reason == "stop" and has_calls:
        return "tool_calls"
    return reason


def _refusal(stop_reason: str | None, text: str) -> str | None:
    if stop_reason != "guardrail_intervened":
        return None
    return text or "A Bedrock guardrail blocked the answer (stopReason=guardrail_intervened)."


def parse(data: Mapping[str, Any], *, request_id: str | None = None) -> Response:
    """A normalized Response from a ``converse`` reply (the dict boto3 returns)."""
    output = data.get("output")
    message = output.get("message") if isinstance(output, Mapping) else None
    if not isinstance(message, Mapping):
        raise ValueError("the reply has no 'output' message")
    parts: list[Part] = []
    for block in message.get("content") or ():
        if "text" in block:
            if block["text"]:
                parts.append(Text(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            parts.append(_blocks.tool_call(use["toolUseId"], use["name"], use.get("input")))
        else:
            parts.append(Opaque(PROVIDER, dict(block)))
    response = Response(tuple(parts))
    stop = data.get("stopReason")
    return Response(
        response.parts,
        usage=usage_from(data.get("usage")),
        finish_reason=finish_reason(stop, bool(response.tool_calls)),
        request_id=request_id,
        refusal=_refusal(stop, response.text),
        provider_details={"stop_reason": stop},
    )


class StreamParser:
    """``converse_stream`` events in (dicts keyed by event name), deltas out."""

    def __init__(self) -> None:
        self.acc = StreamAccumulator()
        self._stop: str | None = None
        self._usage: Mapping[str, Any] | None = None
        self._reasoning: dict[int, dict[str, Any]] = {}
        self.finished = False

    def feed(self, event: Mapping[str, Any]) -> list[TextDelta | ToolCallDelta]:
        out: list[TextDelta | ToolCallDelta] = []
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = (start.get("start") or {}).get("toolUse")
            if use:
                index = int(start.get("contentBlockIndex", 0))
                out.append(self.acc.add(ToolCallDelta(index, use["toolUseId"], use["name"])))
        elif "contentBlockDelta" in event:
            data = event["contentBlockDelta"]
            index = int(data.get("contentBlockIndex", 0))
            delta = data.get("delta") or {}
            if delta.get("text"):
                out.append(self.acc.add(TextDelta(delta["text"])))
            elif "toolUse" in delta:
                piece = delta["toolUse"].get("input") or ""
                if piece:
                    out.append(self.acc.add(ToolCallDelta(index, args_delta=piece)))
            elif "reasoningContent" in delta:
                self._reason(index, delta["reasoningContent"])
        elif "messageStop" in event:
            self._stop = event["messageStop"].get("stopReason")
        elif "metadata" in event:
            self._usage = event["metadata"].get("usage")
            self.finished = True
        return out

    def _reason(self, index: int, delta: Mapping[str, Any]) -> None:
        """Reasoning deltas, folded into one block to send back on the next turn."""
        text = self._reasoning.setdefault(index, {"text": ""})
        text["text"] += delta.get("text") or ""
        if delta.get("signature"):
            text["signature"] = delta["signature"]

    def response(self) -> Response:
        if not self.finished:
            raise ProviderConnectionError(
                "bedrock stream ended before its metadata event (connection dropped mid-stream)",
                provider=PROVIDER,
            )
        for index in sorted(self._reasoning):
            block = {"reasoningContent": {"reasoningText": self._reasoning[index]}}
            self.acc.add_opaque(Opaque(PROVIDER, block))
        self.acc.usage = usage_from(self._usage)
        draft = self.acc.response()
        return Response(
            draft.parts,
            usage=draft.usage,
            finish_reason=finish_reason(self._stop, bool(draft.tool_calls)),
            request_id=self.acc.request_id,
            refusal=_refusal(self._stop, draft.text),
            provider_details={"stop_reason": self._stop},
        )


# -- errors -------------------------------------------------------------------------------

_RATE_LIMITS = frozenset({"ThrottlingException", "ServiceQuotaExceededException"})
_AUTH = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "IncompleteSignature",
        "MissingAuthenticationTokenException",
        "InvalidClientTokenId",
    }
)
#: Credentials that expired (an STS session token, an SSO session): read from the chain again.
_EXPIRED = frozenset({"ExpiredTokenException", "ExpiredToken", "RequestExpired"})
_TRANSIENT = frozenset(
    {
        "ModelErrorException",
        "ModelStreamErrorException",
        "ModelNotReadyException",
        "InternalServerException",
        "ServiceUnavailableException",
    }
)
_STATUS = {
    "ValidationException": 400,
    "ResourceNotFoundException": 404,
    "ModelTimeoutException": 408,
    "ConflictException": 409,
}


# -- botocore's debug logs -----------------------------------------------------------------

#: botocore's loggers whose DEBUG records quote requests, replies and signatures.
BOTOCORE_LOGGERS = (
    "botocore.auth",
    "botocore.endpoint",
    "botocore.parsers",
    "botocore.credentials",
)
_REDACTORS: weakref.WeakSet[Redactor] = weakref.WeakSet()


class _RedactCredentials(logging.Filter):
    """Takes every credential a Bedrock model knows out of botocore's log records: at DEBUG they
    quote reply bodies (which may echo a key), signed headers and session tokens."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG or not _REDACTORS:
            return True
        if isinstance(record.msg, str):
            record.msg = _redacted(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(arg) for arg in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {key: _redacted(arg) for key, arg in record.args.items()}
        return True


def _redacted(value: Any) -> Any:
    """``value`` as text with every known credential masked, made now: a record's arguments are
    formatted later, and a request object may carry its signature or key by then. Numbers stay
    numbers, for their ``%d``."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = str(value)
    for redact in list(_REDACTORS):
        text = redact(text)
    return text


_FILTER = _RedactCredentials()


def redact_botocore_logs(redact: Redactor) -> None:
    """Have botocore's DEBUG records redacted by ``redact`` (for as long as it lives)."""
    _REDACTORS.add(redact)
    for name in BOTOCORE_LOGGERS:
        logger_ = logging.getLogger(name)
        if _FILTER not in logger_.filters:
            logger_.addFilter(_FILTER)


def _timeout_step(timeout: float) -> float:
    """``timeout`` rounded up to the next step of a ladder 10% apart. boto3 takes a read
    timeout per client only, and a deadline gives each request a timeout of its own: a client
    per step keeps their number bounded (a few dozen at most), for a read allowed at most 10%
    longer than asked."""
    if timeout <= 0:
        return timeout
    return float(1.1 ** math.ceil(math.log(timeout, 1.1)))


# -- the model ----------------------------------------------------------------------------


class BedrockModel(RefreshesOn401, SDKModel):
    """A Bedrock model through boto3's ``bedrock-runtime`` client (botocore retries off)."""

    provider = PROVIDER
    key_env: ClassVar[tuple[str, ...]] = (
        API_KEY_ENV,
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    )

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        region: str | None = None,
        profile: str | None = None,
    ) -> None:
        if not model_id:
            raise ConfigurationError(
                "Name the Bedrock model, e.g. 'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0'"
            )
        super().__init__(model_id, api_key=api_key, base_url=base_url)
        self.region = region
        self.profile = profile
        self.capabilities = capabilities_for(model_id)
        self._timed: dict[float, Any] = {}
        redact_botocore_logs(self.redact)

    # -- clients --
    def make_client(self, *, asynchronous: bool, timeout: float | None = None) -> Any:
        """A ``bedrock-runtime`` client; the async calls run the same kind in a thread."""
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config

        session = boto3.Session(botocore_session=_botocore_session(), profile_name=self.profile)
        region = self._region(session)
        options: dict[str, Any] = {"retries": {"total_max_attempts": 1}}
        if timeout is not None:
            options.update(read_timeout=timeout, connect_timeout=timeout)
        key = self.api_key
        if key:
            options["signature_version"] = UNSIGNED
        kwargs: dict[str, Any] = {"region_name": region, "config": Config(**options)}
        if self.base_url:
            kwargs["endpoint_url"] = self.base_url
        client = session.client("bedrock-runtime", **kwargs)
        client.meta.events.register("before-parse.bedrock-runtime", _refuse_cut_reply)
        if not key:
            self._learn(session)
        else:

            def bearer(request: Any, **_: Any) -> None:
                request.headers["Authorization"] = f"Bearer {key}"

            client.meta.events.register_first("before-send.bedrock-runtime", bearer)
        return client

    def _region(self, session: Any) -> str:
        for region in (self.region, *(os.environ.get(name) for name in REGION_ENV)):
            if region:
                return region
        if session.region_name:
            return str(session.region_name)
        if self.base_url:
            logger.debug("bedrock: no region configured; signing for %s", ENDPOINT_REGION)
            return ENDPOINT_REGION
        raise ConfigurationError(
            f"Bedrock needs a region: set AWS_REGION, pass region=..., or give the profile one "
            f"(model {self.name!r})"
        )

    def _learn(self, session: Any) -> None:
        """Redact the credentials boto3's chain resolved (access key, secret, session token),
        wherever they came from: variables, a profile's files, SSO or a role."""
        credentials = session.get_credentials()
        if credentials is not None:
            frozen = credentials.get_frozen_credentials()
            self.redact.add(frozen.access_key, frozen.secret_key, frozen.token)

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        return ()  # learnt by make_client, from the session (_learn)

    def refresh_credential(self) -> bool:
        """After expired credentials, new clients: each resolves boto3's credential chain
        again (a renewed session token, SSO session or profile). A Bedrock API key is fixed."""
        if self.api_key:
            return False
        with self._lock:
            self._sync_client, self._timed = None, {}
        return True

    def aclient(self) -> Any:
        """The same client serves every event loop: its calls run in worker threads."""
        return self.client()

    def _client_for(self, request: Request) -> Any:
        """The shared client, or one whose read timeout is the request's ``timeout``."""
        if request.settings.timeout is None:
            return self.client()
        timeout = _timeout_step(request.settings.timeout)
        with self._lock:
            client = self._timed.get(timeout)
        if client is None:
            client = self.new_client(lambda: self.make_client(asynchronous=False, timeout=timeout))
            with self._lock:
                client = self._timed.setdefault(timeout, client)
        return client

    def _close_now(self) -> None:
        with self._lock:
            timed, self._timed = list(self._timed.values()), {}
        for client in timed:
            client.close()
        super()._close_now()

    # -- the request and its SDK calls --
    def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
        return build(request, self.model_id, self.capabilities)

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        """The body; its sampling options are in ``inferenceConfig`` (``temperature``)."""
        body = self.build(request, stream=stream)
        inference = body.get("inferenceConfig")
        return CacheKeyParts(body, {**body, **inference} if isinstance(inference, dict) else body)

    def cache_scope(self) -> CacheScope:
        """The endpoint, or else the region and profile it resolves to (one model id answers
        in every region and account), and the Bedrock API key if any."""
        if self.base_url:
            return CacheScope(self.base_url.rstrip("/"), self.api_key)
        region = self.region or next(filter(None, map(os.environ.get, REGION_ENV)), "")
        return CacheScope(f"bedrock-runtime:{region}:{self.profile or ''}", self.api_key)

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        data = self._client_for(request).converse(**sdk_params(body))
        return Reply(data, _request_id(data))

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        return await asyncio.to_thread(self.send, client, body, request)

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        data = self._client_for(request).converse_stream(**sdk_params(body))
        events = data["stream"]
        return Streamed(events, events.close, _request_id(data))

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        streamed = await asyncio.to_thread(self.send_stream, client, body, request)
        events = streamed.events

        async def close() -> None:
            await asyncio.to_thread(events.close)

        return Streamed(_in_threads(events), close, streamed.request_id)

    def parse(self, reply: Reply, request: Request) -> Response:
        return parse(reply.body, request_id=reply.request_id)

    def stream_parser(self, request: Request) -> StreamParser:
        return StreamParser()

    # -- errors --
    def map_error(self, exc: Exception) -> AlloyError | None:
        import urllib3
        from botocore import exceptions as aws

        if isinstance(exc, aws.ClientError):
            return self._client_error(exc)
        if isinstance(exc, (aws.NoCredentialsError, aws.PartialCredentialsError)):
            return ConfigurationError(
                f"No AWS credentials for {self.name!r}: set {API_KEY_ENV} (a Bedrock API key) or "
                "pass api_key=..., or give boto3 credentials (AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, AWS_PROFILE or profile=..., or a role)"
            )
        if isinstance(exc, aws.NoRegionError):
            return ConfigurationError("Bedrock needs a region: set AWS_REGION or pass region=...")
        if isinstance(exc, aws.ParamValidationError):
            return ConfigurationError(
                f"{self.name}: boto3 refused the request before sending it: {self.redact(str(exc))}"
            )
        if isinstance(exc, (aws.ReadTimeoutError, aws.ConnectTimeoutError)):
            return ProviderTimeoutError(
                f"bedrock request timed out: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, aws.HTTPClientError):  # connection refused, closed, dropped
            return ProviderConnectionError(
                f"bedrock connection failed: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, urllib3.exceptions.HTTPError):  # a stream cut off mid-way
            return ProviderConnectionError(
                f"bedrock connection failed: {self.redact(str(exc))}", provider=PROVIDER
            )
        if isinstance(exc, aws.BotoCoreError):
            return ServerError(
                f"bedrock request failed: {self.redact(str(exc))}", provider=PROVIDER
            )
        return None

    def _client_error(self, exc: Any) -> ProviderError:
        """An AWS error reply, by its error code first (the HTTP status when the code says
        nothing more); an exception inside a stream has a code and no status of its own."""
        error = exc.response.get("Error") or {}
        meta = exc.response.get("ResponseMetadata") or {}
        code = str(error.get("Code") or "")
        code = code[:1].upper() + code[1:]  # in-stream exceptions are named in camelCase
        message = f"{code}: {error.get('Message') or exc}" if code else str(exc)
        request_id = meta.get("RequestId")
        status = meta.get("HTTPStatusCode")
        if not isinstance(status, int) or status < 400:
            status = _STATUS.get(code, 500)
        if code in _RATE_LIMITS:
            return self.status_error(429, message, request_id=request_id)
        if code in _EXPIRED or status == 401:  # the chain's credentials are read anew, once
            return self.status_error(401, message, request_id=request_id)
        if code in _AUTH:
            return self.status_error(403, message, request_id=request_id)
        if code in _TRANSIENT:
            return ServerError(
                f"bedrock returned {code}: {self.redact(message)}",
                provider=PROVIDER,
                status_code=status,
                request_id=request_id,
            )
        return self.status_error(status, message, request_id=request_id)

    def not_sent(self, exc: Exception) -> ConfigurationError | None:
        """boto3 sends and reads in one call: a RecursionError while *decoding* is the reply's
        (nested too deeply to read), not a request that could not be encoded."""
        if isinstance(exc, RecursionError) and "decod" in str(exc):
            return None
        return super().not_sent(exc)


_LOADERS: list[Any] = []


def _botocore_session() -> Any:
    """A fresh botocore session (it resolves credentials and region anew) sharing one data
    loader: reading botocore's service model for every client would take 0.1-0.2 s each."""
    import botocore.session

    session = botocore.session.get_session()
    if not _LOADERS:
        _LOADERS.append(session.get_component("data_loader"))
    session.register_component("data_loader", _LOADERS[0])
    return session


def _refuse_cut_reply(response_dict: Mapping[str, Any], **_: Any) -> None:
    """A whole reply shorter than its ``Content-Length`` is a connection cut off mid-way:
    botocore would read the half it got as an empty reply."""
    body = response_dict.get("body")
    headers = response_dict.get("headers") or {}
    length = headers.get("content-length")
    if (
        isinstance(body, bytes)
        and length is not None
        and length.isdigit()
        and len(body) < int(length)
    ):
        raise ProviderConnectionError(
            f"bedrock's reply ended after {len(body)} of {length} bytes (connection dropped)",
            provider=PROVIDER,
        )


def _request_id(data: Mapping[str, Any]) -> str | None:
    meta = data.get("ResponseMetadata")
    return meta.get("RequestId") if isinstance(meta, Mapping) else None


async def _in_threads(events: Any) -> AsyncIterator[Any]:
    """A botocore event stream read one event at a time in a worker thread."""
    iterator: Iterator[Any] = iter(events)
    done = object()
    while True:
        event = await asyncio.to_thread(next, iterator, done)
        if event is done:
            return
        yield event


#: Registry factory for ``bedrock:<model id>``; ``region`` and ``profile`` choose the AWS region
#: and the named profile of boto3's credential chain.
create = BedrockModel


__all__ = [
    "BedrockModel",
    "StreamParser",
    "base_model_id",
    "build",
    "build_messages",
    "capabilities_for",
    "create",
    "dialect",
    "parse",
    "sdk_params",
]
