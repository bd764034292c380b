"""alloy's response cache: a repeated request is answered from a store instead of the provider.

Turn it on with ``cache=`` (or ``ALLOY_CACHE``) at any configuration layer:

- a file path or ``sqlite:///path``: one SQLite file (the default kind; no server, safe across
  threads and processes);
- ``redis://host:port/db``: a Redis many machines share (needs ``alloy[redis]``);
- ``memory``: this process only; ``off`` (or unset): no cache.

``cache_mode`` (``ALLOY_CACHE_MODE``) is ``readwrite``, ``replay`` (no provider calls: a miss
raises :class:`~alloy.errors.CacheMissError`) or ``record`` (always ask, store the reply);
``cache_ttl`` and ``cache_max_entries`` bound the entries' lifetime and number (a Redis store
is bounded on its server instead); ``cache_all`` caches requests that are not repeatable too.
The key is the exact wire request and its endpoint (see ``_key``); a reply is stored once the
call accepted it, and parsed and validated again on every hit (see ``_model``). Tools marked
``@tool(cacheable=True)`` are answered from the same store (see ``_tools``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config import cache_is_off
from ..errors import ConfigurationError
from ._model import CachedModel, CacheMode, CachePolicy, keep_reply, refresh_reply
from ._notices import NotCached, describe
from ._store import MemoryStore, Store, StoreStats
from ._tools import ToolCache, tool_cache

if TYPE_CHECKING:
    from .._config import Config

__all__ = [
    "CacheMode",
    "CachePolicy",
    "CachedModel",
    "MemoryStore",
    "NotCached",
    "Store",
    "StoreStats",
    "ToolCache",
    "describe",
    "is_off",
    "keep_reply",
    "new_store",
    "open_store",
    "policy_for",
    "refresh_reply",
    "store_file",
    "tool_cache",
]

_stores: dict[tuple[str, int | None], Store] = {}
_stores_lock = threading.Lock()


def is_off(location: str | None) -> bool:
    """Whether a ``cache`` value turns caching off."""
    return cache_is_off(location)


def open_store(location: str, max_entries: int | None = None) -> Store:
    """The store a ``cache`` value names, opened once per process and shared by every call."""
    key = (location, max_entries)
    store = _stores.get(key)
    if store is None:
        with _stores_lock:
            store = _stores.get(key)
            if store is None:
                store = _stores[key] = new_store(location, max_entries)
    return store


def new_store(location: str, max_entries: int | None = None) -> Store:
    """A store of its own for a ``cache`` value (the caller closes it)."""
    text = location.strip()
    if text.lower() == "memory":
        return MemoryStore(max_entries)
    if text.startswith(("redis://", "rediss://", "unix://")):
        if max_entries is not None:
            raise ConfigurationError(
                f"cache_max_entries={max_entries} cannot bound the Redis store {location!r}: "
                "machines sharing it would race on a count. Bound it on the server "
                "(maxmemory with maxmemory-policy allkeys-lru) and leave cache_max_entries unset"
            )
        from ._redis import RedisStore

        return RedisStore(text)
    if "://" in text and not text.startswith("sqlite://"):
        raise ConfigurationError(
            f"cache={location!r} names no store alloy knows: use a file path, sqlite:///path, "
            "redis://host:port/db, memory or off"
        )
    from ._sqlite import SQLiteStore

    return SQLiteStore(sqlite_path(text), max_entries)


def store_file(location: str) -> Path | None:
    """The file of a ``cache`` value that names a SQLite store, or None for another kind."""
    text = location.strip()
    if text.lower() == "memory" or ("://" in text and not text.startswith("sqlite://")):
        return None
    return Path(sqlite_path(text)).expanduser()


def sqlite_path(location: str) -> str:
    """The file of ``sqlite:///relative`` or ``sqlite:////absolute`` (SQLAlchemy's spelling), or
    of a plain path."""
    return location[len("sqlite:///") :] if location.startswith("sqlite:///") else location


def policy_for(config: Config) -> CachePolicy | None:
    """How calls under ``config`` use the cache, or None when caching is off."""
    if is_off(config.cache):
        return None
    assert config.cache is not None
    store = open_store(config.cache, config.cache_max_entries)
    return CachePolicy(store, config.cache_mode, config.cache_ttl, config.cache_all)


def cached(
    model: Any, policy: CachePolicy | None, schema: Any = None, notice: NotCached | None = None
) -> Any:
    """``model`` behind the cache, or ``model`` itself when caching is off; ``notice`` says
    why a request is not cached, once per command."""
    return model if policy is None else CachedModel(model, policy, schema, notice=notice)


def wrap_under_cache(model: Any, wrap: Any) -> Any:
    """``model`` with ``wrap`` applied under its cache, if it has one: what wraps a model to
    pace its calls must see only the requests that reach the provider, not the hits."""
    if isinstance(model, CachedModel):  # keyed by the provider's model, as without the wrap
        return CachedModel(wrap(model.wrapped), model.policy, model.schema, model.notice)
    return wrap(model)


def close_stores() -> None:
    """Close every store opened so far (tests, and the CLI when it is done)."""
    with _stores_lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
