"""Ollama through the ``ollama`` SDK: the native ``/api/chat`` API.

What goes on the wire, and why:

- The body is built as plain JSON and sent through the SDK client's own request helpers
  (``Client._request_raw`` for a whole reply, ``Client._request`` for a stream), which give its
  host handling, headers, auth and errors. They are private, and stay because no public path
  sends the same request: ``chat()``, the only public one, passes tools through its ``Tool``
  model, which knows only a few property keywords and silently drops nested
  ``properties``/``required``, ``anyOf``, ``$ref``, ``additionalProperties``, ``format``,
  bounds... (``providers.md`` 1.5); it takes no per-request timeout (only a client's, while a
  call's deadline gives each attempt its own); and it returns a ``ChatResponse`` model, with no
  raw-reply API. Building that model costs more than alloy's whole reading of the JSON, and
  that margin keeps Ollama's warm ratio within its target (figures in the benchmark report's
  findings). The emulator tests
  drive the helpers through the real SDK on every change, so an SDK release that moves them
  fails the suite.
- Structured output is ``format=<JSON Schema>`` (the ``ollama`` dialect: the canonical schema
  as is, since llama.cpp's grammar conversion takes what alloy emits), also when tools are
  offered. Forced-tool output mode offers the output as a tool, but Ollama has no way to force
  a tool call, so the model may also answer in text (read as the answer all the same).
- Tools keep their full parameter schemas. Tool calls come back without ids: they get
  ``call_<index>``. Results go back as ``role: tool`` messages with ``tool_name`` (the API has no
  call id).
- Images go as base64 in ``images``; Ollama takes no image URLs and no PDFs, which are a
  ConfigurationError.
- ``reasoning_effort`` is ``think``: ``"none"`` (or 0) is false, low/medium/high go as they
  are; other levels and budgets in tokens are refused (:data:`._efforts.OLLAMA`). The server keeps the loaded model's context
  between calls by itself, so ``prompt_cache`` adds nothing; ``prompt_cache_key`` and
  ``cached_content`` are other providers' and refused.
- Settings: ``options.temperature`` and ``options.num_predict`` (max tokens); ``timeout`` is
  the request's own (httpx's per-request timeout). ALLOY_EXTRA_JSON: ``options`` merges into the
  options, keys that are model options (``top_k``, ``num_ctx``, ``seed``...) go into
  ``options``, and any other key (``think``, ``keep_alive``...) is merged into the body.
- Host: ``base_url`` or ``OLLAMA_HOST`` (read by the SDK). No key is needed; an ``api_key``
  option (or ``OLLAMA_API_KEY``, read by the SDK) is sent as a bearer token, as Ollama's cloud
  wants. The SDK does not retry: the engine does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from .._model import CacheKeyParts
from .._profile import Profile
from .._stream_accumulator import StreamAccumulator
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
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
)
from ._base import Reply, SDKModel, Streamed
from ._efforts import OLLAMA
from ._parts import misplaced
from ._settings import refuse_cache_names

if TYPE_CHECKING:
    pass

__all__ = ["OllamaModel", "build", "create", "ollama_schema", "parse", "parse_body"]

logger = logging.getLogger("alloy.providers.ollama")

PROVIDER = "ollama"
CHAT_METHOD, CHAT_PATH = "POST", "/api/chat"

#: Ollama cannot be made to call a tool (``tool_choice`` is not in its API).
CAPABILITIES = Profile(tool_choice=frozenset({"auto"}))


def ollama_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ollama`` dialect: the canonical schema, copied, as llama.cpp's grammar takes it."""
    copied: dict[str, Any] = json.loads(json.dumps(schema))
    return copied


# -- request ------------------------------------------------------------------------------------


