"""Checkpoints: every finished row is kept, so running the same map again calls only the rest."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

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
    model = counting_model()
    rows = doubling(model).map(range(2), checkpoint=path, progress=False)
    assert [(row.value, row.resumed) for row in rows] == [(0, False), (2, False)]
    assert len(model.requests) == 2
    assert rows.summary is not None and rows.summary.invalidated == 2


def scoring(model: FunctionModel, most: int) -> Any:
    """A command whose output's check allows scores up to ``most``: the same command, schema
    and key however ``most`` is set, as when a validator is tightened between runs."""

    class Score(BaseModel):
        value: int

        @field_validator("value")
        @classmethod
        def at_most(cls, value: int) -> int:
            if value > most:
                raise ValueError(f"a score is at most {most}")
            return value

    @command(output=Score, model=model, retries=0, max_reasks=0)
    def score(n: int) -> str:
        return f"Score {n}"

    return score


def test_a_stored_row_that_no_longer_validates_runs_again(tmp_path: Path, run_map: Call) -> None:
    def answer(times: int) -> FunctionModel:
        def reply(request: Request) -> Any:
            n = int(request.messages[0].parts[0].text.rsplit(" ", 1)[1])  # type: ignore[union-attr]
            return json_reply({"value": n * times})

        return FunctionModel(reply)

    path = tmp_path / "run.sqlite"
    first = run_map(scoring(answer(2), most=100), range(6), checkpoint=path)
    assert [row.value.value for row in first] == [0, 2, 4, 6, 8, 10]
    tighter = answer(1)
    again = run_map(scoring(tighter, most=5), range(6), checkpoint=path)
    assert [row.value.value for row in again] == [0, 2, 4, 3, 4, 5]
    assert [row.resumed for row in again] == [True, True, True, False, False, False]
    assert len(tighter.requests) == 3  # only the rows whose stored scores are now too high
    summary = again.summary
    assert (summary.ok, summary.failed, summary.resumed, summary.invalidated) == (6, 0, 3, 3)
    third = run_map(scoring(answer(1), most=5), range(6), checkpoint=path)
    assert all(row.resumed for row in third) and third.summary.invalidated == 0


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


class Tagged(BaseModel):
    """A validator that is not idempotent: a value it made is refused when read back."""

    label: str

    @field_validator("label")
    @classmethod
    def tag(cls, value: str) -> str:
        if value.startswith("tag:"):
            raise ValueError("already tagged")
        return "tag:" + value


def test_a_value_that_cannot_be_stored_is_still_handed_out(
    tmp_path: Path, run_map: Call, caplog: pytest.LogCaptureFixture
) -> None:
    @command(output=Tagged, model=FunctionModel(lambda r: json_reply({"label": "x"})))
    def label(n: int) -> str:
        return f"Label {n}"

    path = tmp_path / "run.sqlite"
    rows = run_map(label, range(3), checkpoint=path)
    assert [row.value.label for row in rows] == ["tag:x"] * 3
    assert "row 0 is not kept in the checkpoint" in caplog.text
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 0
