"""Each built-in criterion passing, failing (with the error the model will read) and fixing."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import ConfigurationError
from alloy.checks import (
    NO_FIX,
    BugFreePython,
    BugFreeSql,
    Criterion,
    EndsWith,
    IsJson,
    Length,
    LowerCase,
    OneLine,
    ReadingTime,
    RegexMatch,
    TwoWords,
    UpperCase,
    ValidChoices,
    ValidEmail,
    ValidRange,
    ValidUrl,
)

# (criterion, a passing value, a failing value, the error, the fix of the failing value)
CASES: list[tuple[Criterion, Any, Any, str, Any]] = [
    (
        TwoWords(),
        "hello world",
        "hello big world",
        "must be exactly two words, but it has 3",
        "hello big",
    ),
    (UpperCase(), "HELLO", "Hello", "must be upper case", "HELLO"),
    (LowerCase(), "hello", "Hello", "must be lower case", "hello"),
    (OneLine(), "one line", "two\n  lines", "must be a single line, but it has 2", "two"),
    (
        Length(2, 4),
        "abc",
        "abcdef",
        "must have between 2 and 4 characters, but it has 6 characters",
        "abcd",
    ),
    (Length(max=2), [1, 2], [1, 2, 3], "must have at most 2 items, but it has 3 items", [1, 2]),
    (Length(3, 3), "abc", "ab", "must have exactly 3 characters, but it has 2 characters", NO_FIX),
    (Length(min=1), ["a"], [], "must have at least 1 item, but it has 0 items", NO_FIX),
    (
        Length(max=1),
        {"a": 1},
        {"a": 1, "b": 2},
        "must have at most 1 key, but it has 2 keys",
        NO_FIX,
    ),
    (ValidRange(0, 10), 5, 11, "must be between 0 and 10", 10),
    (ValidRange(min=0), 0.0, -0.5, "must be at least 0", 0.0),
    (ValidRange(max=-1), -3, 2, "must be at most -1", -1),
    (ValidRange(0.5, 2.5), 1, 3, "must be between 0.5 and 2.5", 2),
    (ValidChoices(["red", "green"]), "red", " Green", 'must be one of "red", "green"', "green"),
    (ValidChoices(["red"]), "red", "blue", 'must be one of "red"', NO_FIX),
    (
        RegexMatch(r"[A-Z]{3}-\d+"),
        "ABC-12",
        "abc-12",
        r"must match the regular expression [A-Z]{3}-\d+",
        NO_FIX,
    ),
    (
        RegexMatch(r"\d", match_type="search"),
        "a1",
        "ab",
        r"must contain a match for the regular expression \d",
        NO_FIX,
    ),
    (
        ValidUrl(),
        "https://example.com/a?b=1",
        "example.com",
        "must be a valid http or https URL (it has no http:// or https:// scheme)",
        NO_FIX,
    ),
    (
        ValidUrl(),
        "http://localhost:8000",
        "https://",
        "must be a valid http or https URL (it has no valid host)",
        NO_FIX,
    ),
    (ValidEmail(), "ada@example.org", "ada@example", "must be a valid email address", NO_FIX),
    (EndsWith("."), "Done.", "Done", 'must end with "."', "Done."),
    (EndsWith("end"), ["a", "end"], ["a"], 'must end with "end"', ["a", "end"]),
    (
        IsJson(),
        '{"a": 1}',
        "{'a': 1",
        "must be valid JSON (Expecting property name enclosed in double quotes at line 1)",
        NO_FIX,
    ),
    (
        IsJson(),
        "[1, 2]",
        'Here you go: {"a": 1}',
        "must be valid JSON (Expecting value at line 1)",
        '{"a": 1}',
    ),
    (
        BugFreePython(),
        "def f():\n    return 1\n",
        "def f(:\n    pass",
        "must be Python code without syntax errors (invalid syntax, line 1)",
        NO_FIX,
    ),
    (
        BugFreeSql(),
        "SELECT a FROM t WHERE b = 1",
        "SELECT (a FROM t",
        "must be SQL without syntax errors (Expecting ), line 1, column 14)",
        NO_FIX,
    ),
    (
        BugFreeSql(),
        "DROP TABLE t; COMMIT",
        "hello world",
        "must be SQL without syntax errors ('hello AS world' is not a statement)",
        NO_FIX,
    ),
    (
        BugFreeSql(),
        "INSERT INTO t VALUES (1)",
        "SELECT * FROM",
        "must be SQL without syntax errors (Expected table name but got the end of the input, line 1, column 13)",
        NO_FIX,
    ),
    (
        ReadingTime(0.01, words_per_minute=200),
        "one two",
        "one two three",
        "must take at most 0.01 minutes to read (at most 2 words), but it has 3 words",
        "one two",
    ),
]


@pytest.mark.parametrize(("criterion", "good", "bad", "error", "fixed"), CASES)
def test_criterion(criterion: Criterion, good: Any, bad: Any, error: str, fixed: Any) -> None:
    assert criterion.validate(good) is None
    assert criterion.validate(bad) == error
    assert criterion.fix(bad) == fixed
    if fixed is not NO_FIX:
        assert criterion.validate(fixed) is None
        assert criterion.fixable


def test_range_fix_keeps_the_value_type() -> None:
    assert ValidRange(0.5, 2.5).fix(0) == 1 and isinstance(ValidRange(0.5, 2.5).fix(0), int)
    assert isinstance(ValidRange(min=0).fix(-2.0), float)
    assert ValidRange(min=0).validate(True) == "must be a number"


def test_two_words_cannot_fix_a_single_word() -> None:
    assert TwoWords().fix("hello") is NO_FIX


def test_valid_choices_fix_needs_a_unique_match() -> None:
    assert ValidChoices(["Red", "RED"]).fix("red") is NO_FIX
    assert ValidChoices([1, 2]).fix(3) is NO_FIX


def test_rules_describe_the_demand() -> None:
    assert TwoWords().rule() == "must be exactly two words"
    assert Length(1, 10).rule() == "must have a length of between 1 and 10"
    assert ValidRange(max=5).rule() == "must be at most 5"
    assert ReadingTime(2).rule() == "must take at most 2 minutes to read (at most 400 words)"


def test_names_follow_rail_spelling() -> None:
    names = [c.name for c, *_ in CASES]
    assert "two-words" in names and "bug-free-sql" in names and "valid-range" in names


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: TwoWords(on_fail="retry"), "Unknown on_fail action 'retry' for two-words"),
        (lambda: ValidUrl(on_fail="fix"), "valid-url has no programmatic fix"),
        (lambda: RegexMatch("x", on_fail="fix_reask"), "regex-match has no programmatic fix"),
        (lambda: Length(), "length needs a min, a max or both"),
        (lambda: Length(5, 1), "length: min (5) is greater than max (1)"),
        (lambda: ValidRange(3, -3), "valid-range: min (3) is greater than max (-3)"),
        (lambda: ValidChoices([]), "valid-choices needs at least one choice"),
        (lambda: RegexMatch("("), "regex-match: invalid pattern '('"),
        (lambda: ReadingTime(0), "reading-time: minutes and words per minute must be positive"),
    ],
)
def test_bad_criteria_fail_when_written(make: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_criteria_are_values() -> None:
    assert TwoWords(on_fail="fix") == TwoWords(on_fail="fix")
    assert ValidChoices(["a", "b"]).choices == ("a", "b")
    assert hash(ValidChoices(["a"])) == hash(ValidChoices(("a",)))
    assert "on_fail='noop'" in repr(UpperCase(on_fail="noop"))
