"""A store many machines share: Redis (``cache="redis://host:port/db"``).

Entries are plain keys under one prefix, expiring by Redis's own ``PX``; the size bound is
Redis's ``maxmemory`` policy, set on the server, since a count kept by clients on many machines
would race (so ``cache_max_entries`` with a Redis store is refused, not ignored). Needs the
``redis`` package (``pip install 'alloy[redis]'``).

A server that is down or hung must not hold calls up: connecting and every command give up
after :data:`TIMEOUT` seconds, without retrying (a cache that does not answer at once is a
miss; see ``_notices``). The URL's own ``socket_timeout`` and ``socket_connect_timeout``
options win over it.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigurationError
from ._store import StoreStats

PREFIX = "alloy:cache:"
#: Seconds to connect, and to wait for each reply, before the store counts as failed.
TIMEOUT = 1.0
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
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.location = _without_password(url)
        self._client: Any = redis.Redis.from_url(
            url,
            socket_timeout=TIMEOUT,
            socket_connect_timeout=TIMEOUT,
            retry_on_timeout=False,
            retry=Retry(NoBackoff(), 0),
        )

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


def _without_password(url: str) -> str:
    """``url`` as it may be shown in logs and messages: with ``***`` for its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