def build(request: Request, model_id: str, *, stream: bool = False) -> dict[str, Any]:
    """The ``/api/chat`` body for ``request``, as plain JSON."""
    tools = [_tool(t.name, t.description, t.wire_parameters) for t in request.tools]
    spec = request.output
    fmt: Any = None
    if spec is not None:
        if spec.mode == "native":
            fmt = dict(spec.wire_schema)
        elif spec.mode == "tool":
            # Ollama cannot force a tool call: the tool is offered, a text answer is read too.
            tools.append(
                _tool(spec.name, "Give your final answer with this tool.", spec.wire_schema)
            )
        logger.debug("ollama %s: output mode %s", model_id, spec.mode)
    options: dict[str, Any] = {}
    settings = request.settings
    refuse_cache_names(settings, "Ollama")
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        options["num_predict"] = settings.max_tokens
    # Keys in the order, and with the empty ``tools`` list, the SDK's own chat() sends.
    body: dict[str, Any] = {
        "model": model_id,
        "messages": messages(request),
        "tools": tools,
        "stream": stream,
    }
    if fmt is not None:
        body["format"] = fmt
    if settings.reasoning_effort is not None:
        body["think"] = think(model_id, settings.reasoning_effort)
    if settings.extra:
        _apply_extra(body, options, settings.extra)
    if options:
        body["options"] = options
    return body


def think(model_id: str, effort: str | int) -> bool | str:
    """Ollama's ``think`` for the ``reasoning_effort`` option (:data:`~._efforts.OLLAMA`):
    ``"none"`` (or 0) turns thinking off; low, medium and high are levels (gpt-oss) that other
    thinking models read as on."""
    effort = OLLAMA.check(model_id, effort)
    return False if effort == "none" else str(effort)


def _tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": dict(parameters),
        },
    }


