"""The model a repeat of an eval asks: the same model, with the repeat's index in its
response-cache key, so ``repeats=3`` makes three distinct requests per case (and three cache
entries), and running the eval again finds each of them.

It is deliberately not a ``WrapperModel``: the cache keys by the model beneath every wrapper,
and this model's job is to be that model, keyed apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

from .._model import CacheKeyed, CacheKeyParts, CacheScope, Model
from .._types import Request, Response, StreamEvent


class Repeat:
    """``model`` for repeat ``index`` (1 and up; repeat 0 asks the model itself)."""

    def __init__(self, model: Model, index: int) -> None:
        self.model = model
        self.index = index

    def __repr__(self) -> str:
        return f"<{self.model!r}, repeat {self.index}>"

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def capabilities(self) -> Any:
        return self.model.capabilities

    def request(self, request: Request) -> Response:
        return self.model.request(request)

    async def arequest(self, request: Request) -> Response:
        return await self.model.arequest(request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return self.model.stream(request)

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return self.model.astream(request)

    def cache_scope(self) -> CacheScope:
        if isinstance(self.model, CacheKeyed):
            return self.model.cache_scope()
        return CacheScope(type(self.model).__name__)

    def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
        if isinstance(self.model, CacheKeyed):
            parts = self.model.cache_key_parts(request, stream=stream)
            body, sampling = dict(parts.body), parts.sampling
        else:
            settings = dataclasses.replace(request.settings, timeout=None)
            body = dataclasses.asdict(dataclasses.replace(request, settings=settings))
            sampling = {"temperature": settings.temperature, "seed": settings.extra.get("seed")}
        body["alloy_eval_repeat"] = self.index
        return CacheKeyParts(body, sampling)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)
