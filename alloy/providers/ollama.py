"""Ollama through the ``ollama`` SDK: the native ``/api/chat`` API.

What goes on the wire, and why:

- Structured output is ``format=<JSON Schema>`` (the ``ollama`` dialect: the canonical schema
  as is, since llama.cpp's grammar conversion takes what alloy emits), also when tools are
  offered. Forced-tool output mode offers the output as a tool, but Ollama has no way to force
  a tool call, so the model may also answer in text (read as the answer all the same).
- Tools keep their full parameter schemas. The SDK's ``Tool`` model knows only a few property
  keywords and silently drops nested ``properties``/``required``, ``anyOf``, ``$ref``,
  ``additionalProperties``, ``format``, bounds... (``providers.md`` 1.5), so tools are passed as
  ``ollama.Tool.model_construct(type="function", function=<raw dict>)``, which the SDK sends
  verbatim. Serializing that raw dict makes pydantic warn (``Expected `Function```); a narrow
  warnings filter for exactly that message keeps it from reaching users.
- Tool calls come back without ids (the SDK drops them): they get ``call_<index>``. Results go
  back as ``role: tool`` messages with ``tool_name`` (the SDK's message model has no call id).
- Images go as base64 in ``images`` (as bytes, so the SDK never mistakes the data for a file
  path); Ollama takes no image URLs and no PDFs, which are a ConfigurationError.
- Settings: ``options.temperature`` and ``options.num_predict`` (max tokens). The SDK takes a
  timeout only per client, while a call's attempts may each have their own (a deadline shrinks
  the last ones), so the client's httpx transport gives every request the timeout of the call it
  belongs to, read from a context variable set around the SDK call: one client, any timeout.
  ALLOY_EXTRA_JSON: ``options`` merges into the options, keys ``chat()`` takes (``think``,
  ``keep_alive``, ``format``, ``logprobs``, ``top_logprobs``) are passed through, other keys
  that are model options (``top_k``, ``num_ctx``, ``seed``...) go into ``options``, and anything
  else cannot reach the wire through the SDK and is left out with a warning on the log.
- Host: ``base_url`` or ``OLLAMA_HOST`` (read by the SDK). No key is needed; an ``api_key``
  option (or ``OLLAMA_API_KEY``, read by the SDK) is sent as a bearer token, as Ollama's cloud
  wants. The SDK does not retry: the engine does.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .._engine import REASK_PROMPT
from .._schema import memoize_by_identity
from .._stream import StreamAccumulator
from .._types import (
    Capabilities,
    Done,
    FinishReason,
    Media,
    ModelTurn,
    Part,
    Request,
    Response,
    RetryPrompt,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    Usage,
)
from ..errors import (
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from ._base import SDKModel

if TYPE_CHECKING:
    import ollama

__all__ = ["OllamaModel", "build", "create", "ollama_schema", "parse", "parse_body"]

logger = logging.getLogger("alloy.providers.ollama")

PROVIDER = "ollama"
#: ``chat()`` keyword arguments ALLOY_EXTRA_JSON may set directly.
CHAT_EXTRA = frozenset({"think", "keep_alive", "format", "logprobs", "top_logprobs"})
#: Extra keys already warned about (once per process at WARNING, then at DEBUG).
_WARNED: set[str] = set()
#: The pydantic warning that serializing a raw tool dict causes (and nothing else).
_TOOL_WARNING = (
    r"Pydantic serializer warnings:\s+PydanticSerializationUnexpectedValue\(Expected `Function`"
)

CAPABILITIES = Capabilities(
    native_schema=True,
    tools=True,
    strict_tools=False,
    streaming=True,
    streaming_tools=True,
    media=True,
    dialect="ollama",
)


@memoize_by_identity
def ollama_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ollama`` dialect: the canonical schema, copied, as llama.cpp's grammar takes it."""
    copied: dict[str, Any] = json.loads(json.dumps(schema))
    return copied


# -- request ------------------------------------------------------------------------------------


