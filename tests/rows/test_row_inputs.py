"""How a row becomes a call's arguments: each reading in turn, and a row that fits none (or that
holds text no provider or file can take) failing alone while the run goes on."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alloy import command
from alloy._types import Request
from alloy.rows import Args, Failed, RowInputError
from alloy.testing import FunctionModel, json_reply

from ..conftest import Call


def prompts_of(model: FunctionModel) -> list[str]:
    return [r.messages[-1].parts[0].text for r in model.requests]  # type: ignore[union-attr]


def answering_one() -> FunctionModel:
    return FunctionModel(lambda request: json_reply(1, wrap=True))


def test_a_row_that_fits_no_reading_is_a_row_input_error(run_map: Call) -> None:
    model = answering_one()

    @command(output=int, model=model)
    def echo(text: str, lang: str = "en") -> str:
        return f"{text!r} in {lang}"

    rows = run_map(
        echo,
        [
            ("a", "b", "c"),  # three positional arguments for two parameters
            ("b", "fr"),
            ["c", "de"],  # a list for a str parameter: positional arguments
            ["d"],
            "e",
            {"text": "f"},
            ["g", "h", "i"],
            {"text": "j", "tone": "dry"},
            Args(("k", "l")),  # Args says it outright: the tuple is the text
        ],
        concurrency=1,
    )
    assert [row.ok for row in rows] == [False, True, True, True, True, True, False, False, True]
    refused = rows[0]
    assert isinstance(refused, Failed) and isinstance(refused.error, RowInputError)
    assert "row ('a', 'b', 'c') does not fit " in str(refused.error)
    assert str(refused.error).endswith(".echo(text, lang='en'): too many positional arguments")
    assert isinstance(rows[6].error, RowInputError)
    assert prompts_of(model) == [
        "'b' in fr",
        "'c' in de",
        "'d' in en",
        "'e' in en",
        "'f' in en",
        "('k', 'l') in en",
    ]
    assert rows.summary.failed == 3


def test_a_sequence_or_record_row_is_the_one_argument_its_type_takes(run_map: Call) -> None:
    model = answering_one()

    @command(output=int, model=model)
    def join(words: list[str], sep: str = " ") -> str:
        return sep.join(words)

    @command(output=int, model=model)
    def span(pair: Sequence[str] | None = None) -> str:
        return f"span {list(pair or [])}"

    @command(output=int, model=model)
    def anything(value, note=""):  # type: ignore[no-untyped-def]
        return f"any {value!r}"

    assert all(row.ok for row in run_map(join, [["a", "b"], ["c"], (["d", "e"], "-")]))
    assert all(row.ok for row in run_map(span, [("x", "y"), ["z"]], concurrency=1))
    assert all(row.ok for row in run_map(anything, [[1, 2], (3, 4, 5)], concurrency=1))
    assert prompts_of(model) == [
        "a b",
        "c",
        "d-e",
        "span ['x', 'y']",
        "span ['z']",
        "any [1, 2]",
        "any (3, 4, 5)",
    ]


def test_a_row_with_a_lone_surrogate_fails_alone(tmp_path: Path, run_map: Call) -> None:
    model = answering_one()

    @command(output=int, model=model)
    def count(text: str) -> str:
        return f"Count {text}"

    path = tmp_path / "run.sqlite"
    rows = run_map(count, ["a", "b\ud800c", {"text": "\udcff"}, "d"], checkpoint=path)
    assert [row.ok for row in rows] == [True, False, False, True]
    assert isinstance(rows[1].error, RowInputError)
    assert "not valid Unicode: it holds '\\ud800', a lone surrogate" in str(rows[1].error)
    str(rows[1].error).encode()  # the message itself is sendable text
    assert prompts_of(model) == ["Count a", "Count d"]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 2


def test_bytes_that_are_not_text_still_have_a_key(run_map: Call) -> None:
    model = answering_one()

    @command(output=int, model=model)
    def size(data: bytes) -> str:
        return f"Size {len(data)}"

    rows = run_map(size, [b"\xff\xd8\xff\xe0", b"plain"], concurrency=1)
    assert [row.ok for row in rows] == [True, True]
    assert rows[0].key != rows[1].key


def test_a_reply_that_is_not_valid_unicode_is_kept_in_the_checkpoint(
    tmp_path: Path, run_map: Call
) -> None:
    def reply(request: Request) -> Any:
        return "half a pair: \ud83d, then more"

    @command(model=FunctionModel(reply))
    def talk(n: int) -> str:
        return f"Talk {n}"

    path = tmp_path / "run.sqlite"
    first = run_map(talk, range(3), checkpoint=path)
    assert [row.value for row in first] == ["half a pair: \ud83d, then more"] * 3
    again = run_map(talk, range(3), checkpoint=path)
    assert all(row.resumed for row in again)
    assert [row.value for row in again] == [row.value for row in first]


def test_a_command_without_output_keeps_its_rows_in_the_checkpoint(
    tmp_path: Path, run_map: Call
) -> None:
    @command(output=None, model=FunctionModel(lambda request: "done"))
    def act(n: int) -> str:
        return f"Do {n}"

    path = tmp_path / "run.sqlite"
    assert [row.value for row in run_map(act, range(3), checkpoint=path)] == [None] * 3
    again = run_map(act, range(3), checkpoint=path)
    assert [(row.value, row.resumed) for row in again] == [(None, True)] * 3
