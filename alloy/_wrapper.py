"""One base for models that wrap another: the cache, the pacer, the cost cap, batch capture.

A :class:`WrapperModel` hands every call and every attribute it does not override to the model
it wraps, so a wrapper writes only what it changes (pydantic-ai's ``models/wrapper.py`` is the
example: ``WrapperModel`` delegates everything, ``ConcurrencyLimitedModel`` overrides one
method). Wrappers stack; :attr:`WrapperModel.unwrapped` (or :func:`unwrapped` for any model) is
the provider's model beneath them all, which is where provider facts live.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from ._model import Model
from ._types import Profile, Request, Response, StreamEvent


class WrapperModel:
    """``wrapped``, with every call and attribute handed to it; subclass and override what
    changes. The model protocol's four calls are forwarded explicitly (so they are the
    subclass's to override); anything else (``states_rate_limits``, ``close_clients``, ...) is
    read from ``wrapped``."""

    def __init__(self, wrapped: Model) -> None:
        self.wrapped = wrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.wrapped!r}>"

    @property
    def name(self) -> str:
        """The wrapped model's name: a wrapper is the same model to the engine and its events."""
        return self.wrapped.name

    @property
    def capabilities(self) -> Profile:
        return self.wrapped.capabilities

    @property
    def unwrapped(self) -> Model:
        """The model beneath every wrapper: the provider's own."""
        return unwrapped(self.wrapped)

    def request(self, request: Request) -> Response:
        return self.wrapped.request(request)

    async def arequest(self, request: Request) -> Response:
        return await self.wrapped.arequest(request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return self.wrapped.stream(request)

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return self.wrapped.astream(request)

    def __getattr__(self, name: str) -> Any:
        # Only public names: a private one is the wrapper's own (and while ``wrapped`` is not
        # set yet, as when a copy is being made, looking it up here would recurse).
        if name.startswith("_") or name == "wrapped":
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def unwrapped(model: Model) -> Model:
    """The model beneath every :class:`WrapperModel` around ``model`` (``model`` itself when it
    wraps nothing)."""
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return model


__all__ = ["WrapperModel", "unwrapped"]
