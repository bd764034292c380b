"""The default store: one SQLite file, shared safely by threads and processes.

WAL mode lets readers go on while one process writes, and the busy timeout makes a writer wait
for another's lock instead of failing. Each thread (and each forked process) opens its own
connection: sqlite3 connections must not cross either.

A bounded store (``max_entries``) keeps its number of entries in a one-row table that triggers
update on every insert and delete, so a write reads the count instead of counting, and trims
only once the count passes the bound by :func:`slack`, the oldest entries first, down to the
bound: each write costs the same at a hundred entries and at a million, whichever process
wrote before it.

A store that cannot be opened (a file that is no SQLite database or is cut short, a folder
that cannot be made or written, a full disk) does not fail where it is made: each use tries to
open it again and raises what stops it, which a call counts as a miss (see ``_notices``). A
file this process may not write, or in a folder it may not write (a committed replay cache in
a read-only checkout), is opened read-only: it is read, and a write raises
:class:`ReadOnlyStore`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from ._store import StoreStats, expiry

#: How long a writer waits for another process's lock before SQLite gives up, in milliseconds.
BUSY_TIMEOUT_MS = 30_000

#: Made in one transaction, so a file an older alloy made (without the count) is counted once,
#: with no writer in between.
_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created REAL NOT NULL,
    expires REAL
);
CREATE INDEX IF NOT EXISTS replies_created ON replies (created);
CREATE TABLE IF NOT EXISTS replies_count (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    entries INTEGER NOT NULL
);
INSERT OR IGNORE INTO replies_count (id, entries) SELECT 1, COUNT(*) FROM replies;
CREATE TRIGGER IF NOT EXISTS replies_added AFTER INSERT ON replies
BEGIN UPDATE replies_count SET entries = entries + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS replies_removed AFTER DELETE ON replies
BEGIN UPDATE replies_count SET entries = entries - 1 WHERE id = 1; END;
COMMIT;
"""

#: A replaced entry is updated in place (an upsert), so the insert trigger counts only new keys.
_PUT = (
    "INSERT INTO replies (key, value, created, expires) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET "
    "value = excluded.value, created = excluded.created, expires = excluded.expires"
)


#: How many times this process was forked from its parent, so far: a child must not use its
#: parent's connections (see ``SQLiteStore._connection``).
_forks = 0


def _forked() -> None:
    global _forks
    _forks += 1


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork to follow
    os.register_at_fork(after_in_child=_forked)


class ReadOnlyStore(sqlite3.OperationalError):
    """A write to a store opened read-only: the file, or its folder, may not be written."""


def slack(max_entries: int) -> int:
    """How far past ``max_entries`` a store may grow before a write trims it back to the bound:
    1/64 of it (none below 64 entries), so a trim deletes a batch at a time."""
    return max_entries // 64


#: How a store's file is opened: read and written, read-only, or read-only and immutable (a
#: WAL file in a folder no one may write: SQLite cannot make the shared-memory file beside it).
OpenMode = Literal["readwrite", "readonly", "immutable"]


