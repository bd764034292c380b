"""What every response store offers, and the in-process one (``cache="memory"``)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoreStats:
    """How full a store is: live entries, expired ones not yet pruned, and their bytes."""

    location: str
    entries: int
    expired: int
    bytes: int


class Store(Protocol):
    """A map from request keys to encoded replies, with expiry; safe to share across threads."""

    location: str

    def get(self, key: str) -> bytes | None:
        """The live entry under ``key``, or None (missing or expired)."""
        ...

    def put(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store ``value``, replacing any entry; ``ttl`` seconds of life (None: no end)."""
        ...

    def stats(self) -> StoreStats: ...

    def clear(self) -> int:
        """Remove every entry; return how many there were."""
        ...

    def prune(self) -> int:
        """Remove expired entries (and the oldest beyond the size bound); return how many."""
        ...

    def close(self) -> None: ...


def expiry(ttl: float | None, now: float) -> float | None:
    return None if ttl is None else now + ttl


class MemoryStore:
    """Entries in this process only, oldest dropped first past ``max_entries``."""

    def __init__(self, max_entries: int | None = None) -> None:
        self.location = "memory"
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[bytes, float | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        found = self._entries.get(key)
        if found is None:
            return None
        value, expires = found
        if expires is not None and expires <= time.time():
            return None
        return value

    def put(self, key: str, value: bytes, ttl: float | None) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (value, expiry(ttl, time.time()))
            if self.max_entries is not None:
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)

    def stats(self) -> StoreStats:
        with self._lock:
            now = time.time()
            expired = sum(1 for _, e in self._entries.values() if e is not None and e <= now)
            size = sum(len(value) for value, _ in self._entries.values())
            return StoreStats(self.location, len(self._entries) - expired, expired, size)

    def clear(self) -> int:
        with self._lock:
            count = len(self._entries)
            self._entries.clear()
            return count

    def prune(self) -> int:
        with self._lock:
            now = time.time()
            gone = [k for k, (_, e) in self._entries.items() if e is not None and e <= now]
            for key in gone:
                del self._entries[key]
            return len(gone)

    def close(self) -> None:
        """Nothing to release: the entries live as long as the store."""
