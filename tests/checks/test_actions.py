"""Each on-fail action's exact effect on flat fields, nested objects and list items, run through
commands with scripted models under both drivers."""

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import pytest

from alloy import ConfigurationError, CriterionFailed, ParseError, command
from alloy._output import InvalidOutput
from alloy._types import RetryPrompt, UserTurn
from alloy.checks import (
    CheckReport,
    Length,
    LowerCase,
    RegexMatch,
    TwoWords,
    UpperCase,
    ValidEmail,
    ValidRange,
)
from alloy.testing import override_model, script

from ..conftest import Call


def retry_prompts(model: Any) -> list[str]:
    """The re-ask messages the model received, in order."""
    last = model.requests[-1]
    return [
        part.errors
        for message in last.messages
        if isinstance(message, UserTurn)
        for part in message.parts
        if isinstance(part, RetryPrompt)
    ]


# -- flat fields -------------------------------------------------------------------------


def flat(action: str) -> Any:
    @dataclass
    class Title:
        text: Annotated[str, TwoWords(on_fail=action)]  # type: ignore[arg-type]
        score: float

    @command(output=Title)
    def title(topic: str) -> str:
        return f"A title for {topic}"

    return title


def test_reask_names_field_value_and_error(run_result: Call) -> None:
    cmd = flat("reask")
    with override_model(
        script('{"text": "a big title", "score": 1}', '{"text": "big title", "score": 1}')
    ) as model:
        result = run_result(cmd, "cats")
    assert result.value.text == "big title"
    assert retry_prompts(model) == [
        '- text: must be exactly two words, but it has 3 (got "a big title"; criterion two-words)'
    ]
    first, second = result.reports
    assert [r.outcome for r in first.results] == ["reasked"]
    assert first.reask == retry_prompts(model)[0]
    assert second.passed and second.reask is None


def test_fix_applies_the_programmatic_fix(run_result: Call) -> None:
    cmd = flat("fix")
    with override_model(script('{"text": "a big title", "score": 1}')) as model:
        result = run_result(cmd, "cats")
    assert result.value.text == "a big"
    assert len(model.requests) == 1
    report = result.reports[0]
    assert [(r.outcome, r.value, r.fixed) for r in report.fixes] == [
        ("fixed", "a big title", "a big")
    ]


def test_fix_that_cannot_repair_raises(call: Call) -> None:
    cmd = flat("fix")
    with (
        override_model(script('{"text": "title", "score": 1}')),
        pytest.raises(CriterionFailed) as info,
    ):
        call(cmd, "cats")
    error = info.value
    assert (error.field, error.criterion) == ("text", "two-words")
    assert str(error).startswith(
        'Criterion two-words failed on text: must be exactly two words, but it has 1 (got "title"); '
        "its fix could not repair the value"
    )


def test_noop_keeps_the_value_and_records_the_failure(run_result: Call) -> None:
    cmd = flat("noop")
    with override_model(script('{"text": "a big title", "score": 1}')) as model:
        result = run_result(cmd, "cats")
    assert result.value.text == "a big title"
    assert len(model.requests) == 1
    (failure,) = result.reports[0].failures
    assert (failure.outcome, failure.error) == (
        "recorded",
        "must be exactly two words, but it has 3",
    )


def test_refrain_returns_none(run_result: Call) -> None:
    cmd = flat("refrain")
    with override_model(script('{"text": "a big title", "score": 1}')) as model:
        result = run_result(cmd, "cats")
    assert result.value is None
    assert len(model.requests) == 1
    report = result.reports[0]
    assert report.refrained and report.value is None
    assert report.parsed.text == "a big title"


def test_exception_raises_at_once_naming_field_and_criterion(call: Call) -> None:
    cmd = flat("exception")
    with (
        override_model(script('{"text": "a big title", "score": 1}')) as model,
        pytest.raises(CriterionFailed) as info,
    ):
        call(cmd.with_options(max_reasks=3), "cats")
    error = info.value
    assert len(model.requests) == 1
    assert (error.field, error.criterion) == ("text", "two-words")
    assert error.command is not None and "title" in error.command
    assert error.transcript is not None and error.attempts == 1
    assert error.output == '{"text": "a big title", "score": 1}'
    assert error.report.failures[0].outcome == "raised"


def test_fix_reask_fixes_when_it_can(call: Call) -> None:
    cmd = flat("fix_reask")
    with override_model(script('{"text": "a big title", "score": 1}')) as model:
        assert call(cmd, "cats").text == "a big"
    assert len(model.requests) == 1


