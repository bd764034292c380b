"""docs/serving.md's client table is the one ``clients.json`` makes, and each row names a
runner that proves it."""

from __future__ import annotations

from .matrix import SHOWN_BY, documented, rows, table


def test_the_docs_table_is_the_generated_one() -> None:
    assert documented() == table(), (
        "docs/serving.md's client table is out of date: python -m tests.interop.matrix --write"
    )


def test_every_row_is_run_somewhere_and_a_refused_row_says_why() -> None:
    names = [each.name for each in rows()]
    assert len(names) == len(set(names))
    for each in rows():
        assert each.runner in SHOWN_BY
        assert bool(each.refused) == bool(each.error), each.name
