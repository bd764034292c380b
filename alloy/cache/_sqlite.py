"""The default store: one SQLite file, shared safely by threads and processes.

WAL mode lets readers go on while one process writes, and the busy timeout makes a writer wait
for another's lock instead of failing. Each thread (and each forked process) opens its own
connection: sqlite3 connections must not cross either.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ._store import StoreStats, expiry

#: How long a writer waits for another process's lock before SQLite gives up, in milliseconds.
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created REAL NOT NULL,
    expires REAL
);
CREATE INDEX IF NOT EXISTS replies_created ON replies (created);
"""


class SQLiteStore:
    """Entries in the SQLite file at ``path`` (made, with its folder, when missing)."""

    def __init__(self, path: str | os.PathLike[str], max_entries: int | None = None) -> None:
        self.path = Path(path).expanduser()
        self.location = f"sqlite:///{self.path}"
        self.max_entries = max_entries
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self._connect().executescript(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        local: Any = self._local
        connection = getattr(local, "connection", None)
        if connection is None or local.pid != os.getpid():
            with self._lock:
                connection = self._connect()
            local.connection, local.pid = connection, os.getpid()
        return connection

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        self._all.append(connection)
        return connection

    def get(self, key: str) -> bytes | None:
        row = (
            self._connection()
            .execute("SELECT value, expires FROM replies WHERE key = ?", (key,))
            .fetchone()
        )
        if row is None or (row[1] is not None and row[1] <= time.time()):
            return None
        value: bytes = row[0]
        return value

    def put(self, key: str, value: bytes, ttl: float | None) -> None:
        now = time.time()
        connection = self._connection()
        with _transaction(connection):
            connection.execute(
                "INSERT OR REPLACE INTO replies (key, value, created, expires) VALUES (?, ?, ?, ?)",
                (key, value, now, expiry(ttl, now)),
            )
            if self.max_entries is not None:
                self._drop_oldest(connection, self.max_entries)

    def stats(self) -> StoreStats:
        now = time.time()
        entries, expired, size = (
            self._connection()
            .execute(
                "SELECT COUNT(*), COALESCE(SUM(expires IS NOT NULL AND expires <= ?), 0), "
                "COALESCE(SUM(LENGTH(value)), 0) FROM replies",
                (now,),
            )
            .fetchone()
        )
        return StoreStats(self.location, entries - expired, expired, size)

    def clear(self) -> int:
        connection = self._connection()
        with _transaction(connection):
            return connection.execute("DELETE FROM replies").rowcount

    def prune(self) -> int:
        connection = self._connection()
        with _transaction(connection):
            gone = connection.execute(
                "DELETE FROM replies WHERE expires IS NOT NULL AND expires <= ?", (time.time(),)
            ).rowcount
            if self.max_entries is not None:
                gone += self._drop_oldest(connection, self.max_entries)
        return gone

    def close(self) -> None:
        """Close every connection this store opened (in any thread of this process)."""
        with self._lock:
            for connection in self._all:
                connection.close()
            self._all.clear()
        self._local = threading.local()

    @staticmethod
    def _drop_oldest(connection: sqlite3.Connection, keep: int) -> int:
        return connection.execute(
            "DELETE FROM replies WHERE key IN "
            "(SELECT key FROM replies ORDER BY created DESC LIMIT -1 OFFSET ?)",
            (keep,),
        ).rowcount


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``: the write lock is taken up front, so two writers
    wait on the busy timeout instead of deadlocking on an upgrade from a read lock."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.connection.execute("COMMIT" if kind is None else "ROLLBACK")
