"""A run's checkpoint: every finished row, in an embedded SQLite file, so a run can resume.

Each row is written (and committed) the moment it finishes, keyed by its stable key
(``_inputs.row_key``), with its value as the reply the output type reads back (``render``), or
its error's type and message. The file is in WAL mode with a busy timeout, so a reader (``alloy
map`` run again, a second process) never blocks a writer, and a process killed at any point
leaves every committed row intact: SQLite rolls back only the write that was under way.

Text that is not valid Unicode (a lone surrogate, which a model's reply can hold) cannot be
SQLite text: it is kept as UTF-8 bytes with the surrogates passed through, and read back as the
same text, so no row's record is lost for it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._types import Usage
from ..errors import ConfigurationError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    key TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    value TEXT,
    error_type TEXT,
    error TEXT,
    usage TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    cost REAL,
    finished REAL NOT NULL,
    plain TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    tag TEXT PRIMARY KEY,
    wire TEXT NOT NULL,
    model TEXT NOT NULL,
    job TEXT,
    state TEXT NOT NULL,
    requests INTEGER NOT NULL,
    intended REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_rows (
    custom_id TEXT PRIMARY KEY,
    tag TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_inputs (
    custom_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    arguments TEXT NOT NULL
);
"""

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "reasoning_tokens",
    "requests",
    "cache_write_tokens",
    "cache_hits",
)


@dataclass(frozen=True, slots=True)
class Stored:
    """One finished row as the checkpoint holds it."""

    ok: bool
    value: str | None
    error_type: str | None
    error: str | None
    usage: Usage
    attempts: int
    cost: float | None


class Checkpoint:
    """The rows of a run finished so far, in the SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                raise ConfigurationError(
                    f"checkpoint {str(self.path)!r}: the folder {str(self.path.parent)!r} "
                    "does not exist"
                )
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigurationError(
                f"checkpoint {str(self.path)!r} is not a usable SQLite file: {exc}"
            ) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> Stored | None:
        found = self._db.execute(
            "SELECT ok, value, error_type, error, usage, attempts, cost FROM rows WHERE key = ?",
            (key,),
        ).fetchone()
        if found is None:
            return None
        ok, value, error_type, error, usage, attempts, cost = found
        return Stored(
            bool(ok), _text(value), error_type, _text(error), _usage(usage), attempts, cost
        )

    def put(
        self,
        key: str,
        position: int,
        *,
        value: str | None = None,
        plain: str | None = None,
        error: BaseException | None = None,
        usage: Usage,
        attempts: int,
        cost: float | None,
    ) -> None:
        """Record a finished row (a later record of the same row replaces it), committed."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    position,
                    int(error is None),
                    _storable(value),
                    type(error).__name__ if error is not None else None,
                    _storable(str(error)) if error is not None else None,
                    json.dumps([getattr(usage, name) for name in _USAGE_FIELDS]),
                    attempts,
                    cost,
                    time.time(),
                    _storable(plain),
                ),
            )

    def note(self, name: str, value: Any) -> None:
        """Remember something about the run (its command, model...) for ``alloy`` to show."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?)", (name, json.dumps(value, default=str))
            )

    # -- provider batch jobs (``alloy.batch``) --
    def intend(
        self,
        tag: str,
        wire: str,
        model: str,
        custom_ids: list[str],
        inputs: Mapping[str, tuple[int, str]] | None = None,
    ) -> None:
        """Record, before submitting, that the requests ``custom_ids`` go in batch ``tag``: a
        process that dies between submitting and :meth:`submitted` finds the job by its tag.
        ``inputs`` (by custom id: the row's position and its arguments as JSON) let ``alloy
        batch results`` read the answers without the rows."""
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO batches VALUES (?, ?, ?, NULL, 'intended', ?, ?)",
                (tag, wire, model, len(custom_ids), time.time()),
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_rows VALUES (?, ?)", ((c, tag) for c in custom_ids)
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_inputs VALUES (?, ?, ?)",
                ((c, position, arguments) for c, (position, arguments) in (inputs or {}).items()),
            )

    def submitted(self, tag: str, job: str) -> None:
        with self._db:
            self._db.execute(
                "UPDATE batches SET job = ?, state = 'submitted' WHERE tag = ?", (job, tag)
            )

    def batch_state(self, tag: str, state: str) -> None:
        """``submitted`` -> ``done`` (the job ended) -> ``read`` (every row of it recorded)."""
        with self._db:
            self._db.execute("UPDATE batches SET state = ? WHERE tag = ?", (state, tag))

    def batches(self) -> list[tuple[str, str, str, str | None, str, int, float]]:
        """Every batch of the run: (tag, wire, model, job, state, requests, intended)."""
        return list(self._db.execute("SELECT * FROM batches ORDER BY intended"))

    def batch_of(self, custom_id: str) -> str | None:
        found = self._db.execute(
            "SELECT tag FROM batch_rows WHERE custom_id = ?", (custom_id,)
        ).fetchone()
        return None if found is None else str(found[0])

    def unfinished(self, tag: str) -> list[str]:
        """The custom ids of batch ``tag`` whose row is not finished yet."""
        return [
            str(custom_id)
            for (custom_id,) in self._db.execute(
                "SELECT custom_id FROM batch_rows WHERE tag = ? AND custom_id NOT IN "
                "(SELECT key FROM rows) ORDER BY custom_id",
                (tag,),
            )
        ]

    def batch_input(self, custom_id: str) -> tuple[int, str] | None:
        """The row's position and its arguments as JSON, as :meth:`intend` recorded them."""
        found = self._db.execute(
            "SELECT position, arguments FROM batch_inputs WHERE custom_id = ?", (custom_id,)
        ).fetchone()
        return None if found is None else (int(found[0]), str(found[1]))

    def finished(self) -> Iterator[tuple[str, int, bool, str | None, str | None, str | None]]:
        """Every finished row: (key, position, ok, value as JSON, error type, error)."""
        for key, position, ok, plain, error_type, error in self._db.execute(
            "SELECT key, position, ok, plain, error_type, error FROM rows ORDER BY position"
        ):
            yield key, position, ok, _text(plain), error_type, _text(error)

    def notes(self) -> dict[str, Any]:
        return {name: json.loads(value) for name, value in self._db.execute("SELECT * FROM runs")}

    def counts(self) -> tuple[int, int]:
        """Rows finished well and rows failed."""
        ok, failed = self._db.execute(
            "SELECT COALESCE(SUM(ok), 0), COALESCE(SUM(1 - ok), 0) FROM rows"
        ).fetchone()
        return int(ok), int(failed)


def plain_json(value: Any) -> str:
    """``value`` as JSON for ``alloy batch results``; a lone surrogate in it as a JSON escape."""
    from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

    try:
        return to_json(value, serialize_unknown=True).decode()
    except PydanticSerializationError:  # text that is not valid Unicode
        return json.dumps(to_jsonable_python(value, serialize_unknown=True))


def _storable(text: str | None) -> str | bytes | None:
    """``text`` as SQLite can keep it: as it is, or as bytes when it is not valid Unicode."""
    if text is None:
        return None
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _text(stored: str | bytes | None) -> str | None:
    """What ``_storable`` kept, as the text it was."""
    if isinstance(stored, bytes):
        return stored.decode("utf-8", "surrogatepass")
    return stored


def _usage(text: str) -> Usage:
    try:
        counts = json.loads(text)
        return Usage(*(int(c) for c in counts[: len(_USAGE_FIELDS)]))
    except (ValueError, TypeError):
        return Usage()