def build(request: Request) -> dict[str, Any]:
    """The ``chat()`` keyword arguments, without ``stream`` (the caller decides)."""
    tools = [_tool(t.name, t.description, t.parameters) for t in request.tools]
    spec = request.output
    fmt: Any = None
    if spec is not None:
        if spec.mode == "native":
            fmt = ollama_schema(spec.schema)
        elif spec.mode == "tool":
            # Ollama cannot force a tool call: the tool is offered, a text answer is read too.
            tools.append(_tool(spec.name, "Give your final answer with this tool.", spec.schema))
        logger.debug("ollama %s: output mode %s", request.model, spec.mode)
    options: dict[str, Any] = {}
    settings = request.settings
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        options["num_predict"] = settings.max_tokens
    kwargs: dict[str, Any] = {"messages": messages(request)}
    if tools:
        kwargs["tools"] = tools
    if fmt is not None:
        kwargs["format"] = fmt
    if settings.extra:
        _apply_extra(kwargs, options, settings.extra)
    if options:
        kwargs["options"] = options
    return kwargs


def _tool(name: str, description: str, parameters: Mapping[str, Any]) -> ollama.Tool:
    import ollama

    _quiet_tool_warning()
    function: Any = {
        "name": name,
        "description": description,
        "parameters": ollama_schema(parameters),
    }
    return ollama.Tool.model_construct(type="function", function=function)


def _quiet_tool_warning() -> None:
    """Silence the one pydantic warning that a verbatim tool dict causes (see module docstring).

    Checked on every request, and put first again when something went before it: warnings
    blocks (pytest's, a user's) restore the filter list when they exit, and an earlier
    ``simplefilter("error")`` would turn the warning into an exception inside the SDK.
    """
    first = warnings.filters[0] if warnings.filters else None
    if (
        first is not None
        and first[0] == "ignore"
        and getattr(first[1], "pattern", None) == _TOOL_WARNING
    ):
        return
    warnings.filterwarnings("ignore", message=_TOOL_WARNING, category=UserWarning)


def _apply_extra(kwargs: dict[str, Any], options: dict[str, Any], extra: Mapping[str, Any]) -> None:
    import ollama

    option_names = set(ollama.Options.model_fields)
    for key, value in extra.items():
        if key == "options" and isinstance(value, Mapping):
            options.update(value)
        elif key in CHAT_EXTRA:
            kwargs[key] = value
        elif key in option_names:
            options[key] = value
        else:
            level = logging.DEBUG if key in _WARNED else logging.WARNING
            _WARNED.add(key)
            logger.log(
                level,
                "ALLOY_EXTRA_JSON key %r is left out: the ollama SDK's chat() cannot send it "
                "(use 'options' for model options)",
                key,
            )