def test_fix_reask_reasks_when_the_fix_fails(call: Call) -> None:
    cmd = flat("fix_reask")
    with override_model(
        script('{"text": "title", "score": 1}', '{"text": "good title", "score": 1}')
    ) as model:
        assert call(cmd, "cats").text == "good title"
    assert retry_prompts(model) == [
        '- text: must be exactly two words, but it has 1 (got "title"; criterion two-words)'
    ]


def test_filter_needs_an_optional_field() -> None:
    with pytest.raises(ConfigurationError, match="filter drops a list item or an optional field"):

        @dataclass
        class Bad:
            text: Annotated[str, TwoWords(on_fail="filter")]

        command(output=Bad)


@dataclass
class Contact:
    name: str
    email: Optional[Annotated[str, ValidEmail(on_fail="filter")]]
    phone: Annotated[Optional[str], RegexMatch(r"\+?[0-9 ]+", on_fail="filter")] = None


@command(output=Contact)
def contact(text: str) -> str:
    return f"Extract the contact from: {text}"


def test_filter_drops_an_optional_field(run_result: Call) -> None:
    reply = '{"name": "Ada", "email": "not an email", "phone": "call me"}'
    with override_model(script(reply)):
        result = run_result(contact, "...")
    assert result.value == Contact("Ada", None, None)
    report = result.reports[0]
    assert [(r.path, r.outcome) for r in report.filtered] == [
        ("email", "filtered"),
        ("phone", "filtered"),
    ]
    with override_model(script('{"name": "Ada", "email": "ada@example.org", "phone": null}')):
        assert run_result(contact, "...").value == Contact("Ada", "ada@example.org", None)


# -- several criteria on one value ---------------------------------------------------------


def test_criteria_run_in_order_each_on_the_previous_fix(call: Call) -> None:
    @command(output=Annotated[str, UpperCase(on_fail="fix"), RegexMatch("[A-Z ]+")])
    def upper_first(x: str) -> str:
        return x

    @command(output=Annotated[str, RegexMatch("[A-Z ]+"), UpperCase(on_fail="fix")])
    def regex_first(x: str) -> str:
        return x

    with override_model(script('{"value": "hello world"}')):
        assert call(upper_first, "x") == "HELLO WORLD"
    with override_model(script('{"value": "hello world"}', '{"value": "HI THERE"}')) as model:
        assert call(regex_first, "x") == "HI THERE"
    assert retry_prompts(model) == [
        "- the answer: must match the regular expression [A-Z ]+ "
        '(got "hello world"; criterion regex-match)'
    ]


# -- nested objects ------------------------------------------------------------------------


@dataclass(frozen=True)
class Author:
    name: Annotated[str, TwoWords(on_fail="reask")]
    email: Annotated[Optional[str], ValidEmail(on_fail="filter")]


@dataclass(frozen=True)
class Book:
    title: Annotated[str, UpperCase(on_fail="fix")]
    author: Author
    year: Annotated[int, ValidRange(1450, 2030, on_fail="exception")]


@command(output=Book)
def book(text: str) -> str:
    return f"Extract the book from: {text}"


def book_reply(name: str = "Ada Lovelace", email: str = "ada@x.org", year: int = 1843) -> str:
    import json

    return json.dumps({"title": "notes", "author": {"name": name, "email": email}, "year": year})


def test_nested_fix_and_filter_rebuild_the_frozen_objects(call: Call) -> None:
    with override_model(script(book_reply(email="nope"))):
        value = call(book, "...")
    assert value == Book("NOTES", Author("Ada Lovelace", None), 1843)


def test_nested_reask_names_the_dotted_path(call: Call) -> None:
    with override_model(script(book_reply(name="Ada"), book_reply())) as model:
        assert call(book, "...").author.name == "Ada Lovelace"
    assert retry_prompts(model) == [
        '- author.name: must be exactly two words, but it has 1 (got "Ada"; criterion two-words)'
    ]


def test_nested_exception(call: Call) -> None:
    with override_model(script(book_reply(year=3000))), pytest.raises(CriterionFailed) as info:
        call(book, "...")
    assert (info.value.field, info.value.criterion) == ("year", "valid-range")
    assert "Criterion valid-range failed on year: must be between 1450 and 2030 (got 3000)" in str(
        info.value
    )


# -- list items ----------------------------------------------------------------------------


@dataclass
class Tagged:
    tags: Annotated[list[Annotated[str, LowerCase(on_fail="filter")]], Length(min=2)]


@command(output=Tagged)
def tag(text: str) -> str:
    return f"Tag: {text}"


