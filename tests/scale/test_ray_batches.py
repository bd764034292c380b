"""``alloy.ray.CommandBatches`` called as Ray Data calls it, on batches in each of Ray's formats,
without a cluster: the result columns, failed rows, and the mistakes refused before any call."""

from __future__ import annotations

from typing import Any

import pytest

pa = pytest.importorskip(
    "pyarrow", reason="alloy.ray needs Ray Data: pip install 'alloy[ray]' (make test installs it)"
)
pytest.importorskip(
    "ray", reason="alloy.ray needs Ray Data: pip install 'alloy[ray]' (make test installs it)"
)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from alloy import ConfigurationError, command  # noqa: E402
from alloy.formats import YesNo  # noqa: E402
from alloy.ray import STATUS_COLUMNS, CommandBatches, typed  # noqa: E402
from alloy.testing.emulator import Emulator  # noqa: E402

from .commands import Ticket, classify_offline, count  # noqa: E402

TEXTS = ["the printer is on fire", "password reset", "invoice 42 is wrong"]


@pytest.mark.parametrize(
    "batch",
    [
        pa.table({"id": [1, 2, 3], "text": TEXTS}),
        pd.DataFrame({"id": [1, 2, 3], "text": TEXTS}),
        {"id": np.array([1, 2, 3]), "text": np.array(TEXTS)},
    ],
    ids=["pyarrow", "pandas", "numpy"],
)
def test_each_batch_format_gives_a_column_per_field_and_the_status(batch: Any) -> None:
    batches = CommandBatches(classify_offline)
    out = batches(batch)
    assert isinstance(out, pa.Table)
    assert out.column_names == ["id", "text", "category", "urgent", *STATUS_COLUMNS]
    rows = out.to_pylist()
    expected = [classify_offline(text) for text in TEXTS]
    assert [typed(classify_offline, row) for row in rows] == expected
    assert all(isinstance(ticket, Ticket) for ticket in expected)
    assert [row["id"] for row in rows] == [1, 2, 3]
    assert all(row["ok"] and row["error"] is None and row["attempts"] == 1 for row in rows)
    assert all(row["input_tokens"] > 0 and row["output_tokens"] > 0 for row in rows)


def test_other_outputs_come_back_as_one_value_column(emu: Emulator) -> None:
    @command(output=YesNo(), model="offline")
    def urgent(text: str) -> str:
        return f"Is this urgent? {text}"

    out = CommandBatches(urgent)(pa.table({"text": TEXTS})).to_pylist()
    assert [row["value"] for row in out] == [urgent(text) for text in TEXTS]
    counted = CommandBatches(count)(pa.table({"word": ["kiwi", "fig"]}))
    assert counted.column_names == ["word", "value", *STATUS_COLUMNS]
    assert counted.column("value").to_pylist() == [count("kiwi"), count("fig")]
    assert typed(count, counted.to_pylist()[0]) == count("kiwi")


def test_a_failed_row_says_why_and_the_others_carry_on() -> None:
    @command(output=int, model="offline")
    def letters(word: str) -> str:
        if not word:
            raise ValueError("no word to count")
        return f"How many letters in {word}?"

    rows = CommandBatches(letters)(pa.table({"word": ["kiwi", "", "fig"]})).to_pylist()
    assert [row["ok"] for row in rows] == [True, False, True]
    assert rows[1]["value"] is None and rows[1]["error"] == "ValueError: no word to count"
    with pytest.raises(ValueError, match="the row failed: ValueError: no word to count"):
        typed(letters, rows[1])


def test_mistakes_are_refused_before_any_call() -> None:
    with pytest.raises(ConfigurationError, match="runs an alloy command"):
        CommandBatches(len)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="concurrency"):
        CommandBatches(classify_offline, concurrency=0)
    batches = CommandBatches(classify_offline)
    with pytest.raises(ConfigurationError, match="none named text"):
        batches(pa.table({"body": TEXTS}))
    with pytest.raises(ConfigurationError, match="already has columns named ok"):
        batches(pa.table({"text": TEXTS, "ok": [True] * 3}))