def messages(request: Request) -> list[dict[str, Any]]:
    """The conversation as ``/api/chat`` messages (system, user, assistant, tool)."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message, ModelTurn):
            assistant = _assistant(message.parts)
            if assistant is not None:
                out.append(assistant)
            continue
        pending: dict[str, Any] | None = None
        for part in message.parts:
            if isinstance(part, ToolResult):
                pending = None
                out.append({"role": "tool", "content": part.content, "tool_name": part.name})
                continue
            if pending is None:
                pending = {"role": "user", "content": ""}
                out.append(pending)
            _add_user_part(pending, part)
    return out


def _add_user_part(message: dict[str, Any], part: Part) -> None:
    if isinstance(part, (Text, RetryPrompt)):
        text = part.text if isinstance(part, Text) else REASK_PROMPT.format(errors=part.errors)
        message["content"] = f"{message['content']}\n\n{text}" if message["content"] else text
    elif isinstance(part, Media):
        if part.kind != "image" or part.data is None:
            what = "image URLs" if part.kind == "image" else f"{part.kind} documents"
            raise ConfigurationError(
                f"Ollama takes inline images only, not {what}: pass the image's bytes instead"
            )
        message.setdefault("images", []).append(base64.b64decode(part.data))
    # Opaque parts from other providers have nothing to say to Ollama.


def _assistant(parts: tuple[Part, ...]) -> dict[str, Any] | None:
    text = "".join(p.text for p in parts if isinstance(p, Text))
    calls = [
        {"function": {"name": p.name, "arguments": dict(p.args)}}
        for p in parts
        if isinstance(p, ToolCall)
    ]
    if not text and not calls:
        return None  # an empty answer; the prompt that follows says what is missing
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return message


# -- response -----------------------------------------------------------------------------------


def parse(response: ollama.ChatResponse) -> Response:
    """A whole ``ChatResponse`` as a normalized Response (the same one its stream gives)."""
    message = response.message
    parts: list[Part] = [Text(message.content)] if message.content else []
    for index, call in enumerate(message.tool_calls or ()):
        parts.append(ToolCall(f"call_{index}", call.function.name, dict(call.function.arguments)))
    finish = finish_reason(response.done_reason)
    if finish == "stop" and len(parts) > bool(message.content):
        finish = "tool_calls"
    if response.done:
        usage = Usage(response.prompt_eval_count or 0, response.eval_count or 0, 0, 0, 1)
    else:
        usage = Usage(requests=1)
    details = {"done_reason": response.done_reason} if response.done_reason else {}
    return Response(tuple(parts), usage, finish, response.model or None, None, None, details)


def parse_body(body: Mapping[str, Any]) -> Response:
    """A raw ``/api/chat`` JSON body (e.g. a recording) as a normalized Response."""
    import ollama

    return parse(ollama.ChatResponse.model_validate(dict(body)))


class StreamState:
    """Folds NDJSON chunks (or one whole reply) into one Response."""

    def __init__(self) -> None:
        self.acc = StreamAccumulator()
        self.calls = 0
        self.done = False
        self.done_reason: str | None = None

    def feed(self, chunk: ollama.ChatResponse) -> list[TextDelta | ToolCallDelta]:
        events: list[TextDelta | ToolCallDelta] = []
        acc = self.acc
        acc.model = chunk.model or acc.model
        message = chunk.message
        if message.content:
            events.append(acc.add(TextDelta(message.content)))
        for call in message.tool_calls or ():
            call_id = f"call_{self.calls}"
            events.append(
                acc.add_call(self.calls, call_id, call.function.name, dict(call.function.arguments))
            )
            self.calls += 1
        if chunk.done:
            self.done = True
            self.done_reason = chunk.done_reason
            acc.usage = Usage(
                input_tokens=chunk.prompt_eval_count or 0,
                output_tokens=chunk.eval_count or 0,
                requests=1,
            )
        return events

    def response(self, *, require_done: bool = True) -> Response:
        if require_done and not self.done:
            raise ProviderConnectionError(
                "ollama stream ended before its final (done) line", provider=PROVIDER
            )
        finish = finish_reason(self.done_reason)
        self.acc.finish_reason = None if finish == "stop" else finish
        if not self.done:
            self.acc.usage = Usage(requests=1)
        response = self.acc.response()
        if self.done_reason:
            return Response(
                response.parts,
                usage=response.usage,
                finish_reason=response.finish_reason,
                model=response.model,
                provider_details={"done_reason": self.done_reason},
            )
        return response


def finish_reason(done_reason: str | None) -> FinishReason:
    """``done_reason`` "length" is a truncation; everything else ends normally."""
    return "length" if done_reason == "length" else "stop"


# -- the model ----------------------------------------------------------------------------------


def _transport_classes() -> tuple[type[BaseException], type[BaseException]]:
    import httpx

    return httpx.TimeoutException, httpx.TransportError


class OllamaModel(SDKModel):
    """An Ollama model through ``ollama.Client``; see the module docstring for what is sent."""

    provider = PROVIDER
    capabilities = CAPABILITIES
    key_env = ("OLLAMA_API_KEY",)

    def make_client(self, *, asynchronous: bool) -> Any:
        import httpx
        import ollama

        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else None
        if asynchronous:
            async_transport = _AsyncTimeoutPerRequest(httpx.AsyncHTTPTransport())
            return ollama.AsyncClient(
                host=self.base_url, headers=headers, transport=async_transport
            )
        transport = _TimeoutPerRequest(httpx.HTTPTransport())
        return ollama.Client(host=self.base_url, headers=headers, transport=transport)

    def client_keys(self, client: Any) -> tuple[str, ...]:
        return ()  # the explicit key and OLLAMA_API_KEY are all it sends

    def map_error(self, exc: Exception) -> ProviderError | None:
        import ollama

        timeout, transport = _transport_classes()
        if isinstance(exc, ollama.ResponseError):
            message = str(exc.error)
            if exc.status_code == -1:
                return ServerError(
                    self.redact(f"ollama reported an error in the stream: {message}"),
                    provider=PROVIDER,
                )
            return self.status_error(exc.status_code, message)
        if isinstance(exc, timeout):
            return ProviderTimeoutError(
                "ollama request timed out (raise timeout= if the model needs longer)",
                provider=PROVIDER,
            )
        if isinstance(exc, (ConnectionError, transport)):
            return ProviderConnectionError(
                self.redact(f"ollama connection failed: {type(exc).__name__}: {exc}"),
                provider=PROVIDER,
            )
        if isinstance(exc, json.JSONDecodeError):
            return ProviderConnectionError(
                f"ollama response broke off mid-line (not JSON): {exc}", provider=PROVIDER
            )
        return None

    # -- calls --
    def _kwargs(self, request: Request) -> dict[str, Any]:
        kwargs = build(request)
        kwargs["model"] = self.model_id
        return kwargs

    def request(self, request: Request) -> Response:
        kwargs = self._kwargs(request)
        chat = self.client().chat
        token = _TIMEOUT.set((request.settings.timeout,))
        try:
            reply = self.call(chat, stream=False, **kwargs)
        finally:
            _TIMEOUT.reset(token)
        return self.read(parse, reply)

    async def arequest(self, request: Request) -> Response:
        kwargs = self._kwargs(request)
        chat = self.aclient().chat
        token = _TIMEOUT.set((request.settings.timeout,))
        try:
            reply = await self.acall(chat, stream=False, **kwargs)
        finally:
            _TIMEOUT.reset(token)
        return self.read(parse, reply)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        kwargs = self._kwargs(request)
        state = StreamState()
        chunks = self.call(self.client().chat, stream=True, **kwargs)
        for chunk in self.iterate(_Timed(chunks, request.settings.timeout)):
            yield from self.read(state.feed, chunk)
        yield Done(self.read(StreamState.response, state))

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        kwargs = self._kwargs(request)
        state = StreamState()
        timeout = request.settings.timeout
        with _request_timeout(timeout):
            chunks = await self.acall(self.aclient().chat, stream=True, **kwargs)
        async for chunk in self.aiterate(_ATimed(chunks, timeout)):
            for event in self.read(state.feed, chunk):
                yield event
        yield Done(self.read(StreamState.response, state))


# -- one client, a timeout per request ----------------------------------------------------------

#: The timeout of the request being sent in this context; unset outside ``_request_timeout``.
_TIMEOUT: ContextVar[tuple[float | None] | None] = ContextVar("alloy_ollama_timeout", default=None)


@contextmanager
def _request_timeout(seconds: float | None) -> Iterator[None]:
    """Requests sent inside get ``seconds`` as their timeout (None: none at all)."""
    token = _TIMEOUT.set((seconds,))
    try:
        yield
    finally:
        _TIMEOUT.reset(token)


def _apply_timeout(request: Any) -> None:
    chosen = _TIMEOUT.get()
    if chosen is not None:
        request.extensions["timeout"] = _timeout_extension(chosen[0])


@functools.lru_cache(maxsize=64)
def _timeout_extension(seconds: float | None) -> dict[str, float | None]:
    """httpx's per-request timeout extension for ``seconds`` (shared: httpx only reads it)."""
    import httpx

    extension: dict[str, float | None] = httpx.Timeout(seconds).as_dict()
    return extension


