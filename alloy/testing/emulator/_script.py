"""The script: queued replies and faults per provider, and the log of requests received.

Tests describe the conversation they want ("first a 429, then two tool calls, then text") by
queueing the values defined here; the emulator consumes one per request, in order.  Replies are
provider-neutral (they resolve to a ``Turn``); faults describe a failure the provider module
turns into that provider's own error envelope, or a transport failure (cut, slow, dropped).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union, get_args

from ...providers.offline import sample_value
from ._call import Call, ReplyToolCall, Turn
from ._http import JSON, NDJSON, SSE

#: The families of HTTP APIs the emulator plays, one script queue each ("openai" serves
#: Responses, Chat Completions and Azure; "anthropic" Messages and Claude on the clouds).
APIFamily = Literal["openai", "anthropic", "gemini", "ollama", "bedrock"]
PROVIDERS: tuple[APIFamily, ...] = ("openai", "anthropic", "gemini", "ollama", "bedrock")

DEFAULT_TEXT = "Hello from the alloy emulator."

# -- replies -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplyText:
    """The model answers with this text."""

    text: str


@dataclass(frozen=True)
class ReplyJson:
    """The model answers with this value serialised as JSON text (a structured output)."""

    value: Any


@dataclass(frozen=True, init=False)
class ReplyToolCalls:
    """The model calls one or more tools in one turn (several means parallel calls).

    Each call is a :class:`ReplyToolCall` or a ``(name, arguments)`` pair (``arguments=None``
    generates them from the tool's schema); ``text`` adds a text part before the calls, as
    Claude often does.
    """

    calls: tuple[ReplyToolCall, ...]
    text: str | None

    def __init__(
        self, *calls: ReplyToolCall | tuple[str, Mapping[str, Any] | None], text: str | None = None
    ) -> None:
        resolved = tuple(c if isinstance(c, ReplyToolCall) else ReplyToolCall(*c) for c in calls)
        if not resolved:
            raise ValueError("ReplyToolCalls needs at least one call")
        object.__setattr__(self, "calls", resolved)
        object.__setattr__(self, "text", text)


@dataclass(frozen=True)
class ReplyRefusal:
    """The model refuses (OpenAI refusal part, Anthropic ``stop_reason: refusal``, Gemini SAFETY)."""

    message: str = "I'm sorry, but I can't help with that."


@dataclass(frozen=True)
class ReplyMaxTokens:
    """The answer stops at the token limit; ``text`` defaults to half of the normal answer."""

    text: str | None = None


@dataclass(frozen=True)
class ReplyMalformedJson:
    """The model answers with text that is not valid JSON, with a normal finish."""

    text: str = '{"answer": 42,,}'


@dataclass(frozen=True)
class ReplyEmpty:
    """The model produces no output at all (no text part, no tool call)."""


@dataclass(frozen=True)
class ReplyAuto:
    """The default answer: a forced tool call, a schema-valid value, or plain text."""


@dataclass(frozen=True)
class ReplyRaw:
    """Exact bytes to send back, e.g. a recorded provider response.

    ``frames`` (when given) are streamed one chunk each; otherwise ``body`` is sent whole.
    """

    status: int = 200
    body: bytes = b""
    content_type: str = JSON
    frames: tuple[bytes, ...] | None = None
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json(cls, value: Any, status: int = 200, content_type: str = JSON) -> ReplyRaw:
        """A JSON body, sent as-is."""
        return cls(status, json.dumps(value).encode(), content_type)

    @classmethod
    def sse(cls, text: str, status: int = 200, content_type: str = SSE) -> ReplyRaw:
        """Server-sent events; each event goes out as its own flushed chunk."""
        return cls(
            status, content_type=content_type, frames=tuple(f.encode() for f in split_events(text))
        )

    @classmethod
    def ndjson(
        cls, lines: Iterable[Any], status: int = 200, content_type: str = NDJSON
    ) -> ReplyRaw:
        """Newline-delimited JSON, one chunk per line."""
        frames = tuple(json.dumps(line).encode() + b"\n" for line in lines)
        return cls(status, content_type=content_type, frames=frames)


def split_events(text: str) -> list[str]:
    """Split SSE text into events, each keeping its blank-line terminator (LF or CRLF)."""
    events: list[str] = []
    start = 0
    index = 0
    while index < len(text):
        for sep in ("\r\n\r\n", "\n\n"):
            if text.startswith(sep, index):
                events.append(text[start : index + len(sep)])
                index += len(sep)
                start = index
                break
        else:
            index += 1
    if start < len(text):
        events.append(text[start:])
    return events


# -- faults --------------------------------------------------------------------------------
#
# Every fault that carries a message takes ``echo_key=True``: the message then repeats the key
# the request presented, as OpenAI-compatible servers and proxies do, so tests can check that
# no key survives into what the client shows.


@dataclass(frozen=True)
class HttpError:
    """An HTTP error with the provider's own error envelope.

    ``retry_after`` (seconds) and ``retry_after_ms`` become the ``retry-after`` /
    ``retry-after-ms`` headers the OpenAI and Anthropic SDKs honour.
    """

    status: int
    message: str | None = None
    retry_after: float | None = None
    retry_after_ms: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    echo_key: bool = False


@dataclass(frozen=True)
class RateLimited:
    """429 with ``retry-after-ms`` (10 ms by default, so SDK retries stay fast in tests).

    Anthropic honours ``retry-after`` without a cap, so keep ``retry_after`` small.
    """

    retry_after_ms: int | None = 10
    retry_after: float | None = None
    message: str | None = None
    echo_key: bool = False


@dataclass(frozen=True)
class Overloaded:
    """The provider is overloaded: Anthropic 529 ``overloaded_error``, 503 elsewhere."""

    retry_after_ms: int | None = None
    message: str | None = None
    echo_key: bool = False


@dataclass(frozen=True)
class Unauthorized:
    """401: the key was refused."""

    message: str | None = None
    echo_key: bool = False


@dataclass(frozen=True)
class SchemaRejected:
    """400 with the provider's "invalid schema" error, whatever schema was sent."""

    message: str | None = None
    echo_key: bool = False


@dataclass(frozen=True)
class CutStream:
    """Serve ``reply`` but close the connection after ``after`` events (or half the body)."""

    after: int = 2
    reply: Reply | None = None


@dataclass(frozen=True)
class StreamError:
    """Serve ``reply`` as a stream, but send the provider's in-stream error after ``after`` events."""

    after: int = 2
    message: str | None = None
    reply: Reply | None = None
    echo_key: bool = False


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before answering with ``then`` (the default answer if ``None``)."""

    seconds: float
    then: Reply | Fault | None = None


@dataclass(frozen=True)
class Disconnect:
    """Close the connection without sending any response."""


@dataclass(frozen=True)
class Mutated:
    """Serve ``reply`` (the default answer if ``None``) rendered as usual, then passed through
    ``mutate``: it receives the body's frames (one frame for a whole reply, one per event or
    line for a stream) and returns the frames to send. For fuzzing what clients can read.
    """

    mutate: Callable[[tuple[bytes, ...]], tuple[bytes, ...]]
    reply: Reply | None = None


Reply = Union[
    ReplyText,
    ReplyJson,
    ReplyToolCalls,
    ReplyRefusal,
    ReplyMaxTokens,
    ReplyMalformedJson,
    ReplyEmpty,
    ReplyAuto,
    ReplyRaw,
]
Fault = Union[
    Mutated,
    HttpError,
    RateLimited,
    Overloaded,
    Unauthorized,
    SchemaRejected,
    CutStream,
    StreamError,
    Slow,
    Disconnect,
]
Item = Union[Reply, Fault]

_REPLY_TYPES: tuple[type, ...] = get_args(Reply)
_ITEM_TYPES: tuple[type, ...] = get_args(Item)  # the unions flatten: every reply and fault


def reaches_model(item: Item | None) -> bool:
    """True when ``item`` ends in a model answer, so the request's schema must pass first."""
    if item is None or isinstance(item, _REPLY_TYPES):
        return True
    if isinstance(item, Slow):
        return reaches_model(item.then)
    return isinstance(item, (CutStream, StreamError, Mutated))