def test_filter_drops_list_items_then_the_list_is_checked(call: Call) -> None:
    with override_model(script('{"tags": ["a", "B", "c"]}')):
        assert call(tag, "...").tags == ["a", "c"]
    with override_model(script('{"tags": ["a", "B", "C"]}', '{"tags": ["a", "b"]}')) as model:
        assert call(tag, "...").tags == ["a", "b"]
    assert retry_prompts(model) == [
        '- tags: must have at least 2 items, but it has 1 item (got ["a"]; criterion length)'
    ]


@dataclass
class Person:
    name: Annotated[str, TwoWords(on_fail="reask")]
    role: Annotated[str, UpperCase(on_fail="fix")]


@command(output=list[Person])
def people(text: str) -> str:
    return f"List the people in: {text}"


def test_list_item_reask_and_fix(call: Call) -> None:
    first = '{"value": [{"name": "Ada Lovelace", "role": "poet"}, {"name": "Babbage", "role": "x"}, {"name": "Al Khwarizmi Jr", "role": "y"}]}'
    second = '{"value": [{"name": "Ada Lovelace", "role": "poet"}, {"name": "Charles Babbage", "role": "x"}]}'
    with override_model(script(first, second)) as model:
        assert call(people, "...") == [
            Person("Ada Lovelace", "POET"),
            Person("Charles Babbage", "X"),
        ]
    assert retry_prompts(model) == [
        '- [1].name: must be exactly two words, but it has 1 (got "Babbage"; criterion two-words)\n'
        '- [2].name: must be exactly two words, but it has 3 (got "Al Khwarizmi Jr"; criterion two-words)'
    ]


def test_list_item_refrain_and_exception(call: Call) -> None:
    @command(output=list[Annotated[int, ValidRange(min=0, on_fail="refrain")]])
    def refrain(x: str) -> str:
        return x

    @command(output=list[Annotated[int, ValidRange(min=0, on_fail="exception")]])
    def strict(x: str) -> str:
        return x

    with override_model(script('{"value": [1, -1, 2]}')):
        assert call(refrain, "x") is None
    with override_model(script('{"value": [1, 2, -1]}')), pytest.raises(CriterionFailed) as info:
        call(strict, "x")
    assert info.value.field == "[2]"


def test_filter_of_the_whole_output_returns_none(call: Call) -> None:
    @command(output=Annotated[str, TwoWords(on_fail="filter")])
    def one(x: str) -> str:
        return x

    with override_model(script('{"value": "three words here"}')):
        assert call(one, "x") is None


# -- the re-ask budget -------------------------------------------------------------------


@dataclass
class Scored:
    text: Annotated[str, TwoWords()]
    score: Annotated[float, ValidRange(0, 1)]


@command(output=Scored)
def scored(x: str) -> str:
    return x


BAD = '{"text": "one", "score": 2}'
GOOD = '{"text": "two words", "score": 0.5}'
BOTH = (
    '- text: must be exactly two words, but it has 1 (got "one"; criterion two-words)\n'
    "- score: must be between 0 and 1 (got 2.0; criterion valid-range)"
)


def test_budget_spent_is_a_command_error_listing_every_failure(call: Call) -> None:
    with override_model(script(BAD, BAD)) as model, pytest.raises(ParseError) as info:
        call(scored, "x")
    error = info.value
    assert len(model.requests) == 2
    assert retry_prompts(model) == [BOTH]
    assert str(error).startswith(
        "Output failed 2 quality criteria: text: must be exactly two words, but it has 1 "
        "(two-words); score: must be between 0 and 1 (valid-range): "
    )
    assert error.attempts == 2
    cause = error.__cause__
    assert isinstance(cause, InvalidOutput) and isinstance(cause.report, CheckReport)
    assert [f.path for f in cause.report.reasked] == ["text", "score"]


def test_budget_is_the_max_reasks_option(call: Call) -> None:
    with override_model(script(BAD)), pytest.raises(ParseError):
        call(scored.with_options(max_reasks=0), "x")
    with override_model(script(BAD, BAD, BAD, GOOD)) as model:
        assert call(scored.with_options(max_reasks=3), "x") == Scored("two words", 0.5)
    assert retry_prompts(model) == [BOTH] * 3


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    monkeypatch.setenv("ALLOY_MAX_REASKS", "2")
    with override_model(script(BAD, BAD, GOOD)):
        assert call(scored, "x").text == "two words"


def test_a_structural_error_is_reasked_before_criteria_run(run_result: Call) -> None:
    with override_model(script('{"text": "two words"}', GOOD)) as model:
        result = run_result(scored, "x")
    assert result.value.score == 0.5
    assert retry_prompts(model) == ["- score: field required but missing"]
    first = result.reports[0]
    assert first.parse_error is not None and first.parsed is None and first.results == ()
