"""What every SDK-backed adapter shares: cached clients, error mapping, key redaction.

An adapter subclasses :class:`SDKModel`, says how to build its SDK client and how to map its
SDK's exceptions, and writes pure ``build``/``parse`` functions for its wire format. SDK retries
are turned off (``max_retries=0``) because the engine retries transient failures itself, the
same way for every provider; leaving both on would multiply attempts.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from .._types import Capabilities, Request
from ..errors import (
    AuthenticationError,
    BadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
)

_SCHEMA_WORDS = re.compile(
    r"schema|response_format|output_config|text\.format|json_schema", re.IGNORECASE
)
_KEYLIKE = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{6,}|sk-ant-[A-Za-z0-9_\-]{6,}|AIza[0-9A-Za-z_\-]{10,})"
)


class SDKModel:
    """Base for adapters that talk to a provider through its official SDK."""

    provider: ClassVar[str]
    capabilities: Capabilities = Capabilities()

    def __init__(
        self, model_id: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        self.model_id = model_id
        self.name = f"{self.provider}:{model_id}"
        self._api_key = api_key
        self.base_url = base_url
        self._lock = threading.Lock()
        self._sync_client: Any = None
        # Async SDK clients hold connections bound to one event loop: keep one per loop.
        self._async_clients: PerLoop[Any] = PerLoop()
        self._error_mapping = ErrorMapping(self.map_error)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # -- clients, built once and reused --
    def make_client(self, *, asynchronous: bool) -> Any:
        """Build the SDK client (sync or async). Called once per model (and per event loop)."""
        raise NotImplementedError

    def client(self) -> Any:
        if self._sync_client is None:
            with self._lock, self.errors():
                if self._sync_client is None:
                    self._sync_client = self.make_client(asynchronous=False)
        return self._sync_client

    def aclient(self) -> Any:
        """The async SDK client for the running event loop, built once per loop."""
        with self.errors():
            return self._async_clients.get(lambda: self.make_client(asynchronous=True))

    # -- errors, mapped once, here --
    def map_error(self, exc: Exception) -> ProviderError | None:
        """Translate an SDK exception into the alloy error tree (None: not ours to map)."""
        raise NotImplementedError

    def errors(self) -> ErrorMapping:
        """``with model.errors():`` turns SDK exceptions into alloy's (see :meth:`map_error`)."""
        return self._error_mapping

    def redact(self, text: str) -> str:
        """Remove anything key-like from a message before it reaches an error, log or event."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return _KEYLIKE.sub("***", text)

    def status_error(
        self,
        status: int | None,
        message: str,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> ProviderError:
        """The alloy error for an HTTP status from this provider."""
        return error_for_status(
            self.provider,
            status,
            self.redact(message),
            retry_after=retry_after,
            request_id=request_id,
        )

    def json_body(self, http_response: Any) -> dict[str, Any]:
        """The JSON object of a raw HTTP reply; a success status with anything else is the
        server failing. Adapters read whole replies raw because they parse the wire JSON
        themselves: building the SDK's response objects first would be work thrown away."""
        import json

        try:
            body = json.loads(http_response.content)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise self.status_error(http_response.status_code, "the reply is not a JSON object")
        return body

    @staticmethod
    def timeout(request: Request) -> float | None:
        return request.settings.timeout


T = TypeVar("T")


class PerLoop(Generic[T]):
    """One value per running event loop, built on first use (async SDK clients hold connections
    that belong to one loop). Loops are held weakly, so a finished loop's entry goes with it.

    The loop used last is checked first: a WeakKeyDictionary lookup makes a weak reference on
    every call, and almost every call runs on the same loop as the one before.
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[Any], T] | None = None
        self._lock = threading.Lock()

    def get(self, make: Callable[[], T]) -> T:
        import asyncio

        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        with self._lock:
            value = self._by_loop.get(loop)
            if value is None:
                value = self._by_loop[loop] = make()
            self._last = (weakref.ref(loop), value)
        return value


class ErrorMapping:
    """The context manager behind ``SDKModel.errors()``: one per model, stateless, reentrant.

    A class rather than ``@contextmanager``, which builds a generator and a wrapper object on
    every entry; this wraps every model call.
    """

    __slots__ = ("_map",)

    def __init__(self, map_error: Callable[[Exception], ProviderError | None]) -> None:
        self._map = map_error

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if not isinstance(exc, Exception) or isinstance(exc, ProviderError):
            return  # no error, an alloy error already, or not ours (KeyboardInterrupt...)
        mapped = self._map(exc)
        if mapped is not None:
            raise mapped from exc


def error_for_status(
    provider: str,
    status: int | None,
    message: str,
    *,
    retry_after: float | None = None,
    request_id: str | None = None,
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
    )


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return max(0.0, float(value) / 1000)
        value = headers.get("retry-after")
        if value is not None:
            try:
                return max(0.0, float(value))
            except ValueError:
                from datetime import datetime, timezone
                from email.utils import parsedate_to_datetime

                when = parsedate_to_datetime(value)
                return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError):
        return None
    return None


def merge_extra(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ALLOY_EXTRA_JSON into a request body; nested dicts merge one level deep."""
    for key, value in extra.items():
        current = body.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            body[key] = {**current, **value}
        else:
            body[key] = value
    return body
