"""instructor, unchanged, against alloy serve: ``python instructor_client.py <base URL of /v1>``.

Run by ``make interop`` in a virtualenv of its own: instructor pins ``jiter<0.15``, which the
openai releases alloy's tests use cannot have. Runs the rows of clients.json whose runner is
``instructor``, prints one line per row, and exits 1 when a row does not do what the file says.
Needs only instructor (with its openai) and pydantic: it imports nothing of alloy.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import instructor
import openai
from pydantic import BaseModel

PROMPT = [{"role": "user", "content": "Rate the film Up."}]


class Rating(BaseModel):
    title: str
    stars: int


def client(base: str, mode: Any) -> Any:
    sdk = openai.OpenAI(base_url=base, api_key="a-caller-key", max_retries=0)
    return instructor.from_openai(sdk, mode=mode)


def extract(mode: Any) -> Callable[[str], None]:
    def run(base: str) -> None:
        rating = client(base, mode).chat.completions.create(
            model="support", messages=PROMPT, response_model=Rating, max_retries=0
        )
        assert isinstance(rating, Rating), rating

    return run


def partial(base: str) -> None:
    """create_partial reads the tool call's argument deltas: several partials, the last whole."""
    partials = list(
        client(base, instructor.Mode.TOOLS).chat.completions.create_partial(
            model="open", messages=PROMPT, response_model=Rating, max_retries=0
        )
    )
    assert len(partials) > 1, partials
    Rating.model_validate(partials[-1].model_dump())


DRIVERS: dict[str, Callable[[str], None]] = {
    "instructor: Mode.TOOLS (default)": extract(instructor.Mode.TOOLS),
    "instructor: Mode.JSON_SCHEMA": extract(instructor.Mode.JSON_SCHEMA),
    "instructor: create_partial (Mode.TOOLS)": partial,
    "instructor: Mode.JSON": extract(instructor.Mode.JSON),
}


def main(base: str) -> int:
    logging.getLogger("instructor").setLevel(logging.CRITICAL)  # a refused row's retry log
    rows = json.loads((Path(__file__).parent / "clients.json").read_text("utf-8"))
    mine = [row for row in rows if row["runner"] == "instructor"]
    failed = 0
    for row in mine:
        name = f"{row['client']}: {row['mode']}"
        try:
            DRIVERS[name](base)
            outcome = (
                f"expected a refusal ({row['error']}), but it worked" if "refused" in row else ""
            )
        except Exception as error:
            outcome = "" if "refused" in row and row["error"] in str(error) else repr(error)
        failed += bool(outcome)
        print(f"FAIL  {name}: {outcome}" if outcome else f"ok    {name}", flush=True)
    extra = set(DRIVERS) - {f"{row['client']}: {row['mode']}" for row in mine}
    for name in sorted(extra):
        failed += 1
        print(f"FAIL  {name}: a driver with no row in clients.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
