"""Checkpoints: every finished row is kept, so running the same map again calls only the rest."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, ServerError, command
from alloy._types import Request
from alloy.rows import Failed, ResumedFailure
from alloy.rows._checkpoint import Checkpoint
from alloy.testing import FunctionModel, json_reply

from ..conftest import Call


def counting_model(fail: set[int] | None = None) -> FunctionModel:
    def answer(request: Request) -> Any:
        n = int(request.messages[0].parts[0].text.rsplit(" ", 1)[1])  # type: ignore[union-attr]
        if fail and n in fail:
            return ServerError("down", status_code=500)
        return json_reply(n * 2, wrap=True)

    return FunctionModel(answer)


def doubling(model: FunctionModel) -> Any:
    @command(output=int, model=model, retries=0)
    def double(n: int) -> str:
        return f"Double {n}"

    return double


def test_a_second_run_takes_every_finished_row_from_the_checkpoint(
    tmp_path: Path, run_map: Call
) -> None:
    model = counting_model()
    path = tmp_path / "run.sqlite"
    first = run_map(doubling(model), range(20), checkpoint=path)
    assert len(model.requests) == 20
    again = run_map(doubling(model), range(20), checkpoint=path)
    assert len(model.requests) == 20  # no call at all
    assert [row.value for row in again] == [row.value for row in first]
    assert all(row.resumed for row in again)
    assert [row.key for row in again] == [row.key for row in first]
    assert [row.usage for row in again] == [row.usage for row in first]
    assert (again.summary.resumed, again.summary.usage.total_tokens) == (20, 0)


def test_only_unfinished_rows_run_after_a_run_stopped_early(tmp_path: Path) -> None:
    model = counting_model()
    path = tmp_path / "run.sqlite"
    rows = doubling(model).map(range(40), checkpoint=path, concurrency=2, progress=False)
    done = [next(rows) for _ in range(10)]
    rows.close()  # as Ctrl-C would
    made = len(model.requests)
    assert made >= 10
    rest = list(doubling(model).map(range(40), checkpoint=path, progress=False))
    assert [row.value for row in rest] == [n * 2 for n in range(40)]
    assert sum(row.resumed for row in rest) >= len(done)
    # Each row was asked for once, save those in flight when the first run stopped.
    assert len(model.requests) - 40 <= made - len(done)


def test_failed_rows_run_again_unless_kept(tmp_path: Path, run_map: Call) -> None:
    path = tmp_path / "run.sqlite"
    first = run_map(doubling(counting_model(fail={3})), range(5), checkpoint=path)
    assert [row.ok for row in first] == [True, True, True, False, True]
    kept = run_map(doubling(counting_model()), range(5), checkpoint=path, retry_failed=False)
    assert isinstance(kept[3], Failed) and kept[3].resumed
    assert isinstance(kept[3].error, ResumedFailure) and "ServerError: down" in str(kept[3].error)
    healed_model = counting_model()
    healed = run_map(doubling(healed_model), range(5), checkpoint=path)
    assert [row.value for row in healed] == [0, 2, 4, 6, 8]
    assert len(healed_model.requests) == 1  # only the row that had failed


def test_the_key_follows_the_model_the_schema_and_the_options(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    model = counting_model()
    list(doubling(model).map(range(3), checkpoint=path, progress=False))
    for changed in (
        doubling(model).with_options(temperature=0.5),
        doubling(model).with_options(system="Be brief."),
    ):
        before = len(model.requests)
        list(changed.map(range(3), checkpoint=path, progress=False))
        assert len(model.requests) == before + 3

    @command(output=float, model=model, retries=0)
    def double(n: int) -> str:  # the same name and prompt, another output type
        return f"Double {n}"

    before = len(model.requests)
    assert [row.value for row in double.map(range(3), checkpoint=path, progress=False)] == [
        0.0,
        2.0,
        4.0,
    ]
    assert len(model.requests) == before + 3


def test_values_read_back_are_validated_as_the_type(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    list(doubling(counting_model()).map(range(2), checkpoint=path, progress=False))
    with sqlite3.connect(path) as db:
        db.execute('UPDATE rows SET value = \'{"value": "not a number"}\'')
    with pytest.raises(Exception, match="int"):
        list(doubling(counting_model()).map(range(2), checkpoint=path, progress=False))


def test_a_file_that_is_not_a_checkpoint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(ConfigurationError, match="not a usable SQLite file"):
        list(doubling(counting_model()).map(range(2), checkpoint=path, progress=False))
    with pytest.raises(ConfigurationError, match="does not exist"):
        Checkpoint(tmp_path / "no" / "such" / "folder" / "run.sqlite")


def test_the_checkpoint_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    list(doubling(counting_model()).map(range(2), checkpoint=path, progress=False))
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 2
