"""A store many machines share: Redis (``cache="redis://host:port/db"``).

Entries are plain keys under one prefix, expiring by Redis's own ``PX``; the size bound is
Redis's ``maxmemory`` policy, set on the server, since a count kept by clients on many machines
would race (so ``cache_max_entries`` with a Redis store is refused, not ignored). Needs the
``redis`` package (``pip install 'alloy[redis]'``).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ConfigurationError
from ._store import StoreStats

PREFIX = "alloy:cache:"
_SCAN_BATCH = 500


class RedisStore:
    """Entries in the Redis database at ``url``."""

    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise ConfigurationError(
                f"cache={url!r} needs the redis package: pip install 'alloy[redis]'"
            ) from None
        self.location = url
        self._client: Any = redis.Redis.from_url(url)

    def get(self, key: str) -> bytes | None:
        value: bytes | None = self._client.get(PREFIX + key)
        return value

    def put(self, key: str, value: bytes, ttl: float | None) -> None:
        milliseconds = None if ttl is None else max(1, math.ceil(ttl * 1000))
        self._client.set(PREFIX + key, value, px=milliseconds)

    def stats(self) -> StoreStats:
        entries = size = 0
        for keys in self._batches():
            entries += len(keys)
            pipe = self._client.pipeline(transaction=False)
            for key in keys:
                pipe.strlen(key)
            size += sum(pipe.execute())
        return StoreStats(self.location, entries, 0, size)

    def clear(self) -> int:
        removed = 0
        for keys in self._batches():
            removed += self._client.unlink(*keys)
        return int(removed)

    def prune(self) -> int:
        """Nothing to do: Redis drops expired entries itself, and bounds size by maxmemory."""
        return 0

    def close(self) -> None:
        self._client.close()

    def _batches(self) -> Any:
        batch: list[bytes] = []
        for key in self._client.scan_iter(match=PREFIX + "*", count=_SCAN_BATCH):
            batch.append(key)
            if len(batch) >= _SCAN_BATCH:
                yield batch
                batch = []
        if batch:
            yield batch
