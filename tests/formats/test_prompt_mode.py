"""Prompt mode: JSON extracted from free text, for models without native structured output
(chosen from the model's capabilities, or forced with ``output_mode="prompt"``)."""

from __future__ import annotations

import json
import sys
import uuid
import warnings
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
            # Python's own words for the mistake (3.13 names a trailing comma at its column).
            "- the JSON in the reply is not valid JSON: "
            + (
                "Illegal trailing comma before end of array at line 1, column 66"
                if sys.version_info >= (3, 13)
                else "Expecting value at line 1, column 67"
            )
            + "; answer with the JSON value only",
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


# -- scalar and list answers, bare or in prose ------------------------------------------------


def prompted(tp: Any, *replies: str, call: Call) -> tuple[Any, FunctionModel]:
    """Run a command for ``tp`` in prompt mode on a scripted model; (value, model)."""

    @command(output=tp, output_mode="prompt", max_reasks=len(replies) - 1)
    def ask(question: str) -> str:
        return question

    with override_model(plain_model(*replies)) as model:
        value = call(ask, "q")
    return value, model


@pytest.mark.parametrize(
    ("tp", "reply", "expected"),
    [
        (bool, "true", True),
        (bool, "```json\nfalse\n```", False),
        (bool, '{"value": true}', True),
        (bool, "The answer is true", True),
        (int, "7", 7),
        (int, "The answer is 7.", 7),
        (int, "Answer: -3", -3),
        (float, "The answer is 7.", 7.0),
        (float, "정답은 1.5입니다.", 1.5),
        (list[int], "[2300]", [2300]),
        (list[int], "```json\n[1, 2]\n```", [1, 2]),
        (list[int], "I guess [1, 2, 3] would be good.\n\nAnswer: [1, 2, 3]", [1, 2, 3]),
        (list[str], 'Stop using regex and write your own parser: ["]", "["]', ["]", "["]),
        (str, '"Paris"', "Paris"),
        (int | None, "null", None),
    ],
)
def test_bare_values_are_read(tp: Any, reply: str, expected: Any, call: Call) -> None:
    value, model = prompted(tp, reply, call=call)
    assert value == expected
    assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("tp", "reply", "feedback"),
    [
        (bool, "It's either true or false.", "- the reply contains 2 different JSON values"),
        (float, "It's either 1.5 or 2", "- the reply contains 2 different JSON values"),
        (int, "The answer is 7.5.", "- the reply has a number with a fraction, but the answer"),
        (int, "No idea.", "- the reply contains no whole number; answer with the JSON value only"),
        (bool, "No idea.", "- the reply contains no true or false; answer with the JSON value"),
        (list[int], "No idea.", "- the reply contains no JSON array; answer with the JSON value"),
        (list[int], "[1, 2, 3] ... no, Answer: [1, 3]", "- the reply contains 2 different JSON"),
        (City, "[]", "- the reply contains no JSON object; answer with the JSON value only"),
    ],
)
def test_reasks_name_the_real_problem(tp: Any, reply: str, feedback: str, call: Call) -> None:
    with override_model(plain_model(reply, reply)) as model, pytest.raises(ParseError):

        @command(output=tp, output_mode="prompt")
        def ask() -> str:
            return "q"

        call(ask)
    part = model.requests[1].messages[-1].parts[0]
    assert isinstance(part, RetryPrompt)
    assert part.errors.startswith(feedback)


@pytest.mark.parametrize(
    ("tp", "reply", "message"),
    [
        (bool, "maybe", "No true or false found in the model output: 'maybe'"),
        (bool, "nope", "No true or false found in the model output: 'nope'"),
        (int, "a few", "No whole number found in the model output: 'a few'"),
        (float, "about half", "No number found in the model output: 'about half'"),
        (list[int], "none", "No JSON found in the model output: 'none'"),
    ],
)
def test_the_final_error_names_what_was_missing_as_the_reask_did(
    tp: Any, reply: str, message: str, call: Call
) -> None:
    with pytest.raises(ParseError) as info:
        prompted(tp, reply, reply, call=call)
    assert str(info.value).startswith(message)


def test_auto_prompt_mode_warns_once_per_command_and_model(run_result: Call) -> None:
    from alloy import PromptModeWarning

    @command(output=int)
    def legs(animal: str) -> str:
        return f"How many legs does a {animal} have?"

    name = f"plain-{uuid.uuid4().hex[:8]}"  # a model this test alone has used
    plain = Capabilities(native_schema=False, tools=False)
    model = FunctionModel(lambda r: "8", name=name, capabilities=plain)
    with pytest.warns(PromptModeWarning, match=rf"'{name}'.*'test_auto_prompt_mode.*legs'"):
        result = run_with(model, run_result, legs)
    assert (result.value, result.output_mode) == (8, "prompt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_with(model, run_result, legs).value == 8


def run_with(model: FunctionModel, run_result: Call, cmd: Any) -> Any:
    with override_model(model):
        return run_result(cmd, "spider")


def test_chosen_prompt_mode_does_not_warn_and_result_shows_the_mode(run_result: Call) -> None:
    @command(output=int, output_mode="prompt")
    def legs(animal: str) -> str:
        return f"How many legs does a {animal} have?"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with override_model(plain_model("8")):
            assert run_result(legs, "spider").output_mode == "prompt"
    with override_model(script('{"value": 8}')):
        assert run_result(legs.with_options(output_mode="native"), "spider").output_mode == "native"
