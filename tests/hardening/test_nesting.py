"""One nesting limit for a model's JSON on every Python version (3.13's json.loads goes far
deeper than 3.10-3.12's before a RecursionError; pydantic stops near 200 levels anyway)."""

from __future__ import annotations

import pytest

from alloy._extract import extract_json
from alloy._nesting import MAX_NESTING, check_nesting
from alloy._output import InvalidOutput
from alloy._stream_accumulator import parse_arguments


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_the_limit_itself_is_allowed_and_one_more_level_is_not() -> None:
    check_nesting(nested(MAX_NESTING))
    with pytest.raises(RecursionError, match=f"deeper than {MAX_NESTING}"):
        check_nesting(nested(MAX_NESTING + 1))
    with pytest.raises(RecursionError):
        check_nesting('{"a": ' * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1))


def test_only_open_brackets_count_not_siblings_or_brackets_in_strings() -> None:
    check_nesting("[" + "[], " * 5000 + "[]]")  # many brackets, two levels
    check_nesting('["' + "[" * 5000 + '"]')  # inside a string
    check_nesting('["\\"' + "{" * 5000 + '"]')  # after an escaped quote, still inside
    check_nesting("[" + '"\\\\", ' * 10 + '"' + "[" * 5000 + '"]')  # escaped backslashes


def test_readers_refuse_deep_json_the_same_way_everywhere() -> None:
    deep = '{"a": ' * 600 + "1" + "}" * 600  # json.loads reads this on every Python
    with pytest.raises(InvalidOutput) as info:
        extract_json("here: " + deep)
    assert "nested too deeply" in info.value.feedback
    assert parse_arguments(deep) == "nested too deeply"
    assert extract_json('{"a": ' * 50 + "1" + "}" * 50).startswith('{"a"')
