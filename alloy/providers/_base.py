"""The adapter contract, and what every SDK-backed adapter shares: clients, errors, redaction.

An adapter subclasses :class:`SDKModel` and supplies plain parts; the four calls the drivers make
(``request``, ``arequest``, ``stream``, ``astream``) are written here, once:

- ``build(request, stream=...) -> dict``: the request as plain JSON (no SDK objects);
- ``send``/``asend`` (one SDK call each, for a whole reply) -> :class:`Reply`, and
  ``send_stream``/``asend_stream`` -> :class:`Streamed`; SDK objects are made only here;
- ``parse(reply, request) -> Response`` and ``stream_parser(request)``, whose ``feed(event)``
  returns deltas and whose ``response()`` gives the whole reply at the end;
- ``make_client`` and ``map_error``, the table from SDK exceptions to alloy's.

SDK retries are turned off (``max_retries=0``) because the engine retries transient failures
itself, the same way for every provider; leaving both on would multiply attempts.

Every SDK call and every reading of a reply goes through :meth:`SDKModel.call`,
:meth:`~SDKModel.acall`, :meth:`~SDKModel.iterate`/:meth:`~SDKModel.aiterate` or
:meth:`~SDKModel.read`, which let only alloy errors out. They raise *after* leaving the
``except`` block, so the SDK's exception is neither ``__cause__`` nor ``__context__`` of
alloy's: its request still holds the API key in its headers, and its body may echo it. Every
key the model's calls used (the ``api_key`` option and the key variables its SDK reads) is
redacted from what is copied over.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import SecretStr

from .._model import DEFAULT_ENDPOINT, CacheKeyParts, CacheScope
from .._nesting import MAX_NESTING
from .._profile import Profile
from .._types import (
    Done,
    RateLimits,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from ..errors import (
    AlloyError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
    UnreadableResponseError,
)

logger = logging.getLogger("alloy.providers")

T = TypeVar("T")

_SCHEMA_WORDS = re.compile(
    r"schema|response_format|output_config|text\.format|json_schema", re.IGNORECASE
)
_KEYLIKE = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{6,}|sk-ant-[A-Za-z0-9_\-]{6,}|AIza[0-9A-Za-z_\-]{10,})"
)
#: The beginning of a key-shaped token at the end of a text (what a cut may leave of one).
_KEY_START = re.compile(r"\b(?:sk-|AIza)[A-Za-z0-9_\-]*\Z")
#: How much of an unreadable reply an error shows.
SNIPPET_CHARS = 200
MASK = "***"


class _Keys:
    """The keys a Redactor knows. Kept in a slot behind a repr that names how many, never which,
    so ``vars(model)``, debuggers and error reporters that dump locals show no key."""

    __slots__ = ("plain",)

    def __init__(self, plain: tuple[str, ...] = ()) -> None:
        self.plain = plain

    def __repr__(self) -> str:
        return f"<{len(self.plain)} keys, redacted>"


class Redactor:
    """Removes known keys, and anything shaped like a provider key, from text.

    A key of :attr:`MIN_SECRET` characters or more is replaced wherever it appears (also in its
    JSON-escaped form). A shorter one is a placeholder, not a secret: no provider issues keys
    that short, and servers that take no key (Ollama, the emulator, a local proxy) are given
    ``"ollama"``, ``"test"`` or ``"e"``. Replacing those would garble ordinary words ("ollama
    pull llama3.2" read "*** pull llama3.2"), so they are left alone.
    """

    MIN_SECRET = 8

    def __init__(self) -> None:
        self._keys = _Keys()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Redactor of {self._keys!r}>"

    def add(self, *secrets: str | None) -> None:
        """Remember keys to redact (placeholders, empty and repeated ones are ignored)."""
        with self._lock:
            plain = set(self._keys.plain)
            for secret in secrets:
                if not isinstance(secret, str) or len(secret.strip()) < self.MIN_SECRET:
                    continue
                plain.add(secret)
                escaped = json.dumps(secret)[1:-1]
                if escaped != secret:
                    plain.add(escaped)
            # Longest first, so a key that contains another is replaced whole.
            self._keys = _Keys(tuple(sorted(plain, key=len, reverse=True)))

    def __call__(self, text: str) -> str:
        for secret in self._keys.plain:
            if secret in text:
                text = text.replace(secret, MASK)
        return _KEYLIKE.sub(MASK, text)

    def clip(self, text: str, limit: int = SNIPPET_CHARS) -> str:
        """``text`` redacted, then cut to ``limit`` characters.

        Redacting first is what keeps a key whole while it is recognised: cut first, a key that
        straddled the cut left its first half in the snippet. The cut text is also kept from
        ending in the beginning of a key, for text that was itself cut from something longer.
        """
        text = self(text)
        if len(text) <= limit:
            return text
        head = text[: limit - 1]
        for secret in self._keys.plain:
            for size in range(min(len(secret) - 1, len(head)), 0, -1):
                if head.endswith(secret[:size]):
                    head = head[:-size]
                    break
        return _KEY_START.sub("", head) + "…"


@dataclass(frozen=True, slots=True)
class Reply:
    """A whole reply as one SDK call returned it: what the parser reads, the request id, and
    the rate limits its headers stated (``_ratelimits.stated_limits``), which the Response
    carries on."""

    body: Any
    request_id: str | None = None
    rate_limits: RateLimits | None = None


@dataclass(frozen=True, slots=True)
class Streamed:
    """A stream one SDK call opened: its events (an iterable, or an async iterable for the
    async call), how to close it (for an async stream, a callable returning an awaitable), the
    request id when the HTTP response carries one, and the rate limits its headers stated
    (carried on by the stream's last Response)."""

    events: Any
    close: Callable[[], Any]
    request_id: str | None = None
    rate_limits: RateLimits | None = None


class StreamParser(Protocol):
    """Folds a stream's events into deltas as they come and one Response at the end."""

    def feed(self, event: Any) -> Sequence[TextDelta | ToolCallDelta]:
        """The deltas one event carries; raises the alloy error an in-stream failure means."""
        ...

    def response(self) -> Response:
        """The whole reply; raises ProviderConnectionError when the stream did not finish."""
        ...


class SDKModel:
    """Base for adapters that talk to a provider through its official SDK."""

    provider: ClassVar[str]
    #: Environment variables the SDK reads its key from; their values are redacted too.
    key_env: ClassVar[tuple[str, ...]] = ()
    #: Whether the provider states its rate limits in reply headers (``_ratelimits``), which
    #: paced runs wait for before sending more than one call.
    states_rate_limits: ClassVar[bool] = False
    #: The field every whole reply of the API holds, and its JSON type: a JSON object without it
    #: is not a reply (a proxy's error, another API's body) but a reply alloy cannot read.
    reply_field: ClassVar[tuple[str, type] | None] = None
    #: Levels of objects and arrays a request body may nest: deeper is refused before sending,
    #: the same limit alloy sets on the JSON a model sends (an SDK that converts a request
    #: recursively sets a lower one, where its own conversion would fail).
    max_request_nesting: ClassVar[int] = MAX_NESTING
    capabilities: Profile = Profile()
    #: Why the model has no credential yet (a hosted endpoint's key is not set): raised as a
    #: ConfigurationError when its first client is built, before any request, so the model
    #: can still be named and inspected without it (set by the registry).
    missing_key: str | None = None
    #: The variables that would give it one (a preset's own, ``GROQ_API_KEY``...): read again
    #: whenever a client is to be built, so a key set after the model was made is taken.
    missing_key_env: tuple[str, ...] = ()

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | SecretStr | None = None,
        base_url: str | None = None,
    ) -> None:
        self.model_id = model_id
        self.name = f"{self.provider}:{model_id}"
        # Kept as a SecretStr, so vars(model), debuggers and error reporters show no key.
        self._api_key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self.base_url = base_url
        self._lock = threading.Lock()
        self._sync_client: Any = None
        # Async SDK clients hold connections bound to one event loop: keep one per loop,
        # closed when that loop shuts down.
        self._async_clients: PerLoop[Any] = PerLoop(self.close_async_client)
        # Calls under way, and whether the clients are to be closed when the last one ends.
        self._calls = 0
        self._close_when_idle = False
        self.redact = Redactor()
        self.redact.add(self.api_key)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    @property
    def api_key(self) -> str | None:
        """The explicit key (the ``api_key`` option), or None to let the SDK read its variable."""
        return self._api_key.get_secret_value() if self._api_key is not None else None

    # -- what an adapter supplies --
    def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
        """The request as plain JSON: what the SDK call will send."""
        raise NotImplementedError

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        """What keys ``request`` in the response cache (``alloy._model.CacheKeyed``): the body
        :meth:`build` makes, its sampling options at its top (as OpenAI's and Anthropic's
        are). An adapter whose body keeps them further down, or carries what changes per
        attempt, says so here."""
        body = self.build(request, stream=stream)
        return CacheKeyParts(body, body)

    def cache_scope(self) -> CacheScope:
        """What every request of this model shares in its cache key: the endpoint (the base
        URL as configured, or the provider's own default) and the caller's own key, if any."""
        base_url = self.base_url
        return CacheScope(base_url.rstrip("/") if base_url else DEFAULT_ENDPOINT, self.api_key)

    def send(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        """One SDK call for a whole reply."""
        raise NotImplementedError

    async def asend(self, client: Any, body: dict[str, Any], request: Request) -> Reply:
        """Async twin of :meth:`send`, on the async client."""
        raise NotImplementedError

    def send_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        """One SDK call that opens a stream."""
        raise NotImplementedError

    async def asend_stream(self, client: Any, body: dict[str, Any], request: Request) -> Streamed:
        """Async twin of :meth:`send_stream`, on the async client."""
        raise NotImplementedError

    def parse(self, reply: Reply, request: Request) -> Response:
        """A whole reply as a Response."""
        raise NotImplementedError

    def stream_parser(self, request: Request) -> StreamParser:
        """A fresh parser for one stream of ``request``."""
        raise NotImplementedError

    # -- the calls, written once --
    def request(self, request: Request) -> Response:
        body = self.sendable(self.build(request, stream=False))
        with self.in_use():
            reply = self.dispatch(self.send, self.client(), body, request)
        return with_limits(
            self.read(self.parse, reply, request, request_id=reply.request_id), reply
        )

    async def arequest(self, request: Request) -> Response:
        body = self.sendable(self.build(request, stream=False))
        with self.in_use():
            reply = await self.adispatch(self.asend, self.aclient(), body, request)
        return with_limits(
            self.read(self.parse, reply, request, request_id=reply.request_id), reply
        )

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        body = self.sendable(self.build(request, stream=True))
        parser = self.stream_parser(request)
        with self.in_use():
            streamed = self.dispatch(self.send_stream, self.client(), body, request)
            request_id = streamed.request_id
            try:
                for event in self.iterate(streamed.events, request_id):
                    yield from self.read(parser.feed, event, request_id=request_id)
            finally:
                self.call(streamed.close)
        response = self.read(finished, parser, request_id, request_id=request_id)
        yield Done(with_limits(response, streamed))

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        body = self.sendable(self.build(request, stream=True))
        parser = self.stream_parser(request)
        with self.in_use():
            streamed = await self.adispatch(self.asend_stream, self.aclient(), body, request)
            request_id = streamed.request_id
            try:
                async for event in self.aiterate(streamed.events, request_id):
                    for delta in self.read(parser.feed, event, request_id=request_id):
                        yield delta
            finally:
                await self.acall(streamed.close)
        response = self.read(finished, parser, request_id, request_id=request_id)
        yield Done(with_limits(response, streamed))

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """Count a call under way, so that :meth:`close_clients` waits for it to end."""
        with self._lock:
            self._calls += 1
        try:
            yield
        finally:
            with self._lock:
                self._calls -= 1
                close = self._close_when_idle and self._calls == 0
                if close:
                    self._close_when_idle = False
            if close:
                self._close_now()

    def close_clients(self) -> None:
        """Close the SDK clients and their connections: now if no call is using them, else
        when the last call under way ends. A later call builds new ones.

        The model registry calls this on a model it lets go (see
        :func:`alloy.providers.get_model`); a command still holding the model keeps working.
        """
        with self._lock:
            if self._calls:
                self._close_when_idle = True
                return
        self._close_now()

    def _close_now(self) -> None:
        with self._lock:
            client, self._sync_client = self._sync_client, None
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # closing is best effort; the client is let go either way
                logger.debug("closing a client failed: %r", exc)
        self._async_clients.close_all()

    # -- clients, built once and reused --
    def make_client(self, *, asynchronous: bool) -> Any:
        """Build the SDK client (sync or async). Called once per model (and per event loop)."""
        raise NotImplementedError

    def client_keys(self, client: Any) -> Iterable[str | None]:
        """The key(s) a built client will send, for redaction (most SDKs keep ``api_key``)."""
        key = getattr(client, "api_key", None)
        return (key,) if isinstance(key, str) else ()

    async def close_async_client(self, client: Any) -> None:
        """Close an async client whose event loop is shutting down (its connections go too)."""
        close = getattr(client, "close", None)
        if close is not None:
            result = close()
            if isinstance(result, Awaitable):
                await result

    def new_client(self, make: Callable[[], Any]) -> Any:
        """Build a client through ``make``, learning every key it may send for redaction."""
        if self.missing_key is not None:
            key = next(filter(None, map(os.environ.get, self.missing_key_env)), None)
            if key is None:
                raise ConfigurationError(self.missing_key)
            self._api_key, self.missing_key = SecretStr(key), None
            self.redact.add(key)
        self.redact.add(*(os.environ.get(name) for name in self.key_env))
        client = self.call(make)
        self.redact.add(*self.client_keys(client))
        return client

    def client(self) -> Any:
        if self._sync_client is None:
            with self._lock:
                if self._sync_client is None:
                    self._sync_client = self.new_client(
                        lambda: self.make_client(asynchronous=False)
                    )
        return self._sync_client

    def connect(self) -> None:
        """Build the async client for the running event loop now (see ``alloy._model.Connects``)."""
        self.aclient()

    def aclient(self) -> Any:
        """The async SDK client for the running event loop, built once per loop."""
        return self._async_clients.get(
            lambda: self.new_client(lambda: self.make_client(asynchronous=True))
        )

    # -- errors, mapped once, here --
    def map_error(self, exc: Exception) -> AlloyError | None:
        """Translate an SDK exception into the alloy error tree (None: not the SDK's)."""
        raise NotImplementedError

    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run one SDK call; whatever it raises leaves as an alloy error, nothing chained."""
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            error = self.translate(exc)
        raise error

    async def acall(self, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
        """Async twin of :meth:`call`."""
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:
            error = self.translate(exc)
        raise error

    def sendable(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body``, once it is known the SDK can send it: a lone surrogate (no UTF-8 holds it)
        or nesting deeper than :attr:`max_request_nesting` is a ConfigurationError, raised
        before anything is sent, never retried, and not the provider's unreadable reply."""
        problem = unsendable(body, self.max_request_nesting)
        if problem is not None:
            raise ConfigurationError(
                f"{self.name}: the request cannot be sent, {problem}; nothing was sent"
            )
        return body

    def dispatch(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """:meth:`call` for the SDK call that sends a request: what the SDK raises while it still
        encodes the request (see :func:`not_sent`) is a ConfigurationError, not a reply."""
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            error = self.not_sent(exc) or self.translate(exc)
        raise error

    async def adispatch(self, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
        """Async twin of :meth:`dispatch`."""
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:
            error = self.not_sent(exc) or self.translate(exc)
        raise error

    def not_sent(self, exc: Exception) -> ConfigurationError | None:
        """The ConfigurationError for an exception an SDK raises only while encoding a request
        (the SDK's own errors, mapped by :meth:`map_error`, are not): a RecursionError from
        converting a body nested too deeply for it, a UnicodeEncodeError from text no UTF-8
        holds."""
        if not isinstance(exc, (RecursionError, UnicodeEncodeError)):
            return None
        if self.map_error(exc) is not None:
            return None
        what = self.redact.clip(describe_error(exc))
        return ConfigurationError(
            f"{self.name}: the SDK could not encode the request ({what}); nothing was sent"
        )

    def read(
        self,
        parse: Callable[..., T],
        raw: Any,
        /,
        *args: Any,
        request_id: str | None = None,
        **kwargs: Any,
    ) -> T:
        """``parse(raw, *args, **kwargs)``; a reply the parser cannot take is unreadable."""
        try:
            return parse(raw, *args, **kwargs)
        except Exception as exc:
            error = self.translate(exc, raw=raw, request_id=request_id)
        raise error

    def iterate(self, events: Iterable[T], request_id: str | None = None) -> Iterator[T]:
        """The events of an SDK stream, with its failures (cut, garbled) as alloy errors that
        carry the stream's ``request_id``."""
        iterator = self.call(iter, events)
        while True:
            try:
                event = next(iterator)
            except StopIteration:
                return
            except Exception as exc:
                error = self.translate(exc, request_id=request_id)
            else:
                yield event
                continue
            raise error

    async def aiterate(
        self, events: AsyncIterable[T], request_id: str | None = None
    ) -> AsyncIterator[T]:
        """Async twin of :meth:`iterate`."""
        iterator = events.__aiter__()
        while True:
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except Exception as exc:
                error = self.translate(exc, request_id=request_id)
            else:
                yield event
                continue
            raise error

    def translate(
        self, exc: Exception, *, raw: Any = None, request_id: str | None = None
    ) -> AlloyError:
        """The alloy error for ``exc``: the SDK's by the adapter's table, anything else met
        while reading a reply as UnreadableResponseError; redacted and unchained, and given the
        reply's ``request_id`` when it has none of its own."""
        if isinstance(exc, AlloyError):
            error: AlloyError = exc
        else:
            mapped = self.map_error(exc)
            error = mapped if mapped is not None else self.unreadable(exc, raw, request_id)
        if isinstance(error, ProviderError) and error.request_id is None:
            error.request_id = request_id
        return self.scrub(error)

    def unreadable(
        self, exc: BaseException, raw: Any = None, request_id: str | None = None
    ) -> UnreadableResponseError:
        """A reply alloy could not read, described by what went wrong and what came."""
        what = self.redact.clip(describe_error(exc))
        came = describe_reply(raw, self.redact)
        return UnreadableResponseError(
            f"{self.provider} sent a reply alloy could not read ({what})"
            + (f"; the reply began {came}" if came else ""),
            provider=self.provider,
            request_id=request_id,
        )

    def scrub(self, error: AlloyError) -> AlloyError:
        """Redact every text the error carries and cut it loose from the exceptions below it."""
        for name, value in list(vars(error).items()):
            if isinstance(value, str):
                setattr(error, name, self.redact(value))
        error.args = tuple(self.redact(a) if isinstance(a, str) else a for a in error.args)
        error.__cause__ = None
        error.__context__ = None
        error.__suppress_context__ = False
        return error

    def status_error(
        self,
        status: int | None,
        message: str,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        rate_limits: RateLimits | None = None,
    ) -> ProviderError:
        """The alloy error for an HTTP status from this provider."""
        return error_for_status(
            self.provider,
            status,
            self.redact(message),
            retry_after=retry_after,
            request_id=request_id,
            rate_limits=rate_limits,
        )

    def json_body(self, http_response: Any, request_id: str | None = None) -> dict[str, Any]:
        """The JSON object of a raw HTTP reply; anything else on a success status is a reply
        alloy cannot read. Adapters read whole replies raw because they parse the wire JSON
        themselves: building the SDK's response objects first would be work thrown away."""
        content = http_response.content
        try:
            body = json.loads(content)
        except (ValueError, RecursionError) as exc:
            error = self.unreadable(exc, content, request_id)
        else:
            problem = self.not_a_reply(body)
            if problem is None:
                return body
            error = self.unreadable(TypeError(problem), content, request_id)
        error.status_code = http_response.status_code
        raise self.scrub(error)

    def not_a_reply(self, body: Any) -> str | None:
        """What makes a decoded JSON body no reply of this API, or None when it is one."""
        if not isinstance(body, dict):
            return "not a JSON object"
        if self.reply_field is not None:
            name, kind = self.reply_field
            if not isinstance(body.get(name), kind):
                return f"no {name!r} {'list' if kind is list else 'object'}"
        return None

    @staticmethod
    def timeout(request: Request) -> float | None:
        return request.settings.timeout


def with_limits(response: Response, reply: Reply | Streamed) -> Response:
    """``response`` carrying the rate limits its reply's headers stated, if they stated any."""
    limits = reply.rate_limits
    return response if limits is None else replace(response, rate_limits=limits)


def finished(parser: StreamParser, request_id: str | None) -> Response:
    """A stream parser's whole reply, with the request id the HTTP response carried."""
    response = parser.response()
    if request_id is None or response.request_id is not None:
        return response
    return replace(response, request_id=request_id)


def describe_reply(raw: Any, redact: Redactor | None = None) -> str:
    """A short, quoted excerpt of a raw reply for an error message ('' when there is none),
    redacted by ``redact`` before it is cut (see :meth:`Redactor.clip`)."""
    if raw is None:
        return ""
    try:
        if isinstance(raw, (bytes, bytearray)):
            text = bytes(raw[: SNIPPET_CHARS * 4]).decode("utf-8", "replace")
        elif isinstance(raw, str):
            text = raw[: SNIPPET_CHARS * 4]
        elif isinstance(raw, (Mapping, list)):
            text = json.dumps(raw, default=str)
        elif hasattr(raw, "model_dump_json"):  # an SDK's response model
            text = raw.model_dump_json(exclude_none=True, warnings=False)
        else:
            return ""
    except (ValueError, TypeError, RecursionError):
        text = f"<{type(raw).__name__} that cannot be shown>"
    return repr(redact.clip(text) if redact is not None else _clip(text))


def describe_error(exc: BaseException) -> str:
    """What went wrong reading a reply, in one line. A pydantic ValidationError is described
    without the input values it would quote: it cuts them short, and a key cut short is no
    longer one the redactor recognises."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        listed = "; ".join(
            f"{'.'.join(str(step) for step in problem['loc']) or 'the reply'}: {problem['msg']}"
            for problem in problems[:3]
        )
        return f"ValidationError: {len(problems)} problems with {exc.title}: {listed}"
    return f"{type(exc).__name__}: {exc}"


def unsendable(body: Any, max_nesting: int) -> str | None:
    """What keeps a JSON body from being sent, or None: a string with a lone surrogate (named
    by its place in the body), or objects and arrays nested deeper than ``max_nesting``."""
    stack: list[tuple[Any, str, int]] = [(body, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and _has_surrogate(value):
                return f"{path or 'the body'} has a lone surrogate (text no UTF-8 can hold)"
            continue
        if isinstance(value, Mapping):
            items: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, (list, tuple)):
            items = enumerate(value)
        else:
            continue
        if depth >= max_nesting:
            return f"it nests deeper than {max_nesting} levels of objects and arrays"
        for key, item in items:
            if isinstance(key, str) and not key.isascii() and _has_surrogate(key):
                return f"a key in {path or 'the body'} has a lone surrogate"
            stack.append((item, f"{path}.{key}" if path else str(key), depth + 1))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _clip(text: str, limit: int = SNIPPET_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PerLoop(Generic[T]):
    """One value per running event loop, closed when that loop shuts down.

    Async SDK clients hold connections that belong to the loop they were made on, and through
    them the loop itself, so nothing keyed weakly by the loop ever lets go. Instead each value
    is watched by an async generator registered with its loop on first use: ``asyncio.run``
    (like every runner) calls ``loop.shutdown_asyncgens()`` before closing the loop, which
    closes the watcher, whose ``finally`` forgets the value and awaits ``close(value)`` while
    the loop still runs. A loop closed without that (a bare ``loop.close()``) is dropped the
    next time another loop asks, its value unclosed: see :meth:`_drop_closed_loops`.
    """

    def __init__(self, close: Callable[[T], Awaitable[None]] | None = None) -> None:
        self._by_loop: dict[asyncio.AbstractEventLoop, T] = {}
        self._watchers: dict[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = {}
        self._lock = threading.Lock()
        self._close = close

    def get(self, make: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        with self._lock:
            if loop in self._by_loop:
                return self._by_loop[loop]
            self._drop_closed_loops()
            value = self._by_loop[loop] = make()
            self._watchers[loop] = self._watch(loop, value)
            return value

    def __len__(self) -> int:
        return len(self._by_loop)

    def close_all(self) -> None:
        """Close every loop's value, on its own loop, and forget it (the next ``get`` on a loop
        makes a new one). A loop that is closed already is skipped: its value cannot be closed
        any more (see :meth:`_drop_closed_loops`)."""
        with self._lock:
            watchers = [(loop, w) for loop, w in self._watchers.items() if not loop.is_closed()]
            self._by_loop.clear()
            self._watchers.clear()
        for loop, watcher in watchers:
            _run_on(loop, watcher.aclose())

    def _watch(self, loop: asyncio.AbstractEventLoop, value: T) -> AsyncGenerator[None, None]:
        """An async generator, started on ``loop``, whose closing (at the loop's shutdown, or
        by :meth:`close_all`) closes ``value``."""

        async def until_shutdown() -> AsyncGenerator[None, None]:
            try:
                yield
            finally:
                self._forget(loop, value)
                if self._close is not None:
                    try:
                        await self._close(value)
                    except Exception as exc:  # closing is best effort; the loop is ending
                        logger.debug("closing a client at loop shutdown failed: %r", exc)

        watcher = until_shutdown()
        # Starting it calls the loop's first-iteration hook, which registers it for shutdown;
        # it runs to its ``yield`` at once, which ends that first step with StopIteration.
        with contextlib.suppress(StopIteration):
            watcher.asend(None).send(None)
        return watcher

    def _forget(self, loop: asyncio.AbstractEventLoop, value: T) -> None:
        with self._lock:
            if self._by_loop.get(loop) is value:  # not a newer value made after close_all
                del self._by_loop[loop]
                self._watchers.pop(loop, None)

    def _drop_closed_loops(self) -> None:
        """Let go of values of loops closed without a shutdown (the caller holds the lock).

        They are not closed, because they cannot be: an SDK client's connections are transports
        of the loop they were opened on, and closing one schedules a callback on that loop,
        which raises "Event loop is closed" once it is (the SDKs' own finalizers try it and
        fail so). Let go of, they are reclaimed by the garbage collector, whose finalizers
        close their sockets (with a ResourceWarning, which is fair: the loop was not shut
        down). ``asyncio.run`` and ``asyncio.Runner`` shut their loops down, so only a loop
        driven by hand ends here.
        """
        for loop in [loop for loop in self._by_loop if loop.is_closed()]:
            del self._by_loop[loop]
            self._watchers.pop(loop, None)


#: Closings started on a running loop, kept until done (a loop holds its tasks only weakly).
_CLOSING: set[asyncio.Task[Any]] = set()


def _run_on(loop: asyncio.AbstractEventLoop, closing: Awaitable[Any]) -> None:
    """Run ``closing`` on ``loop``: as a task when that loop is the one running here, else
    handed to it from this thread (it runs when the loop next does)."""

    async def run() -> None:
        await closing

    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:
        task = loop.create_task(run())
        _CLOSING.add(task)
        task.add_done_callback(_CLOSING.discard)
        return
    coroutine = run()
    try:
        asyncio.run_coroutine_threadsafe(coroutine, loop)
    except RuntimeError:  # the loop closed meanwhile: nothing can close it there any more
        coroutine.close()


def error_for_status(
    provider: str,
    status: int | None,
    message: str,
    *,
    retry_after: float | None = None,
    request_id: str | None = None,
    rate_limits: RateLimits | None = None,
) -> ProviderError:
    """Choose the error class by HTTP status; 400s that mention the schema are SchemaRejected."""
    cls: type[ProviderError]
    if status in (401, 403):
        cls = AuthenticationError
    elif status == 429:
        cls = RateLimitError
    elif status == 408:
        cls = ProviderTimeoutError
    elif status is not None and (status >= 500 or status == 409):
        cls = ServerError
    elif status is not None and 400 <= status < 500:
        cls = SchemaRejectedError if _SCHEMA_WORDS.search(message) else BadRequestError
    elif status is None:
        cls = ProviderConnectionError
    else:
        cls = ServerError
    label = f"{provider} returned HTTP {status}" if status else f"{provider} request failed"
    return cls(
        f"{label}: {message}",
        provider=provider,
        status_code=status,
        request_id=request_id,
        retry_after=retry_after,
        rate_limits=rate_limits,
    )


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date).

    Values that are not finite non-negative numbers are no hint at all.
    """
    if not headers:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return _seconds(float(value) / 1000)
        value = headers.get("retry-after")
        if value is not None:
            try:
                return _seconds(float(value))
            except ValueError:
                from datetime import datetime, timezone
                from email.utils import parsedate_to_datetime

                when = parsedate_to_datetime(value)
                return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError, OverflowError):
        return None
    return None


def _seconds(value: float) -> float | None:
    import math

    return max(0.0, value) if math.isfinite(value) else None


def merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ALLOY_EXTRA_JSON into a request body; nested dicts merge one level deep."""
    for key, value in extra.items():
        current = body.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            body[key] = {**current, **value}
        else:
            body[key] = value
    return body


__all__ = [
    "PerLoop",
    "Redactor",
    "Reply",
    "SDKModel",
    "StreamParser",
    "Streamed",
    "describe_reply",
    "error_for_status",
    "merge_extra",
    "retry_after_from",
    "unsendable",
]
