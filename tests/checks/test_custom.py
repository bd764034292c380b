"""Custom criteria: from a plain function, a Criterion subclass, and judged by an alloy command."""

from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from alloy import ConfigurationError, command
from alloy._types import Request, RetryPrompt, Text, UserTurn
from alloy.checks import NO_FIX, Criterion, check, judged_by
from alloy.formats import YesNo
from alloy.testing import FunctionModel, override_model, script

from ..conftest import Call


def test_check_from_a_function_returning_bool() -> None:
    even = check(lambda n: n % 2 == 0, name="even", rule="must be even")
    assert (even.name, even.on_fail, even.fixable) == ("even", "reask", False)
    assert even.validate(2) is None
    assert even.validate(3) == "must be even"


def test_check_error_from_a_string_or_a_raised_value_error() -> None:
    def no_lorem(text: str) -> str | None:
        return "must not contain placeholder text" if "lorem" in text else None

    def short(text: str) -> None:
        if len(text) > 5:
            raise ValueError(f"must be at most 5 characters, not {len(text)}")

    assert check(no_lorem).name == "no-lorem"
    assert check(no_lorem).validate("lorem ipsum") == "must not contain placeholder text"
    assert check(short).validate("toolong") == "must be at most 5 characters, not 7"
    assert check(short).validate("ok") is None
    assert check(lambda v: False).rule() == "must pass the check <lambda>"


def test_check_with_a_fix() -> None:
    strip = check(lambda s: s == s.strip(), name="stripped", fix=str.strip, on_fail="fix")
    assert strip.fixable and strip.fix("  a ") == "a"
    with pytest.raises(ConfigurationError, match="stripped has no programmatic fix"):
        check(lambda s: True, name="stripped", on_fail="fix")


@dataclass(frozen=True)
class Sentence(Criterion):
    """A subclass: starts with a capital letter and ends with a full stop."""

    def rule(self) -> str:
        return "must be a sentence"

    def validate(self, value: str) -> str | None:
        ok = value[:1].isupper() and value.endswith(".")
        return None if ok else "must start with a capital letter and end with a full stop"

    def fix(self, value: str) -> Any:
        if not value:
            return NO_FIX
        return value[:1].upper() + value[1:].rstrip(".") + "."


def test_criterion_subclass(call: Call) -> None:
    @command(output=list[Annotated[str, Sentence(on_fail="fix")]])
    def sentences(text: str) -> str:
        return text

    with override_model(script('{"value": ["hello", "Fine."]}')):
        assert call(sentences, "x") == ["Hello.", "Fine."]
    assert Sentence().name == "criterion"


# -- judged by a command ----------------------------------------------------------------


@command(output=YesNo())
def is_polite(text: str) -> str:
    return f"Is this message polite? {text}"


@command(output=YesNo())
async def is_polite_async(text: str) -> str:
    return f"Is this message polite? {text}"


def route(replies: dict[str, list[str]]) -> FunctionModel:
    """A model answering the judge and the main command from separate queues."""

    def reply(request: Request) -> str:
        first = request.messages[0].parts[0]
        judge = isinstance(first, Text) and first.text.startswith("Is this message polite?")
        return replies["judge" if judge else "main"].pop(0)

    return FunctionModel(reply)


@pytest.mark.parametrize("judge", [is_polite, is_polite_async], ids=["sync judge", "async judge"])
def test_judged_criterion_reasks_with_the_judges_verdict(run_result: Call, judge: Any) -> None:
    @dataclass
    class Reply:
        text: Annotated[str, judged_by(judge, name="polite", rule="must be polite")]

    @command(output=Reply)
    def answer(message: str) -> str:
        return f"Reply to: {message}"

    model = route(
        {"main": ['{"text": "Go away."}', '{"text": "Happy to help!"}'], "judge": ["No.", "Yes"]}
    )
    with override_model(model):
        result = run_result(answer, "hi")
    assert result.value == Reply("Happy to help!")
    main = [r for r in model.requests if not r.messages[0].parts[0].text.startswith("Is this")]  # type: ignore[union-attr]
    assert main[-1].messages[-1] == UserTurn(
        (
            RetryPrompt(
                '- text: must be polite (judged by polite) (got "Go away."; criterion polite)'
            ),
        )
    )
    judged = [r for r in model.requests if r not in main]
    assert [r.messages[0].parts[0] for r in judged] == [
        Text("Is this message polite? Go away."),
        Text("Is this message polite? Happy to help!"),
    ]
    report = result.reports[0]
    assert report.reasked[0].criterion == "polite"


def test_judge_with_a_bool_output_and_default_name() -> None:
    @command(output=bool)
    def is_short(text: str) -> str:
        return text

    judged = judged_by(is_short, on_fail="noop")
    assert judged.name == "is-short" and judged.rule() == "must pass the check is-short"
    with override_model(script('{"value": false}')):
        assert judged.validate("text") == "must pass the check is-short (judged by is-short)"


def test_judge_must_answer_yes_or_no() -> None:
    @command
    def chat(text: str) -> str:
        return text

    with pytest.raises(ConfigurationError, match="yes/no output"):
        judged_by(chat)
    with pytest.raises(ConfigurationError, match="yes/no output"):
        judged_by(lambda text: True)
    with pytest.raises(ConfigurationError, match="has no programmatic fix"):
        judged_by(is_polite, on_fail="fix")
