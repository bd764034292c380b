"""Criteria by name from spec strings, RAIL style: arguments, spellings, strict and lenient."""

import warnings

import pytest

from alloy import ConfigurationError
from alloy.checks import (
    CRITERIA,
    Length,
    RegexMatch,
    SpecWarning,
    TwoWords,
    UpperCase,
    ValidChoices,
    ValidRange,
    parse_criteria,
)
from alloy.checks._spec import parse_format, split_format


def test_parse_format_arguments() -> None:
    assert parse_format("two-words; upper-case") == [("two-words", [], {}), ("upper-case", [], {})]
    assert parse_format("length: 1 10; min-val: -0.5") == [
        ("length", [1, 10], {}),
        ("min-val", [-0.5], {}),
    ]
    assert parse_format("valid-choices: {['a b', 'c']}") == [("valid-choices", [["a b", "c"]], {})]
    assert parse_format("valid-range: min=0 max=5") == [("valid-range", [], {"min": 0, "max": 5})]
    assert parse_format("regex-match: '^a b;c$'") == [("regex-match", ["^a b;c$"], {})]
    assert parse_format("Two_Words; guardrails/valid_length: 2") == [
        ("two-words", [], {}),
        ("valid-length", [2], {}),
    ]


def test_guardrails_hub_names() -> None:
    """Names as Guardrails' RAIL docs write validators (docs/how_to_guides/rail.md)."""
    assert parse_format("guardrails/uppercase; guardrails/lowercase; guardrails/two_words") == [
        ("upper-case", [], {}),
        ("lower-case", [], {}),
        ("two-words", [], {}),
    ]
    assert split_format(r"hub://guardrails/regex_match: ^[A-Z][a-z]+\s[A-Z]$; one-line") == [
        ("hub://guardrails/regex_match", ["^[A-Z][a-z]+\\s[A-Z]$"], {}),
        ("one-line", [], {}),
    ]


def test_parse_criteria_builds_each_with_its_action() -> None:
    criteria = parse_criteria(
        "two-words; upper-case; length: 1 10; min-val: 0; max-val: 9; valid-choices: a b",
        on_fail={"two-words": "reask", "upper-case": "fix"},
    )
    assert criteria == [
        TwoWords(on_fail="reask"),
        UpperCase(on_fail="fix"),
        Length(1, 10, on_fail="noop"),
        ValidRange(min=0, on_fail="noop"),
        ValidRange(max=9, on_fail="noop"),
        ValidChoices(["a", "b"], on_fail="noop"),
    ]
    assert parse_criteria("min-len: 2; regex-match: {'[a-z]+'}", on_fail="filter") == [
        Length(min=2, on_fail="filter"),
        RegexMatch("[a-z]+", on_fail="filter"),
    ]


def test_every_builtin_has_a_spec_name() -> None:
    for name in [
        "two-words",
        "upper-case",
        "lower-case",
        "one-line",
        "length",
        "valid-range",
        "min-val",
        "max-val",
        "valid-choices",
        "regex-match",
        "valid-url",
        "valid-email",
        "ends-with",
        "is-json",
        "bug-free-python",
        "bug-free-sql",
        "reading-time",
    ]:
        assert name in CRITERIA


def test_unknown_criterion_strict_and_lenient() -> None:
    with pytest.raises(ConfigurationError, match=r"Unknown criterion 'bias-free' \(strict spec\)"):
        parse_criteria("two-words; bias-free")
    with pytest.warns(SpecWarning, match="Unknown criterion 'bias-free'; ignored") as record:
        assert parse_criteria("two-words; bias-free", strict=False) == [TwoWords()]
    assert record[0].filename == __file__


def test_bad_arguments_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="Bad arguments for criterion min-val"):
        parse_criteria("min-val: 1 2")
    with pytest.raises(ConfigurationError, match="length: min \\(5\\) is greater than max"):
        parse_criteria("length: 5 1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_criteria("")
