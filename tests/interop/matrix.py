"""The client compatibility matrix: ``clients.json`` lists each client and mode, who drives it
(``pytest``: tests/interop/test_python_clients.py; ``node`` and ``instructor``: ``make
interop``) and, for a mode alloy serve refuses, why. Every runner checks its rows against a
live ``alloy serve``: a row marked working must work and a refused one must be refused with
that error, so the table docs/serving.md shows is what the runners last proved.

``python -m tests.interop.matrix`` prints the table; ``--write`` puts it into docs/serving.md,
between the two markers.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "serving.md"
BEGIN = "<!-- clients table: made by `python -m tests.interop.matrix --write` -->"
END = "<!-- end of the clients table -->"
#: Where each runner's rows are proved, as the table names it.
SHOWN_BY = {
    "pytest": "`tests/interop/test_python_clients.py`",
    "instructor": "`make interop` (`tests/interop/instructor_client.py`)",
    "node": "`make interop` (`tests/interop/js/clients.mjs`)",
}


@dataclass(frozen=True)
class Row:
    client: str
    mode: str
    runner: str
    #: Why alloy serve refuses this mode ("" when it works), and what the client's error says.
    refused: str = ""
    error: str = ""

    @property
    def name(self) -> str:
        return f"{self.client}: {self.mode}"


def rows(runner: str | None = None) -> list[Row]:
    """The rows of ``clients.json``, those of one runner when it is given."""
    every = [Row(**each) for each in json.loads((HERE / "clients.json").read_text("utf-8"))]
    return [each for each in every if runner is None or each.runner == runner]


def table() -> str:
    """The compatibility table, one row per client and mode."""
    lines = ["| Client | Mode | Works | Shown by |", "| --- | --- | --- | --- |"]
    for each in rows():
        works = f"refused: {each.refused}" if each.refused else "works"
        lines.append(f"| {each.client} | `{each.mode}` | {works} | {SHOWN_BY[each.runner]} |")
    return "\n".join(lines)


def documented() -> str:
    """The table as docs/serving.md has it now, between the markers."""
    text = DOCS.read_text("utf-8")
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()


def write() -> None:
    text = DOCS.read_text("utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    DOCS.write_text(f"{head}{BEGIN}\n{table()}\n{END}{tail}", "utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        print(table())
