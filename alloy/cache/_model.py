"""A model behind the response cache: looks each request up before sending it.

Every model turn is looked up on its own (a tool round's turns too; the tools themselves still
run, since only model replies are stored). A hit hands back the stored reply, which the engine
parses and validates like any other, with a usage of no tokens and no requests; a streamed hit
replays the stored deltas one by one. Only a reply that arrived whole is stored: a stream that
failed or was left unfinished never is.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from .._types import Capabilities, Done, Request, Response, StreamEvent, Usage
from ..errors import CacheMissError
from ._codec import Delta, Entry, decode, encode
from ._key import Unkeyable, canonical, is_deterministic, request_key, wire_body
from ._store import Store

logger = logging.getLogger("alloy.cache")

CacheMode = Literal["readwrite", "replay", "record"]

#: A hit's usage: one reply from the cache, no tokens, no provider request, so no cost.
HIT = Usage(cache_hits=1)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """How a call uses the cache: the store, the mode, entry lifetime, and what is cached.

    ``readwrite`` reads and stores; ``replay`` only reads and makes no provider call at all;
    ``record`` always asks the provider and stores the reply. By default only repeatable
    requests (temperature 0 or a seed) are cached; ``everything`` caches the rest too, and
    replay and record modes always do, since a suite replays every call it recorded.
    """

    store: Store
    mode: CacheMode = "readwrite"
    ttl: float | None = None
    everything: bool = False


@dataclass(frozen=True, slots=True)
class _Lookup:
    key: str
    entry: Entry | None


class CachedModel:
    """``model`` with ``policy`` applied to every request; ``schema`` is the output type's."""

    def __init__(self, model: Any, policy: CachePolicy, schema: Any = None) -> None:
        self.model = model
        self.policy = policy
        self.schema = schema
        #: The schema's canonical JSON, made once: it is part of every key.
        self.schema_text = canonical(schema)
        #: The last entry read, with the bytes it came from: a hit repeated in this process
        #: skips decoding them again.
        self._last: tuple[bytes, Entry] | None = None
        self.name: str = model.name
        self.capabilities: Capabilities = model.capabilities

    def __repr__(self) -> str:
        return f"<cached {self.model!r} in {self.policy.store.location}>"

    def request(self, request: Request) -> Response:
        found = self._lookup(request, stream=False)
        if found is None:
            response: Response = self.model.request(request)
            return response
        if found.entry is not None:
            return _hit(found.entry)
        response = self.model.request(request)
        self._save(found.key, Entry(response))
        return response

    async def arequest(self, request: Request) -> Response:
        found = self._lookup(request, stream=False)
        if found is None:
            response: Response = await self.model.arequest(request)
            return response
        if found.entry is not None:
            return _hit(found.entry)
        response = await self.model.arequest(request)
        self._save(found.key, Entry(response))
        return response

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        found = self._lookup(request, stream=True)
        if found is None:
            yield from self.model.stream(request)
            return
        if found.entry is not None:
            yield from found.entry.deltas or ()
            yield Done(_hit(found.entry))
            return
        deltas: list[Delta] = []
        for event in self.model.stream(request):
            if isinstance(event, Done):
                self._save(found.key, Entry(event.response, tuple(deltas)))
            else:
                deltas.append(event)
            yield event

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        found = self._lookup(request, stream=True)
        if found is None:
            async for event in self.model.astream(request):
                yield event
            return
        if found.entry is not None:
            for delta in found.entry.deltas or ():
                yield delta
            yield Done(_hit(found.entry))
            return
        deltas: list[Delta] = []
        async for event in self.model.astream(request):
            if isinstance(event, Done):
                self._save(found.key, Entry(event.response, tuple(deltas)))
            else:
                deltas.append(event)
            yield event

    def _lookup(self, request: Request, *, stream: bool) -> _Lookup | None:
        """The request's key and stored entry; None when the request is not cached at all."""
        policy = self.policy
        body = wire_body(self.model, request, stream=stream)
        if policy.mode == "readwrite" and not (
            policy.everything or is_deterministic(request, body)
        ):
            return None
        try:
            key = request_key(self.name, request, body, stream=stream, schema_text=self.schema_text)
        except Unkeyable as exc:
            if policy.mode == "replay":
                raise self._missing(request, "(no key: the request has no JSON form)") from None
            logger.debug("alloy cache: not caching a request without a JSON form: %s", exc)
            return None
        if policy.mode == "record":
            return _Lookup(key, None)
        entry = self._read(key)
        if entry is None and policy.mode == "replay":
            raise self._missing(request, key)
        return _Lookup(key, entry)

    def _read(self, key: str) -> Entry | None:
        try:
            raw = self.policy.store.get(key)
        except Exception as exc:  # a cache that fails is a miss, never a failed call
            if self.policy.mode == "replay":
                raise
            logger.warning("alloy cache: reading %s failed: %r", self.policy.store.location, exc)
            return None
        if raw is None:
            return None
        last = self._last
        if last is not None and last[0] == raw:
            return last[1]
        entry = decode(raw)
        if entry is not None:
            self._last = (raw, entry)
        return entry

    def _save(self, key: str, entry: Entry) -> None:
        if self.policy.mode == "replay":
            return
        value = encode(entry)
        if value is None:
            logger.debug("alloy cache: a reply with parts that have no JSON form is not stored")
            return
        try:
            self.policy.store.put(key, value, self.policy.ttl)
        except Exception as exc:
            logger.warning("alloy cache: writing %s failed: %r", self.policy.store.location, exc)

    def _missing(self, request: Request, key: str) -> CacheMissError:
        return CacheMissError(
            f"ALLOY_CACHE_MODE=replay: {self.policy.store.location} holds no reply for this "
            f"request to {self.name} (key {key}); the last message was {_last_text(request)}. "
            "Run once with ALLOY_CACHE_MODE=record and the provider to store it.",
            key=key,
            model=self.name,
        )


def _hit(entry: Entry) -> Response:
    return replace(entry.response, usage=HIT)


def _last_text(request: Request) -> str:
    for message in reversed(request.messages):
        text = "".join(getattr(part, "text", "") for part in message.parts)
        if text:
            return repr(text if len(text) <= 80 else text[:79] + "…")
    return "without text"


__all__ = ["CacheMode", "CachePolicy", "CachedModel"]