class _TimeoutPerRequest:
    """An httpx transport that gives each request its call's timeout, then sends it."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def handle_request(self, request: Any) -> Any:
        _apply_timeout(request)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _TimeoutPerRequest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _AsyncTimeoutPerRequest:
    """Async twin of :class:`_TimeoutPerRequest`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        _apply_timeout(request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AsyncTimeoutPerRequest:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Timed:
    """The SDK's chunk iterator, each step run with the request's timeout (the SDK sends the
    request on the first step)."""

    def __init__(self, chunks: Iterator[Any], timeout: float | None) -> None:
        self._chunks = iter(chunks)
        self._timeout = timeout

    def __iter__(self) -> _Timed:
        return self

    def __next__(self) -> Any:
        with _request_timeout(self._timeout):
            return next(self._chunks)


class _ATimed:
    """Async twin of :class:`_Timed`."""

    def __init__(self, chunks: AsyncIterator[Any], timeout: float | None) -> None:
        self._chunks = chunks.__aiter__()
        self._timeout = timeout

    def __aiter__(self) -> _ATimed:
        return self

    async def __anext__(self) -> Any:
        with _request_timeout(self._timeout):
            return await self._chunks.__anext__()


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> OllamaModel:
    """Registry factory: ``ollama:<model>``, e.g. ``ollama:llama3.2``."""
    if not model_id:
        raise ConfigurationError("Name the Ollama model: 'ollama:<model>', e.g. 'ollama:llama3.2'")
    return OllamaModel(model_id, api_key=api_key, base_url=base_url or None)
