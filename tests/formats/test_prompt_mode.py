"""Prompt mode: JSON extracted from free text, for models without native structured output
(chosen from the model's capabilities, or forced with ``output_mode="prompt"``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from alloy import ParseError, command
from alloy._extract import extract_json
from alloy._output import InvalidOutput
from alloy._types import PROMPT_MODE_INSTRUCTIONS, Capabilities, Request, RetryPrompt
from alloy.checks import UpperCase
from alloy.testing import FunctionModel, override_model, script

from ..conftest import Call


def plain_model(*replies: str) -> FunctionModel:
    """A scripted model with neither native structured output nor tools."""
    queue = list(replies)

    def reply(request: Request) -> str:
        return queue.pop(0)

    return FunctionModel(reply, capabilities=Capabilities(native_schema=False, tools=False))


@dataclass
class City:
    name: Annotated[str, UpperCase(on_fail="fix")]
    population: int


@command(output=City)
def city(text: str) -> str:
    return f"Extract the city from: {text}"


CHATTY = (
    "Sure! Looking at the text, the city is Paris [1].\n\n"
    '```json\n{"name": "Paris", "population": 2100000}\n```\n\n'
    "Let me know if you need anything else."
)


def test_prompt_mode_chosen_from_capabilities(run_result: Call) -> None:
    with override_model(plain_model(CHATTY)) as model:
        result = run_result(city, "...")
    assert result.value == City("PARIS", 2100000)
    request = model.requests[0]
    assert request.output is not None and request.output.mode == "prompt"
    assert request.system is not None
    assert request.system.startswith(
        PROMPT_MODE_INSTRUCTIONS.format(schema=json.dumps(city.schema))
    )
    assert "- name: must be upper case" in request.system
    (report,) = result.reports
    assert report.raw == '{"name": "Paris", "population": 2100000}'
    assert result.output == CHATTY


def test_prompt_mode_forced_by_option(call: Call) -> None:
    reply = 'The answer: {"name": "Lyon", "population": 500000} as requested.'
    with override_model(script(reply)) as model:
        assert call(city.with_options(output_mode="prompt"), "...") == City("LYON", 500000)
    assert model.requests[0].output.mode == "prompt"  # type: ignore[union-attr]


def test_prompt_mode_reasks_an_ambiguous_reply(call: Call) -> None:
    two = 'Either {"name": "a", "population": 1} or {"name": "b", "population": 2}.'
    with override_model(plain_model(two, '{"name": "b", "population": 2}')) as model:
        assert call(city, "...") == City("B", 2)
    assert model.requests[1].messages[-1].parts == (
        RetryPrompt(
            "- the reply contains 2 different JSON values; answer with the JSON value only, "
            "exactly one"
        ),
    )


def test_prompt_mode_gives_up_after_the_budget(call: Call) -> None:
    with override_model(plain_model("no idea", "still none")), pytest.raises(ParseError) as info:
        call(city, "...")
    assert str(info.value).startswith("No JSON found in the model output: 'still none'")


def test_prompt_mode_wrapped_primitive(call: Call) -> None:
    @command(output=float)
    def price(text: str) -> str:
        return text

    with override_model(plain_model('I believe it is {"value": 49.99}.')):
        assert call(price, "$49.99") == 49.99


# -- extract_json on tricky replies ---------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('  \ufeff{"a": 1}\n', '{"a": 1}'),
        ("[1, 2]", "[1, 2]"),
        ('Here it is:\n```json\n{"a": 1}\n```\nHope that helps.', '{"a": 1}'),
        ('```JSON\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
        ('~~~json\n{"a": 1}\n~~~', '{"a": 1}'),
        ('As shown in [1] and [2], the result is {"a": 1}.', '{"a": 1}'),
        ('Use {name} placeholders; the result is {"a": 1}', '{"a": 1}'),
        ('{"a": 1}\n\nTo repeat: {"a": 1}', '{"a": 1}'),
        ('```json\n{"a": 1}\n```\nwhich is {"a": 1}', '{"a": 1}'),
        ('<think>Maybe {"a": 0}? No.</think>\n{"a": 1}', '{"a": 1}'),
        ('{Here is the answer: {"a": "x } y"}}', '{"a": "x } y"}'),
        (
            'Result: {"s": "brace { and \\" quote", "n": [1, {"m": 2}]} done',
            '{"s": "brace { and \\" quote", "n": [1, {"m": 2}]}',
        ),
        ('Here\'s what I found: {"a": "it\'s"}', '{"a": "it\'s"}'),
        ('"{\\"a\\": 1}"', '{"a": 1}'),
        ("{'a': True, 'b': None, 'c': [1, 2,],}", '{"a": true, "b": null, "c": [1, 2]}'),
        ('```python\nd = {"a": 1}\n```', '{"a": 1}'),
    ],
)
def test_extract_json(reply: str, found: str) -> None:
    assert extract_json(reply) == found


@pytest.mark.parametrize(
    ("reply", "summary", "feedback"),
    [
        (
            '{"a": 1} or maybe {"a": 2}',
            "Found 2 different JSON values in the model output",
            "- the reply contains 2 different JSON values; answer with the JSON value only, exactly one",
        ),
        (
            '```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```',
            "Found 2 different JSON values in the model output",
            "- the reply contains 2 different JSON values; answer with the JSON value only, exactly one",
        ),
        (
            "I could not find anything.",
            "No JSON found in the model output",
            "- the reply contains no JSON value; answer with the JSON value only",
        ),
        (
            '```json\n{"a": 1,\n "b": }\n```',
            "No JSON found in the model output",
            "- the code block is not valid JSON: Expecting value at line 2, column 7; answer with the JSON value only",
        ),
        (
            'Result: {"a": [1, 2}',
            "No JSON found in the model output",
            "- the JSON in the reply is not valid JSON: Expecting ',' delimiter at line 1, column 12; answer with the JSON value only",
        ),
        (
            'Here: {"people": [{"name": "a", "ok": true}, {"name": "b", "ok": false},]}',
            "No JSON found in the model output",
            "- the JSON in the reply is not valid JSON: Expecting value at line 1, column 67; answer with the JSON value only",
        ),
        (
            '<think>{"a": 1}</think> nothing after thinking',
            "No JSON found in the model output",
            "- the reply contains no JSON value; answer with the JSON value only",
        ),
    ],
)
def test_extract_json_errors(reply: str, summary: str, feedback: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        extract_json(reply)
    assert (info.value.summary, info.value.feedback) == (summary, feedback)


def test_objects_win_over_arrays() -> None:
    assert extract_json('Steps [1, 2] give {"a": 1}') == '{"a": 1}'
    assert extract_json("Only [1, 2] here") == "[1, 2]"


def test_large_nested_reply_behind_unbalanced_prose() -> None:
    # Unbalanced brackets in the reasoning must not send the scan into quadratic work: a
    # regression shows up as pytest-timeout, not as a timing assertion.
    value: Any = {"items": [{"id": i, "tags": ["x"] * 5} for i in range(2000)]}
    reply = "Thinking { about [ it ( ...\n" * 200 + json.dumps(value)
    assert json.loads(extract_json(reply)) == value
