"""The seam between the engine's drivers and a model: one protocol every provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._output import OutputType
from ._types import Profile, Request, Response, StreamEvent


@runtime_checkable
class Model(Protocol):
    """A model alloy can call, sync or async, whole or streamed.

    Implementations raise only :class:`alloy.errors.ProviderError` subclasses for failures of the
    provider or the network; the drivers hand those to the engine, which decides on retries.
    """

    #: The full model string, e.g. ``"openai:gpt-5-mini"``.
    name: str
    capabilities: Profile

    def request(self, request: Request) -> Response: ...

    async def arequest(self, request: Request) -> Response: ...

    def stream(self, request: Request) -> Iterator[StreamEvent]: ...

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class StandIn(Protocol):
    """A model that answers from a command's declared output instead of from language, such as
    the offline model. A command binds it to its output type once, when it plans its calls, so
    what the stand-in needs (a reply a text format accepts) never travels in the Request."""

    def for_output(self, output: OutputType) -> Model:
        """This model, answering calls whose output is ``output``."""
        ...


@runtime_checkable
class Connects(Protocol):
    """A model that talks to its provider through an SDK client, built on first use (alloy's
    adapters). A server builds it before it reports ready, so no request pays for the SDK's
    import and the client's construction (see ``alloy.serve``)."""

    def connect(self) -> None:
        """Import the SDK and build the async client for the running event loop now, with
        whatever else the SDK loads on a first request."""
        ...


#: The endpoint of a model sent to its provider's own default (no base URL configured).
DEFAULT_ENDPOINT = "default"


@dataclass(frozen=True, slots=True)
class CacheScope:
    """What every request of one model shares in its response-cache key: where it is sent
    (the base URL as configured, :data:`DEFAULT_ENDPOINT` for the provider's own: two
    OpenAI-compatible servers may serve different models under one name) and the caller's own
    key, when the model sends one (the cache keys by a salted digest of it, never the key)."""

    endpoint: str
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class CacheKeyParts:
    """What keys one request in the response cache, as its model declares it."""

    #: The request as the provider receives it, without what changes per attempt (a timeout
    #: the engine shortens to fit a deadline changes nothing the model sees).
    body: Mapping[str, Any]
    #: The sampling options as they are sent (``temperature``, ``seed``), wherever the body
    #: keeps them: whether the request asks for a repeatable answer.
    sampling: Mapping[str, Any]


@runtime_checkable
class CacheKeyed(Protocol):
    """A model that declares what keys its requests in the response cache: every SDK adapter
    (``SDKModel``), by the body it sends. A model that does not (the offline model, a
    hand-written one) is keyed by the normalized Request."""

    def cache_scope(self) -> CacheScope:
        """What every request of this model shares in its key."""
        ...

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        """What keys ``request``, sent whole or streamed."""
        ...
