"""A model behind the response cache: looks each request up before sending it.

Every model turn is looked up on its own (a tool round's turns too; tools run as they always
do unless marked cacheable, see ``_tools``). A hit hands back the stored reply, which the engine
parses and validates like any other, with a usage of no tokens and no requests; a streamed hit
replays the stored deltas one by one.

A miss is not stored when it arrives: the engine first decides what the reply is worth. Only a
reply it accepts (one it goes on from, to a tool round or the finalize turn, or one it made the
call's value from) is stored, when the engine says so (the ``Accepted`` effect, carried out by
:meth:`CachedModel.keep`). A reply that failed validation, ended the call with an error, or
belonged to a stream that failed or was left unfinished never is, so a rerun asks the provider
again instead of failing the same way from the store.

A hit is validated again on every use, against the output type and checks as they are now. A
hit they refuse is stale: the engine says so (the ``Stale`` effect, carried out by
:meth:`CachedModel.refresh`) and sends the same request again, which then goes to the
provider instead of the store, as a miss: a fresh reply the call accepts replaces the entry."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from .._types import CacheStatus, Done, Request, Response, StreamEvent
from .._wrapper import WrapperModel, unwrapped
from ..errors import CacheMissError, ConfigurationError
from ._codec import Delta, Entry, decode, encode
from ._key import (
    Unkeyable,
    caller_digest,
    canonical,
    finish_key,
    is_deterministic,
    key_head,
    key_parts,
    scope_of,
)
from ._notices import NotCached, describe, resting, store_fault
from ._store import Store

logger = logging.getLogger("alloy.cache")

CacheMode = Literal["readwrite", "replay", "record"]

#: How many replies of misses wait for the engine's verdict at once, per model (calls run
#: concurrently, over rows, each have theirs). A reply the engine never accepts (it failed
#: validation, or the call failed) waits until newer ones push it out; one accepted after that
#: many newer misses is simply not stored.
PENDING = 256


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


class _Lookup(NamedTuple):
    """What looking a request up found: the status, the key to store a reply under (None when
    the request is not cached), and on a hit the entry and the reply ready to hand back."""

    status: CacheStatus
    key: str | None
    entry: Entry | None = None
    hit: Response | None = None


class CachedModel(WrapperModel):
    """``model`` with ``policy`` applied to every request; ``schema`` is the output type's.

    The provider's model beneath ``model`` (:attr:`provider_model`; ``model`` may wrap it: a run
    over rows paces the calls that miss, see ``wrap_under_cache``) declares what keys its requests
    (its ``cache_key_parts`` and ``cache_scope``: the body and the endpoint), so a request has
    one key, whoever sends it.

    ``notice`` says why a request is not cached, once per command (see ``NotCached``).
    """

    def __init__(
        self,
        model: Any,
        policy: CachePolicy,
        schema: Any = None,
        notice: NotCached | None = None,
    ) -> None:
        super().__init__(model)
        self.provider_model = unwrapped(model)
        self.policy = policy
        self.schema = schema
        self.notice = NotCached() if notice is None else notice
        scope = scope_of(self.provider_model)
        #: Where the model sends its requests: part of every key (see ``CacheScope``).
        self.endpoint = scope.endpoint if scope is not None else None
        #: The schema's canonical JSON, made once: it is part of every key.
        self.schema_text = canonical(schema)
        #: What every key of this model starts with, hashed once: whole, then streamed. A
        #: model sending a caller's own key keys by its digest too: an answer reaches only a
        #: caller with the same key (see ``caller_digest``).
        caller = caller_digest(scope.api_key) if scope is not None else None
        self._heads = tuple(
            key_head(
                self.name,
                stream=stream,
                schema_text=self.schema_text,
                endpoint=self.endpoint,
                caller=caller,
            )
            for stream in (False, True)
        )
        #: The last request keyed, whole and streamed, with its key (or why it has none) and
        #: whether it is repeatable (see ``_key``).
        self._keyed: list[tuple[Request, str | Unkeyable, bool] | None] = [None, None]
        #: The last entry read, with its key and the bytes it came from: a hit repeated in this
        #: process neither decodes the bytes nor builds the reply again. Its reply, made as a
        #: hit, is handed out as it is: one object per key, so a refused hit names its key.
        self._last: tuple[str, bytes, Entry] | None = None
        #: Replies of misses waiting for the engine to accept them, by the id of the reply
        #: handed to it (kept alive here, so the id stays its own): the reply, key and entry.
        self._pending: OrderedDict[int, tuple[Response, str, Entry]] = OrderedDict()
        self._pending_lock = threading.Lock()
        #: The keys of the latest entries read, by the id of their reply handed out as a hit
        #: (kept alive here), so that a hit the engine refuses names its entry (see
        #: :meth:`refresh`) after another entry took its place as the last.
        self._hits: OrderedDict[int, tuple[Response, str]] = OrderedDict()
        #: Keys whose next lookups go to the provider, and how many: each refused hit's call
        #: sends its request again once.
        self._stale: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"<cached {self.wrapped!r} in {self.policy.store.location}>"

    def key(self, request: Request, *, stream: bool) -> str:
        """The cache key of ``request`` sent by this model (raises Unkeyable without one)."""
        parts = key_parts(self.provider_model, request, stream=stream)
        return finish_key(self._heads[stream], request, parts.body if parts else None)

    def request(self, request: Request) -> Response:
        found = self._lookup(request, stream=False)
        if found.hit is not None:
            return found.hit
        response = self.wrapped.request(request)
        return self._asked(found, Entry(response))

    async def arequest(self, request: Request) -> Response:
        found = self._lookup(request, stream=False)
        if found.hit is not None:
            return found.hit
        response = await self.wrapped.arequest(request)
        return self._asked(found, Entry(response))

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        found = self._lookup(request, stream=True)
        if found.hit is not None:
            assert found.entry is not None
            yield from found.entry.deltas or ()
            yield Done(found.hit)
            return
        deltas: list[Delta] = []
        for event in self.wrapped.stream(request):
            if isinstance(event, Done):
                yield Done(self._asked(found, Entry(event.response, tuple(deltas))))
                continue
            deltas.append(event)
            yield event

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        found = self._lookup(request, stream=True)
        if found.hit is not None:
            assert found.entry is not None
            for delta in found.entry.deltas or ():
                yield delta
            yield Done(found.hit)
            return
        deltas: list[Delta] = []
        async for event in self.wrapped.astream(request):
            if isinstance(event, Done):
                yield Done(self._asked(found, Entry(event.response, tuple(deltas))))
                continue
            deltas.append(event)
            yield event

    def keep(self, response: Response) -> None:
        """Store the reply of a miss, now that the engine accepted it (see the module's
        docstring); ``response`` is the reply this model handed to it."""
        with self._pending_lock:
            found = self._pending.pop(id(response), None)
        if found is not None and found[0] is response:
            self._save(found[1], found[2])

    def refresh(self, response: Response) -> bool:
        """``response``, a hit this model handed out, failed validation: its request is asked
        of the provider the next time it is sent. Whether it will be: not in replay mode, which
        asks no provider, nor for a hit too old to be remembered."""
        if self.policy.mode == "replay":
            return False
        last = self._last
        with self._pending_lock:
            if last is not None and last[2].response is response:
                key = last[0]
            else:  # kept, not taken: calls that share a hit may each refuse it
                found = self._hits.get(id(response))
                if found is None or found[0] is not response:
                    return False
                key = found[1]
            self._stale[key] = self._stale.get(key, 0) + 1
        logger.debug("alloy cache: a reply from %s failed validation: asking again", self)
        return True

    def _take_stale(self, key: str) -> bool:
        """Whether ``key``'s entry was refused and this lookup goes to the provider instead."""
        with self._pending_lock:
            left = self._stale.get(key)
            if left is None:
                return False
            if left > 1:
                self._stale[key] = left - 1
            else:
                del self._stale[key]
            return True

    def _asked(self, found: _Lookup, entry: Entry) -> Response:
        """The provider's reply marked with the cache's status; a reply to store waits for the
        engine's verdict."""
        marked = replace(entry.response, cache=found.status)
        if found.key is not None and self.policy.mode != "replay":
            with self._pending_lock:
                pending = self._pending
                pending[id(marked)] = (marked, found.key, entry)
                while len(pending) > PENDING:
                    pending.popitem(last=False)
        return marked

    def _lookup(self, request: Request, *, stream: bool) -> _Lookup:
        """The request's status and key, and its stored entry on a hit."""
        policy = self.policy
        key, repeatable = self._key(request, stream)
        if policy.mode == "readwrite" and not (policy.everything or repeatable):
            self.notice.not_repeatable(self.name, policy.store.location, request)
            return _NOT_REPEATABLE
        if isinstance(key, Unkeyable):
            if policy.mode == "replay":
                raise self._missing(request, "(no key: the request has no JSON form)") from None
            self.notice.no_json_form(self.name, policy.store.location, key)
            return _NO_JSON_FORM
        if policy.mode == "record":
            return _Lookup("record", key)
        if self._stale and self._take_stale(key):
            return _Lookup("miss", key)
        found = self._read(key)
        if found is None:
            if policy.mode == "replay":
                raise self._missing(request, key)
            return _Lookup("miss", key)
        return _Lookup("hit", key, found, found.response)

    def _key(self, request: Request, stream: bool) -> tuple[str | Unkeyable, bool]:
        """The request's key (or why it has none) and whether it is repeatable.

        Both are worked out from the wire body, which an adapter builds from the request alone
        (``cache_key_parts`` is pure): a request equal to the last one keyed (the same prompt asked
        again) reuses what was worked out for it instead of building and hashing it again.
        """
        last = self._keyed[stream]
        if last is not None and last[0] == request:
            return last[1], last[2]
        parts = key_parts(self.provider_model, request, stream=stream)
        repeatable = is_deterministic(request, parts.sampling if parts else None)
        key: str | Unkeyable
        try:
            key = finish_key(self._heads[stream], request, parts.body if parts else None)
        except Unkeyable as exc:
            key = exc
        self._keyed[stream] = (request, key, repeatable)
        return key, repeatable

    def _read(self, key: str) -> Entry | None:
        """The entry stored under ``key``, its reply made as a hit, or None."""
        store = self.policy.store
        if self.policy.mode != "replay" and resting(store, "reading"):
            return None  # it failed a moment ago: a miss, without waiting on it again
        try:
            raw = store.get(key)
        except Exception as exc:  # a cache that fails is a miss, never a failed call
            if self.policy.mode == "replay":
                raise ConfigurationError(
                    f"ALLOY_CACHE_MODE=replay: the cache at {store.location} cannot be read "
                    f"({describe(exc)}), and replay mode asks no provider: fix or record the store"
                ) from None
            store_fault(store, "reading", exc)
            return None
        if raw is None:
            return None
        last = self._last
        if last is not None and last[0] == key and (last[1] is raw or last[1] == raw):
            return last[2]
        entry = decode(raw, hit=True)
        if entry is None:
            return None
        self._last = (key, raw, entry)
        with self._pending_lock:  # what a refused hit that is no longer the last names
            hits = self._hits
            hits[id(entry.response)] = (entry.response, key)
            while len(hits) > PENDING:
                hits.popitem(last=False)
        return entry

    def _save(self, key: str, entry: Entry) -> None:
        value = encode(entry)
        if value is None:
            self.notice.reply_not_stored(self.name, self.policy.store.location)
            return
        if resting(self.policy.store, "writing"):
            return
        try:
            self.policy.store.put(key, value, self.policy.ttl)
        except Exception as exc:  # the call has its answer: it is only not stored
            store_fault(self.policy.store, "writing", exc)

    def _missing(self, request: Request, key: str) -> CacheMissError:
        return CacheMissError(
            f"ALLOY_CACHE_MODE=replay: {self.policy.store.location} holds no reply for this "
            f"request to {self.name} (key {key}); the last message was {_last_text(request)}. "
            "Run once with ALLOY_CACHE_MODE=record and the provider to store it.",
            key=key,
            model=self.name,
        )


_NOT_REPEATABLE = _Lookup("skipped: not repeatable", None)
_NO_JSON_FORM = _Lookup("skipped: no JSON form", None)


def keep_reply(model: Any, response: Response) -> None:
    """Store ``response``, a reply the engine accepted, when ``model`` is behind the cache."""
    if isinstance(model, CachedModel):
        model.keep(response)


def refresh_reply(model: Any, response: Response) -> bool:
    """Whether ``model`` is behind the cache and asks the provider, not the store, the next time
    the request of ``response`` (a hit that failed validation) is sent."""
    return isinstance(model, CachedModel) and model.refresh(response)


def _last_text(request: Request) -> str:
    for message in reversed(request.messages):
        text = "".join(getattr(part, "text", "") for part in message.parts)
        if text:
            return repr(text if len(text) <= 80 else text[:79] + "…")
    return "without text"


__all__ = ["CacheMode", "CachePolicy", "CachedModel", "keep_reply", "refresh_reply"]