def resolve_turn(reply: Reply, call: Call, *, seed: int, default_text: str) -> Turn:
    """Turn a queued reply (never ``ReplyRaw``) into the concrete answer for this request."""
    if isinstance(reply, ReplyText):
        return Turn(text=reply.text)
    if isinstance(reply, ReplyJson):
        return Turn(text=json.dumps(reply.value))
    if isinstance(reply, ReplyToolCalls):
        calls = tuple(
            c if c.arguments is not None else replace(c, arguments=_sample_args(call, c.name, seed))
            for c in reply.calls
        )
        return Turn(text=reply.text, tool_calls=calls)
    if isinstance(reply, ReplyRefusal):
        return Turn(refusal=reply.message, finish="refusal")
    if isinstance(reply, ReplyMaxTokens):
        text = reply.text
        if text is None:
            full = resolve_turn(ReplyAuto(), call, seed=seed, default_text=default_text)
            source = (
                full.text
                if full.text is not None
                else (full.tool_calls[0].arguments_json if full.tool_calls else default_text)
            )
            text = source[: max(1, len(source) // 2)] if len(source) > 1 else ""
        return Turn(text=text, finish="length")
    if isinstance(reply, ReplyMalformedJson):
        return Turn(text=reply.text)
    if isinstance(reply, ReplyEmpty):
        return Turn()
    if isinstance(reply, ReplyAuto):
        return _auto_turn(call, seed, default_text)
    raise TypeError(f"cannot resolve {reply!r} into a turn")


def _sample_args(call: Call, name: str, seed: int) -> dict[str, Any]:
    """Arguments generated from the schema of the request's tool ``name`` (``{}`` if unknown)."""
    tool = call.tool(name)
    schema = dict(tool.schema) if tool and tool.schema else {"type": "object"}
    args = sample_value(schema, seed=seed)
    return args if isinstance(args, dict) else {}


def _auto_turn(call: Call, seed: int, default_text: str) -> Turn:
    """Forced tool → a call with sampled arguments; schema → a sampled value; else text."""
    if call.forced_tool is not None:
        name = call.forced_tool
        return Turn(tool_calls=(ReplyToolCall(name, _sample_args(call, name, seed)),))
    if call.schema is not None:
        return Turn(text=json.dumps(sample_value(dict(call.schema), seed=seed)))
    if call.json_mode:
        return Turn(text="{}")
    return Turn(text=default_text)


# -- queues and the request log --------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One request the emulator received, for assertions.

    ``body`` is the parsed JSON body (``None`` if there was none or it did not parse),
    ``headers`` has lower-cased names, ``provider`` is ``None`` for unknown routes, and ``call``
    is the provider-neutral reading of the body (schema, tools, tool results) when it parsed.
    """

    provider: APIFamily | None
    api: str | None
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: Any
    raw_body: bytes
    call: Call | None = None
    received_at: float = field(default_factory=time.time)

    def header(self, name: str) -> str | None:
        """A header value by case-insensitive name."""
        return self.headers.get(name.lower())

    @property
    def retry_count(self) -> int | None:
        """``x-stainless-retry-count`` as an int (OpenAI and Anthropic SDKs send it)."""
        value = self.headers.get("x-stainless-retry-count")
        return int(value) if value is not None and value.isdigit() else None

    @property
    def model(self) -> str | None:
        """The requested model name."""
        return self.call.model if self.call else None

    @property
    def stream(self) -> bool | None:
        """Whether a stream was asked for (from the body, or the path for Gemini)."""
        return self.call.stream if self.call else None


class Script:
    """Per-provider FIFO queues of replies and faults plus the request log; thread-safe."""

    def __init__(self, families: Iterable[str] = PROVIDERS) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Item]] = {family: deque() for family in families}
        self._log: list[RecordedRequest] = []

    def push(self, provider: APIFamily, items: Sequence[Item]) -> None:
        """Queue ``items`` for ``provider``, after what is already queued."""
        queue = self._queue(provider)
        for item in items:
            if not isinstance(item, _ITEM_TYPES):
                raise TypeError(f"cannot queue {item!r}: expected a reply or a fault")
        with self._lock:
            queue.extend(items)

    def take(self, provider: str, *, keep_replies: bool = False) -> Item | None:
        """Pop the next item; with ``keep_replies`` a reply at the head is returned but kept.

        That is how a request whose schema the provider rejects leaves the scripted answer for
        the next, corrected request, while a queued fault is still consumed.
        """
        with self._lock:
            queue = self._queues.get(provider)
            if not queue:
                return None
            head = queue[0]
            if keep_replies and reaches_model(head):
                return head
            return queue.popleft()

    def pending(self, provider: APIFamily) -> list[Item]:
        """What is still queued for ``provider``."""
        with self._lock:
            return list(self._queue(provider))

    def record(self, request: RecordedRequest) -> None:
        """Append a request to the log."""
        with self._lock:
            self._log.append(request)

    def requests(self) -> list[RecordedRequest]:
        """A copy of the log, so callers can iterate while requests keep arriving."""
        with self._lock:
            return list(self._log)

    def reset(self) -> None:
        """Forget queued items and recorded requests."""
        with self._lock:
            for queue in self._queues.values():
                queue.clear()
            self._log.clear()

    def _queue(self, provider: str) -> deque[Item]:
        """The queue of a known provider (a typo in the name fails loudly)."""
        if provider not in self._queues:
            raise ValueError(
                f"unknown provider {provider!r}; expected one of {', '.join(self._queues)}"
            )
        return self._queues[provider]
