"""A whole number longer than Python reads (4,300 digits) in a streamed answer ends the way it
ends in a call: a ParseError saying the number is out of range, never a raw ValueError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alloy import ParseError, command
from alloy.testing import script

from .helpers import collector

LONG = "1" + "0" * 5000
FORMS: dict[str, Callable[..., Any]] = {
    "call": lambda cmd, text: cmd(text),
    "stream_partial": collector("sync", "stream_partial"),
    "astream_partial": collector("async", "stream_partial"),
    "stream_items": collector("sync", "stream_items"),
    "astream_items": collector("async", "stream_items"),
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("answer", ['{"value": [%s]}', "[1, -%s, 3]"])
def test_a_number_too_long_to_read_is_a_parse_error_in_every_form(form: str, answer: str) -> None:
    reply = answer % LONG

    @command(output=list[int], model=script(reply), max_reasks=0)
    def numbers(text: str) -> str:
        return text

    with pytest.raises(ParseError, match="number out of range"):
        FORMS[form](numbers, "x")
