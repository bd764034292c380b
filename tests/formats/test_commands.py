"""Commands with non-JSON outputs, end to end: no schema sent, instructions in the system prompt,
the extracted value returned, and a failed extraction re-asked with its message."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import ParseError, command
from alloy._types import RetryPrompt, UserTurn
from alloy.checks import BugFreePython, Length, checked
from alloy.formats import BoundedText, Code, KeyValues, Task, TaskList, YesNo
from alloy.testing import override_model, script

from ..conftest import Call


@command(output=YesNo(), system="You are terse.")
def is_typed(language: str) -> str:
    return f"Is {language} a strictly typed programming language?"


def test_yesno_command(call: Call) -> None:
    with override_model(
        script("Let me think.\n\nRust checks types at compile time.\n\n**Yes**")
    ) as model:
        assert call(is_typed, "Rust") is True
    request = model.requests[0]
    assert request.output is None
    assert request.system == 'You are terse.\n\nAnswer with a single word: "yes" or "no".'


def test_failed_extraction_is_reasked_then_succeeds(run_result: Call) -> None:
    with override_model(script("I don't know.", "No")) as model:
        result = run_result(is_typed, "Python")
    assert result.value is False
    assert result.output == "No"
    assert model.requests[1].messages[-1] == UserTurn(
        (
            RetryPrompt(
                "- the reply does not commit to yes or no (it says it cannot tell); answer with "
                "exactly one word: yes or no"
            ),
        )
    )
    assert result.transcript.attempts == 2


def test_failed_extraction_after_the_budget_is_a_parse_error(call: Call) -> None:
    with override_model(script("Yes and no.", "Yes. No.")), pytest.raises(ParseError) as info:
        call(is_typed, "C")
    assert str(info.value).startswith("Model output says both yes and no: 'Yes. No.'")
    assert info.value.expected == "yes or no"


@pytest.mark.parametrize(
    ("output", "replies", "value"),
    [
        (
            Code("python"),
            ["Sure:\n```python\ndef f():\n    return 1\n```"],
            "def f():\n    return 1",
        ),
        (Code(), ["```\na\n```\n```\nb\n```", "```\nb\n```"], "b"),
        (TaskList(), ["Plan:\n- [ ] a\n- [x] b"], [Task("a"), Task("b", True)]),
        (BoundedText(min=10), ["too short", "long enough now"], "long enough now"),
        (
            KeyValues(["Thought", "Answer"]),
            ["Answer: 4", "Thought: 2 + 2\nAnswer: 4"],
            {"thought": "2 + 2", "answer": "4"},
        ),
    ],
)
def test_each_format_end_to_end(call: Call, output: Any, replies: list[str], value: Any) -> None:
    @command(output=output)
    def ask(question: str) -> str:
        return question

    with override_model(script(*replies)) as model:
        assert call(ask, "q") == value
    assert len(model.requests) == len(replies)
    assert all(r.output is None for r in model.requests)
    assert model.requests[0].system == output.instructions
    assert ask.schema is None


def test_a_format_with_criteria(call: Call) -> None:
    @command(output=checked(Code("python"), BugFreePython(), Length(max=40, on_fail="noop")))
    def write(task: str) -> str:
        return task

    broken = "```python\ndef f(:\n    pass\n```"
    fixed = "```python\ndef f():\n    pass\n```"
    with override_model(script(broken, fixed)) as model:
        assert call(write, "a function") == "def f():\n    pass"
    assert model.requests[1].messages[-1].parts[0].errors == (  # type: ignore[union-attr]
        "- the answer: must be Python code without syntax errors (invalid syntax, line 1) "
        '(got "def f(:\\n    pass"; criterion bug-free-python)'
    )
    assert model.requests[0].system.endswith(  # type: ignore[union-attr]
        "Give exactly one code block.\n\nThe answer must also meet these criteria:\n"
        "- the answer: must be Python code without syntax errors\n"
        "- the answer: must have a length of at most 40"
    )