def _apply_extra(body: dict[str, Any], options: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """ALLOY_EXTRA_JSON: model options (the fields of the SDK's ``Options``) into ``options``,
    anything else into the body."""
    import ollama

    for key, value in extra.items():
        if key == "options" and isinstance(value, Mapping):
            options.update(value)
        elif key in ollama.Options.model_fields:
            options[key] = value
        else:
            body[key] = value


def messages(request: Request) -> list[dict[str, Any]]:
    """The conversation as ``/api/chat`` messages (system, user, assistant, tool)."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        match message:
            case ModelTurn():
                assistant = _assistant(message.parts)
                if assistant is not None:
                    out.append(assistant)
            case UserTurn():
                _user_messages(out, message.parts)
            case _:
                assert_never(message)
    return out


def _user_messages(out: list[dict[str, Any]], parts: tuple[Part, ...]) -> None:
    """Tool results as ``role: tool`` messages; other parts join one user message between them."""
    pending: dict[str, Any] | None = None
    for part in parts:
        if isinstance(part, ToolResult):
            pending = None
            out.append({"role": "tool", "content": part.content, "tool_name": part.name})
            continue
        if pending is None:
            pending = {"role": "user", "content": ""}
            out.append(pending)
        _add_user_part(pending, part)


def _add_user_part(message: dict[str, Any], part: Part) -> None:
    match part:
        case Text() | RetryPrompt():
            text = part.text if isinstance(part, Text) else part.render()
            message["content"] = f"{message['content']}\n\n{text}" if message["content"] else text
        case Media():
            if part.kind != "image" or part.data is None:
                what = "image URLs" if part.kind == "image" else f"{part.kind} documents"
                raise ConfigurationError(
                    f"Ollama takes inline images only, not {what}: pass the image's bytes instead"
                )
            message.setdefault("images", []).append(part.data)
        case Opaque():
            pass  # other providers' data has nothing to say to Ollama
        case ToolCall():
            raise misplaced(part, "user")
        case ToolResult():  # sent as its own message by the caller
            raise AssertionError("tool results are sent as role: tool messages")
        case _:
            assert_never(part)


def _assistant(parts: tuple[Part, ...]) -> dict[str, Any] | None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case Text():
                texts.append(part.text)
            case ToolCall():
                calls.append({"function": {"name": part.name, "arguments": dict(part.args)}})
            case Opaque():
                pass
            case Media() | ToolResult() | RetryPrompt():
                raise misplaced(part, "model")
            case _:
                assert_never(part)
    text = "".join(texts)
    if not text and not calls:
        return None  # an empty answer; the prompt that follows says what is missing
    # Empty fields are left out, as the SDK's own message model leaves them out.
    message: dict[str, Any] = {"role": "assistant"}
    if text:
        message["content"] = text
    if calls:
        message["tool_calls"] = calls
    return message


# -- response -----------------------------------------------------------------------------------


def parse(body: Mapping[str, Any]) -> Response:
    """A whole ``/api/chat`` reply (its JSON) as a normalized Response, the one its stream gives."""
    state = StreamState()
    state.feed(body)
    return state.response(require_done=False)


parse_body = parse  # the name recordings were read with


class StreamState:
    """Folds NDJSON chunks (or one whole reply) into one Response."""

    def __init__(self) -> None:
        self.acc = StreamAccumulator()
        self.calls = 0
        self.done = False
        self.done_reason: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[TextDelta | ToolCallDelta]:
        events: list[TextDelta | ToolCallDelta] = []
        acc = self.acc
        acc.model = chunk.get("model") or acc.model
        message = chunk.get("message") or {}
        content = message.get("content")
        if content:
            events.append(acc.add(TextDelta(content)))
        for call in message.get("tool_calls") or ():
            function = call["function"]
            call_id = f"call_{self.calls}"
            events.append(
                acc.add_call(self.calls, call_id, function["name"], function.get("arguments") or {})
            )
            self.calls += 1
        if chunk.get("done"):
            self.done = True
            self.done_reason = chunk.get("done_reason")
            acc.usage = Usage(
                input_tokens=chunk.get("prompt_eval_count") or 0,
                output_tokens=chunk.get("eval_count") or 0,
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
        if self.done_reason:
            self.acc.provider_details = {"done_reason": self.done_reason}
        return self.acc.response()


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
    reply_field = ("message", dict)

    def make_client(self, *, asynchronous: bool) -> Any:
        import ollama

        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else None
        cls = ollama.AsyncClient if asynchronous else ollama.Client
        return cls(host=self.base_url, headers=headers)

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

    # -- the request and its SDK calls --
    def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
        return build(request, self.model_id, stream=stream)

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        """The body; its sampling options are in ``options`` (``temperature``, ``seed``)."""
        body = self.build(request, stream=stream)
        options = body.get("options")
        return CacheKeyParts(body, {**body, **options} if isinstance(options, dict) else body)

    @staticmethod
    def _options(request: Request) -> dict[str, Any]:
        """httpx's per-request options: the timeout, when one is set (else the client's: none)."""
        timeout = request.settings.timeout
        return {} if timeout is None else {"timeout": timeout}

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        response = client._request_raw(CHAT_METHOD, CHAT_PATH, json=body, **self._options(request))
        return Reply(self.json_body(response))

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        raw = client._request_raw(CHAT_METHOD, CHAT_PATH, json=body, **self._options(request))
        return Reply(self.json_body(await raw))

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        lines = client._request(
            dict, CHAT_METHOD, CHAT_PATH, json=body, stream=True, **self._options(request)
        )
        return Streamed(lines, lines.close)

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        lines = await client._request(
            dict, CHAT_METHOD, CHAT_PATH, json=body, stream=True, **self._options(request)
        )
        return Streamed(lines, lines.aclose)

    def parse(self, reply: Reply, request: Request) -> Response:
        return parse(reply.body)

    def stream_parser(self, request: Request) -> StreamState:
        return StreamState()


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> OllamaModel:
    """Registry factory: ``ollama:<model>``, e.g. ``ollama:llama3.2``."""
    if not model_id:
        raise ConfigurationError("Name the Ollama model: 'ollama:<model>', e.g. 'ollama:llama3.2'")
    return OllamaModel(model_id, api_key=api_key, base_url=base_url or None)
