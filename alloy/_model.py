"""The seam between the engine's drivers and a model: one protocol every provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Protocol, runtime_checkable

from ._output import OutputType
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


@runtime_checkable
class StandIn(Protocol):
    """A model that answers from a command's declared output instead of from language, such as
    the offline model. A command binds it to its output type once, when it plans its calls, so
    what the stand-in needs (a reply a text format accepts) never travels in the Request."""

    def for_output(self, output: OutputType) -> Model:
        """This model, answering calls whose output is ``output``."""
        ...
