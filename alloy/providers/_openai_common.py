"""What the two OpenAI adapters share: client construction, error mapping, the strict dialect.

The Responses adapter (``openai``) and the Chat Completions adapter (``openai-chat``) talk to
the same SDK, read the same environment variables and get the same exceptions back, so all of
that lives here once. The SDK is imported lazily, inside the functions that need it.

Keys and URLs: an explicit ``api_key`` / ``base_url`` (alloy options) wins; otherwise the SDK
reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` itself. Without any key, a request to OpenAI's
own service is a :class:`~alloy.errors.ConfigurationError` naming ``OPENAI_API_KEY``; an
OpenAI-compatible server elsewhere (vLLM, LM Studio, Ollama's ``/v1``) usually needs none, so
a placeholder key is sent there instead.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from .._profile import Profile
from .._types import ModelSettings, Request, Usage
from ..errors import (
    BadRequestError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
)
from ._base import Reply, SDKModel, Streamed, error_for_status, retry_after_from
from ._efforts import OPENAI
from ._ratelimits import stated_limits

if TYPE_CHECKING:
    import openai

logger = logging.getLogger("alloy.providers.openai")

OPENAI_HOST = "api.openai.com"
#: Sent to OpenAI-compatible servers that take no key, because the SDK insists on one.
PLACEHOLDER_KEY = "alloy-no-key"
MISSING_KEY = (
    "No OpenAI API key: set the OPENAI_API_KEY environment variable or pass api_key=... "
    "(for an OpenAI-compatible server, also set OPENAI_BASE_URL or base_url=...)"
)


# -- models and capabilities ----------------------------------------------------------------

_REASONING = re.compile(r"^(o\d|gpt-5|codex-)")
# Models from before Structured Outputs: tools work, but neither json_schema nor strict tools.
_NO_NATIVE = re.compile(r"^(gpt-3\.5|gpt-4(-|$)|gpt-4o-2024-05-13|o1-mini|o1-preview)")
_NO_TOOLS = re.compile(r"^(o1-mini|o1-preview)")


def base_model_id(model_id: str) -> str:
    """The model name without a router prefix (``openai/gpt-5`` on OpenRouter -> ``gpt-5``)."""
    return model_id.rsplit("/", 1)[-1].lower()


def is_reasoning_model(model_id: str) -> bool:
    """o-series, gpt-5 and codex models: reasoning models, which take no ``temperature``.

    ``gpt-5-chat-*`` is the non-reasoning chat variant and takes sampling settings.
    """
    name = base_model_id(model_id)
    return bool(_REASONING.match(name)) and "-chat" not in name


def capabilities_for(model_id: str) -> Profile:
    """The OpenAI model family's profile; unknown ids get that of current models (everything
    on): a server that is not OpenAI's declares its own (``Provider.profile``)."""
    name = base_model_id(model_id)
    if _NO_NATIVE.match(name):
        return Profile(json_schema="no", tools=not _NO_TOOLS.match(name), strict_tools=False)
    return Profile(strict_tools=True, batch=True)


# -- settings ---------------------------------------------------------------------------------


class TemperatureNotice:
    """Says once per model, at WARNING, that ``temperature`` is left out; DEBUG afterwards."""

    def __init__(self) -> None:
        self._warned = False

    def __call__(self, model_id: str) -> None:
        level = logging.DEBUG if self._warned else logging.WARNING
        self._warned = True
        logger.log(
            level,
            "temperature is not sent to %s: OpenAI reasoning models reject it (it is left out, "
            "the other settings still apply)",
            model_id,
        )


def temperature_for(
    model_id: str, settings: ModelSettings, notice: TemperatureNotice
) -> float | None:
    """The temperature to send, or None when unset or the model cannot take it."""
    if settings.temperature is None:
        return None
    if "temperature" in settings.extra:
        return None  # ALLOY_EXTRA_JSON says what to send; it is merged in last.
    if is_reasoning_model(model_id):
        notice(model_id)
        return None
    return settings.temperature


def reasoning_effort_for(model_id: str, settings: ModelSettings) -> str | None:
    """The ``reasoning_effort`` option as OpenAI's effort level, or None when unset.

    OpenAI takes levels, never a budget in tokens; which levels, per model family, is the
    table :data:`~._efforts.OPENAI` (``0`` is ``"none"`` where a family takes that).
    """
    effort = settings.reasoning_effort
    if effort is None:
        return None
    return str(OPENAI.check(model_id, effort))


