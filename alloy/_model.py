"""The seam between the engine's drivers and a model: one protocol every provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Protocol, runtime_checkable

from ._types import Capabilities, Request, Response, StreamEvent


@runtime_checkable
class Model(Protocol):
    """A model alloy can call, sync or async, whole or streamed.

    Implementations raise only :class:`alloy.errors.ProviderError` subclasses for failures of the
    provider or the network; the drivers hand those to the engine, which decides on retries.
    """

    #: The full model string, e.g. ``"openai:gpt-5-mini"``.
    name: str
    capabilities: Capabilities

    def request(self, request: Request) -> Response: ...

    async def arequest(self, request: Request) -> Response: ...

    def stream(self, request: Request) -> Iterator[StreamEvent]: ...

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]: ...