class SQLiteStore:
    """Entries in the SQLite file at ``path`` (made, with its folder, when missing)."""

    def __init__(self, path: str | os.PathLike[str], max_entries: int | None = None) -> None:
        self.path = Path(path).expanduser()
        self.location = f"sqlite:///{self.path}"
        self.max_entries = max_entries
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        #: How the file is opened, once it was (None: not yet, or it could not be).
        self.mode: OpenMode | None = None
        try:
            with self._lock:
                self._open()
        except (OSError, sqlite3.Error):
            pass  # the store cannot serve now: each use tries again and raises why

    @property
    def read_only(self) -> bool:
        return self.mode in ("readonly", "immutable")

    def _open(self) -> None:
        """Open the file (see the module's docstring); raises what stops it."""
        if _writable(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = self._connect("readwrite")
            try:
                connection.executescript(_SCHEMA)
            except BaseException:
                self._forget(connection)
                raise
            self.mode = "readwrite"
            return
        if not self.path.is_file():
            raise ReadOnlyStore(f"{self.path} does not exist, and cannot be made: {_READ_ONLY_WHY}")
        for mode in ("readonly", "immutable"):
            connection = self._connect(mode)
            try:
                connection.execute("SELECT key FROM replies LIMIT 1").fetchall()
            except sqlite3.Error:
                self._forget(connection)
                if mode == "immutable":
                    raise
                continue
            self.mode = mode
            return

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, made on its first use here and again in a forked child
        (``_forks`` counts forks instead of asking for the process id on every read)."""
        local: Any = self._local
        connection = getattr(local, "connection", None)
        if connection is None or local.forks != _forks:
            with self._lock:
                if self.mode is None:
                    self._open()
                assert self.mode is not None
                connection = self._connect(self.mode)
            local.connection, local.forks = connection, _forks
        return connection

    def _connect(self, mode: OpenMode) -> sqlite3.Connection:
        if mode == "readwrite":
            target: str | Path = self.path
        else:
            target = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            if mode == "immutable":
                target += "&immutable=1"
        connection = sqlite3.connect(
            target,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
            uri=mode != "readwrite",
        )
        try:
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if mode == "readwrite":
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            connection.close()
            raise
        self._all.append(connection)
        return connection

    def _forget(self, connection: sqlite3.Connection) -> None:
        connection.close()
        self._all.remove(connection)

    def _writer(self) -> sqlite3.Connection:
        """This thread's connection, to write with: a read-only store refuses at once."""
        connection = self._connection()
        if self.read_only:
            raise ReadOnlyStore(f"{self.location} is opened read-only: {_READ_ONLY_WHY}")
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
        connection = self._writer()
        with _transaction(connection):
            connection.execute(_PUT, (key, value, now, expiry(ttl, now)))
            bound = self.max_entries
            if bound is not None and _count(connection) > bound + slack(bound):
                _drop_oldest(connection, bound)

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
        connection = self._writer()
        with _transaction(connection):
            return connection.execute("DELETE FROM replies").rowcount

    def prune(self) -> int:
        connection = self._writer()
        with _transaction(connection):
            gone = connection.execute(
                "DELETE FROM replies WHERE expires IS NOT NULL AND expires <= ?", (time.time(),)
            ).rowcount
            # Recounted: an older alloy replaced entries with a delete its triggers did not see.
            connection.execute(
                "UPDATE replies_count SET entries = (SELECT COUNT(*) FROM replies) WHERE id = 1"
            )
            if self.max_entries is not None:
                gone += _drop_oldest(connection, self.max_entries)
        return gone

    def close(self) -> None:
        """Close every connection this store opened (in any thread of this process)."""
        with self._lock:
            for connection in self._all:
                connection.close()
            self._all.clear()
        self._local = threading.local()


_READ_ONLY_WHY = "this process may not write the file or its folder (or it is no folder)"


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` (made when missing, with its folders): the
    file, else the nearest folder that exists (a read-only file system counts too)."""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    for folder in path.parents:
        if folder.exists():
            return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)
    return False


def _count(connection: sqlite3.Connection) -> int:
    """The number of entries, as the triggers keep it: one row read, not a count."""
    row = connection.execute("SELECT entries FROM replies_count WHERE id = 1").fetchone()
    return int(row[0]) if row is not None else 0


def _drop_oldest(connection: sqlite3.Connection, keep: int) -> int:
    """Delete the oldest entries past ``keep``, walking the ``created`` index from its old end
    (only as far as the entries it deletes)."""
    excess = _count(connection) - keep
    if excess <= 0:
        return 0
    return connection.execute(
        "DELETE FROM replies WHERE key IN (SELECT key FROM replies ORDER BY created LIMIT ?)",
        (excess,),
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