def split_known(
    body: dict[str, Any], known: frozenset[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Body keys the SDK method takes as arguments, and the rest (sent via ``extra_body``)."""
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    return kwargs, extra


def data_url(mime_type: str, data: str) -> str:
    return f"data:{mime_type};base64,{data}"


def usage_from(
    raw: Mapping[str, Any] | None,
    *,
    input_key: str,
    output_key: str,
    input_details: str,
    output_details: str,
) -> Usage:
    """Normalized usage from either API's usage object (``requests=1``: one model request)."""
    if not raw:
        return Usage(requests=1)
    details = raw.get(input_details) or {}
    cached = details.get("cached_tokens") or 0
    written = details.get("cache_write_tokens") or 0  # Responses only (explicit breakpoints)
    reasoning = (raw.get(output_details) or {}).get("reasoning_tokens") or 0
    return Usage(
        input_tokens=int(raw.get(input_key) or 0),
        output_tokens=int(raw.get(output_key) or 0),
        cached_tokens=int(cached),
        reasoning_tokens=int(reasoning),
        requests=1,
        cache_write_tokens=int(written),
    )


def as_dict(value: Any) -> dict[str, Any]:
    """An SDK model (or a dict) as a plain JSON dict, keeping exactly the fields that arrived."""
    if isinstance(value, Mapping):
        return dict(value)
    dumped: dict[str, Any] = value.model_dump(mode="json", exclude_unset=True, warnings=False)
    return dumped


# -- the shared model base --------------------------------------------------------------------


class OpenAIModel(SDKModel):
    """SDK client construction and error mapping for both OpenAI wire APIs."""

    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY")
    states_rate_limits = True  # x-ratelimit-* on every reply

    def __init__(
        self, model_id: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        super().__init__(model_id, api_key=api_key, base_url=base_url)
        self.capabilities = capabilities_for(model_id)
        self.temperature_notice = TemperatureNotice()

    def make_client(self, *, asynchronous: bool) -> Any:
        return make_client(self.api_key, self.base_url, asynchronous=asynchronous)

    def connect(self) -> None:
        """The client, and the API's resource, which the SDK imports on first access."""
        self.endpoint(self.aclient())
        _known_arguments(self.endpoint_class())

    def map_error(self, exc: Exception) -> ProviderError | None:
        return map_openai_error(self, exc)

    # -- what each wire API supplies --
    #: The API's path below the base URL (``/chat/completions``, ...): a whole reply is posted there.
    path: ClassVar[str] = ""

    def endpoint(self, client: Any) -> Any:
        """The SDK resource whose ``create`` this API calls (``client.responses``, ...)."""
        raise NotImplementedError

    def endpoint_class(self) -> type:
        """The SDK resource class, whose ``create`` signature says which keys are named arguments."""
        raise NotImplementedError

    # -- the SDK calls, the same for both wire APIs --
    def _arguments(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        """``create()``'s keyword arguments: the body's keys it names, ``extra_body`` for the
        rest, and the per-call timeout when one is set (else the client's)."""
        kwargs, extra = split_known(body, _known_arguments(self.endpoint_class()))
        if extra:
            kwargs["extra_body"] = extra
        timeout = request.settings.timeout
        if timeout is not None:
            kwargs["timeout"] = timeout
        return kwargs

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        return self._reply(client.post(self.path, **self._whole(body, request)))

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        return self._reply(await client.post(self.path, **self._whole(body, request)))

    def _whole(self, body: dict[str, Any], request: Request) -> dict[str, Any]:
        """``client.post()``'s arguments for a whole reply, read raw as ``with_raw_response``
        reads it: the body goes as alloy built it (plain JSON), past ``create()``'s walk of
        it against the SDK's parameter types, which changes nothing in such a body and was
        the largest part of the SDK's work on a request. The SDK still sends it (its auth,
        headers, client options and errors)."""
        options: dict[str, Any] = {"headers": _RAW}
        timeout = request.settings.timeout
        if timeout is not None:
            options["timeout"] = timeout
        return {"cast_to": object, "body": body, "options": options}

    def _reply(self, raw: Any) -> Reply:
        """The raw wire JSON: building and dumping the SDK's response models would be work
        thrown away, since the parser reads the JSON itself."""
        headers = raw.headers
        request_id = headers.get("x-request-id")
        body = self.json_body(raw.http_response, request_id)
        return Reply(body, request_id, stated_limits(headers))

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        events = self.endpoint(client).create(**self._arguments(body, request))
        return streamed(events)

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        events = await self.endpoint(client).create(**self._arguments(body, request))
        return streamed(events)


def streamed(events: Any) -> Streamed:
    """An SDK stream with the ``x-request-id`` and rate limits of its HTTP response (the SDK
    keeps it), as a whole reply has them."""
    headers = events.response.headers
    return Streamed(events, events.close, headers.get("x-request-id"), stated_limits(headers))


#: The header ``with_raw_response`` sets: the SDK hands back the HTTP reply unparsed.
_RAW = {"X-Stainless-Raw-Response": "true"}
_KNOWN: dict[type, frozenset[str]] = {}


def _known_arguments(resource: type) -> frozenset[str]:
    """Parameters ``resource.create`` takes by name; other body keys go via ``extra_body``."""
    known = _KNOWN.get(resource)
    if known is None:
        import inspect

        names = set(inspect.signature(resource.create).parameters)  # type: ignore[attr-defined]
        known = frozenset(names - {"self", "extra_headers", "extra_query", "extra_body", "timeout"})
        _KNOWN[resource] = known
    return known


def _targets_openai(base_url: str | None) -> bool:
    url = base_url or os.environ.get("OPENAI_BASE_URL") or ""
    if not url:
        return True
    host = urlsplit(url).hostname or ""
    return host == OPENAI_HOST or host.endswith(".openai.com")


def make_client(api_key: str | None, base_url: str | None, *, asynchronous: bool) -> Any:
    """An ``OpenAI``/``AsyncOpenAI`` client with SDK retries off (the engine retries)."""
    import openai

    # An explicit key is passed; otherwise the SDK reads OPENAI_API_KEY itself.
    key = api_key or None
    if key is None and not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_ADMIN_KEY")):
        if _targets_openai(base_url):
            raise ConfigurationError(MISSING_KEY)
        logger.debug("No OpenAI key set for %s: sending a placeholder key", base_url)
        key = PLACEHOLDER_KEY
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    kwargs: dict[str, Any] = {"max_retries": 0}
    if key is not None:
        kwargs["api_key"] = key
    if base_url:
        kwargs["base_url"] = base_url
    try:
        return cls(**kwargs)
    except openai.OpenAIError as exc:
        missing = "credentials" in str(exc).lower() or "api_key" in str(exc)
        if not missing:
            raise
    raise ConfigurationError(MISSING_KEY)


# -- errors -----------------------------------------------------------------------------------

_RATE_CODES = ("rate_limit_exceeded", "rate_limit", "requests", "tokens")


def map_openai_error(model: SDKModel, exc: Exception) -> ProviderError | None:
    """One place that turns every openai exception into the alloy error tree."""
    import openai

    provider = model.provider
    if isinstance(exc, openai.APITimeoutError):
        return ProviderTimeoutError(
            f"{provider} request timed out (raise timeout= if the model needs longer)",
            provider=provider,
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {type(cause).__name__}: {cause}" if cause else ""
        return ProviderConnectionError(
            model.redact(f"{provider} connection failed{detail}"), provider=provider
        )
    if isinstance(exc, openai.APIStatusError):
        return _status_error(model, exc)
    if isinstance(exc, openai.APIError):
        # Errors inside a 200 stream (Chat ``data: {"error": ...}``) have no HTTP status.
        return stream_error(model.provider, exc.code or exc.type, exc.message)
    if isinstance(exc, openai.OpenAIError):
        # Anything else the SDK refuses client-side: a bad request that never left.
        return BadRequestError(
            model.redact(f"{provider} SDK refused the request: {exc}"), provider=provider
        )
    return None


def _status_error(model: SDKModel, exc: openai.APIStatusError) -> ProviderError:
    body = exc.body if isinstance(exc.body, Mapping) else {}
    message = str(body.get("message") or exc.message)
    code = exc.code
    if code:
        message = f"{message} (code: {code})"
    headers = exc.response.headers
    error = model.status_error(
        exc.status_code,
        message,
        retry_after=retry_after_from(headers),
        request_id=exc.request_id,
        rate_limits=stated_limits(headers),
    )
    if (
        exc.status_code == 400
        and code == "invalid_json_schema"
        and not isinstance(error, SchemaRejectedError)
    ):
        error = SchemaRejectedError(
            str(error), provider=model.provider, status_code=400, request_id=exc.request_id
        )
    if isinstance(error, RateLimitError) and code == "insufficient_quota":
        # Out of credit, not throttled: waiting will not help, so do not retry.
        error.transient = False
    return error


def stream_error(provider: str, code: Any, message: Any) -> ProviderError:
    """The alloy error for a failure reported inside a stream (HTTP status was 200); keys in
    the message are redacted where every adapter error is (``SDKModel.translate``)."""
    code = code if isinstance(code, str) else ""
    text = message if isinstance(message, str) and message else "the stream reported an error"
    if code == "insufficient_quota":
        error = error_for_status(provider, 429, f"{text} (code: {code})")
        error.transient = False
        return error
    if any(word in code for word in _RATE_CODES):
        return error_for_status(provider, 429, f"{text} (code: {code})")
    if code in ("invalid_json_schema",):
        return error_for_status(provider, 400, f"{text} (code: {code}, schema)")
    if code.startswith("invalid") or code in ("context_length_exceeded", "invalid_prompt"):
        return error_for_status(provider, 400, f"{text} (code: {code})")
    suffix = f" (code: {code})" if code else ""
    return error_for_status(provider, 500, f"{text}{suffix}")


# -- the OpenAI strict dialect ------------------------------------------------------------------

#: String formats OpenAI strict mode accepts; others are left out (validated locally).
ALLOWED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
#: Keywords OpenAI strict mode accepts. Everything else is left out of what is sent (and still
#: enforced by alloy's local validation against the canonical schema).
_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "$defs",
        "definitions",
        "$ref",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)


def openai_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Canonical schema -> what OpenAI strict mode accepts (``text.format``, strict tools).

    Every object lists all properties in ``required`` (a property that was optional becomes
    nullable through ``anyOf`` with null) and has ``additionalProperties: false``; ``oneOf``
    becomes ``anyOf``; a single ``allOf`` is merged into its parent; a ``$ref`` with sibling
    keywords is inlined (OpenAI wants a bare ``$ref``); ``$defs``/``$ref`` and recursion
    (``"$ref": "#"``) are kept; unsupported keywords (``uniqueItems``, ``minLength``, ``default``,
    ``discriminator``, formats outside :data:`ALLOWED_FORMATS`, ...) are left out. The root must
    be an object.
    """
    dialect = _Dialect(schema)
    out = dialect.node(schema, root=True)
    if not _is_object(out) or "anyOf" in out:
        raise ConfigurationError(
            "OpenAI strict mode needs an object at the root of the schema, got "
            f"{schema.get('type') or sorted(schema)!r}"
        )
    if dialect.dropped:
        logger.debug(
            "OpenAI strict dialect left out unsupported keywords: %s", sorted(dialect.dropped)
        )
    return out


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    if isinstance(kind, list):
        return "object" in kind
    return kind == "object" or ("properties" in node and kind is None)


class _Dialect:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs") or {}
        self.dropped: set[str] = set()

    def node(self, schema: Any, *, root: bool = False) -> Any:
        if not isinstance(schema, Mapping):
            return schema
        schema = self._flatten(schema)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in ("$defs", "definitions"):
                if root:
                    out[key] = {name: self.node(sub) for name, sub in value.items()}
                else:
                    self.dropped.add(f"nested {key}")
            elif key == "properties":
                out[key] = {name: self.node(sub) for name, sub in value.items()}
            elif key == "items":
                out[key] = self.node(value) if isinstance(value, Mapping) else value
            elif key in ("anyOf", "oneOf"):
                out["anyOf"] = [self.node(sub) for sub in value]
            elif key == "format":
                if value in ALLOWED_FORMATS:
                    out[key] = value
                else:
                    self.dropped.add(f"format {value}")
            elif key in _KEPT:
                out[key] = value
            else:
                self.dropped.add(key)
        if _is_object(out):
            self._close(out, schema)
        return out

    def _flatten(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Merge ``allOf`` into the node and inline a ``$ref`` that has siblings."""
        merged = dict(schema)
        all_of = merged.pop("allOf", None)
        if isinstance(all_of, list):
            for sub in all_of:
                merged = _merge(self._resolve(sub), merged)
        ref = merged.get("$ref")
        if isinstance(ref, str) and len(merged) > 1:
            target = self._target(ref)
            if target is not None:
                siblings = {k: v for k, v in merged.items() if k != "$ref"}
                merged = {**target, **siblings}
        return merged

    def _resolve(self, schema: Any) -> Mapping[str, Any]:
        if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            target = self._target(schema["$ref"])
            if target is not None:
                return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema if isinstance(schema, Mapping) else {}

    def _target(self, ref: str) -> Mapping[str, Any] | None:
        prefix = "#/$defs/"
        if not ref.startswith(prefix):
            return None
        target = self.defs.get(ref[len(prefix) :])
        return target if isinstance(target, Mapping) else None

    @staticmethod
    def _close(out: dict[str, Any], source: Mapping[str, Any]) -> None:
        properties: dict[str, Any] = out.setdefault("properties", {})
        declared = source.get("required")
        required = set(declared) if isinstance(declared, list) else set(properties)
        for name, sub in list(properties.items()):
            if name not in required and not _nullable(sub):
                properties[name] = {"anyOf": [sub, {"type": "null"}]}
        out["required"] = list(properties)
        out["additionalProperties"] = False


def _nullable(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(sub) for sub in schema.get("anyOf") or ())


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**base, **over}
    if "properties" in base and "properties" in over:
        merged["properties"] = {**base["properties"], **over["properties"]}
        merged["required"] = [*base.get("required", ()), *over.get("required", ())]
    return merged
