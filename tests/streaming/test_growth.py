"""Reading every partial of a stream costs time linear in the answer (the check of
tests/formats/test_parser_growth.py: the same answer at 1, 2, 4, 8 and 16 times the size).

Users read ``partial.data`` on each partial as it arrives, so that is what is timed here, on the
answers that made it quadratic once: a long list whose every element is a new partial (each
partial copied the whole list), one string that grows all along (each partial joined and
decoded all of its pieces), and list elements streamed one by one. A stream is fed in chunks
of a few characters through the whole stream_partial() path, driver and engine included.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from alloy import command, streaming
from alloy._types import Done, Request, Response, StreamEvent, Text, TextDelta
from alloy.testing import FunctionModel

from ..formats.test_parser_growth import assert_linear

pytestmark = pytest.mark.fuzz


@dataclass
class Note:
    body: Annotated[str, streaming.grow]


@dataclass
class Row:
    name: Annotated[str, streaming.grow]
    size: int


def reading(output: Any, chunk: int, items: bool = False) -> Callable[[str], object]:
    """A function that streams its text through ``stream_partial`` (``stream_items``) in chunks
    of ``chunk`` characters, reading ``data`` on every partial."""

    def read(text: str) -> int:
        deltas = [TextDelta(text[i : i + chunk]) for i in range(0, len(text), chunk)]

        class Streaming(FunctionModel):
            def stream(self, request: Request) -> Iterator[StreamEvent]:
                yield from deltas
                yield Done(Response((Text(text),)))

        @command(output=output, model=Streaming(lambda request: text))
        def answer(source: str) -> str:
            return source

        count = 0
        if items:
            for _ in answer.stream_items("x"):
                count += 1
            return count
        for partial in answer.stream_partial("x"):
            if partial.data is not None:
                count += 1
        return count

    return read


def numbers(k: int) -> str:
    return json.dumps({"value": [7] * k}, separators=(",", ":"))


# Each case: how it is read, how its answer is built, and the smallest size (in characters).
# Copying a list of n numbers costs well under a microsecond per thousand, so the list is long
# enough for copies of it to outweigh the rest of a partial's cost at 16 times the size.
CASES: dict[str, tuple[Callable[[str], object], Callable[[int], str], int]] = {
    "a list of numbers, one partial per number": (reading(list[int], 2), numbers, 8192),
    "one string growing all along": (
        reading(Note, 3),
        lambda k: json.dumps({"body": "words and éscapes " * k}),
        2048,
    ),
    "a list of objects with growing strings": (
        reading(list[Row], 4),
        lambda k: json.dumps({"value": [{"name": "a row", "size": 12}] * k}),
        2048,
    ),
    "list elements one by one": (reading(list[int], 2, items=True), numbers, 2048),
}


@pytest.mark.parametrize(("read", "build", "size"), CASES.values(), ids=list(CASES))
def test_reading_every_partial_grows_linearly(
    read: Callable[[str], object], build: Callable[[int], str], size: int, fuzz_scale: int
) -> None:
    assert_linear(read, build, size if fuzz_scale == 1 else 4 * size)
