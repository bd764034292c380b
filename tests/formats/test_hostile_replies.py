"""Hostile replies: whatever text a model sends, the parsers of model output fail only with
InvalidOutput (so the engine re-asks, then raises ParseError). Never a RecursionError, never an
exception of the parser's own."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alloy import ParseError, command
from alloy._extract import extract_json
from alloy._output import InvalidOutput, JsonOutput
from alloy._types import Capabilities, Request, RetryPrompt
from alloy.formats import BoundedText, Code, KeyValues, TaskList, YesNo
from alloy.testing import FunctionModel, override_model

from ..conftest import Call


def deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# -- JSON nested too deeply to load ------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "feedback"),
    [
        (
            "here: " + deep(2000),
            "- the JSON in the reply is nested too deeply to read; answer with the JSON value "
            "only, with less nesting",
        ),
        (
            deep(1200),
            "- the JSON in the reply is nested too deeply to read; answer with the JSON value "
            "only, with less nesting",
        ),
        (
            f"```json\n{deep(5000)}\n```",
            "- the code block is nested too deeply to read; answer with the JSON value only, "
            "with less nesting",
        ),
        ("[" * 100_000, "- the reply contains no JSON value; answer with the JSON value only"),
    ],
    ids=["after prose", "whole reply", "in a fence", "unclosed brackets"],
)
def test_deeply_nested_json_is_invalid_output(reply: str, feedback: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        extract_json(reply)
    assert info.value.feedback == feedback


@dataclass
class Node:
    a: Node | int


def test_prompt_mode_reasks_deep_json_then_reads_the_answer(call: Call) -> None:
    replies = ["here: " + deep(2000), '{"a": {"a": 1}}']

    def reply(request: Request) -> str:
        return replies.pop(0)

    @command(output=Node)
    def read(text: str) -> str:
        return text

    model = FunctionModel(reply, capabilities=Capabilities(native_schema=False, tools=False))
    with override_model(model) as used:
        assert call(read, "x") == Node(Node(1))
    (retry,) = used.requests[1].messages[-1].parts
    assert isinstance(retry, RetryPrompt) and "nested too deeply" in retry.errors


def test_prompt_mode_deep_json_every_time_is_a_parse_error(call: Call) -> None:
    @command(output=Node)
    def read(text: str) -> str:
        return text

    model = FunctionModel(
        lambda request: deep(3000), capabilities=Capabilities(native_schema=False, tools=False)
    )
    with override_model(model), pytest.raises(ParseError, match="No JSON found"):
        call(read, "x")


def test_json_output_unwraps_one_fence_and_never_recurses() -> None:
    output = JsonOutput(int)
    assert output.parse('```json\n{"value": 1}\n```') == 1
    with pytest.raises(InvalidOutput):
        output.parse("```\n" * 3000 + '{"value": 1}' + "\n```" * 3000)
    with pytest.raises(InvalidOutput):
        output.parse("```\n```\n" + '{"value": 1}' + "\n```\n```")


# -- fences split lines at CommonMark's line endings only ---------------------------------


def test_json_strings_with_line_separators_survive_a_fence() -> None:
    reply = '```json\n{"a": "line\u2028next"}\n```'
    assert extract_json(reply) == '{"a": "line\u2028next"}'


# -- the bounded scan still finds what it found before ------------------------------------------


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ('{Here {is {the answer: {"a": 1}}}}', '{"a": 1}'),
        ('[True story] and {"a": 1}', '{"a": 1}'),
        ('<think>a <reasoning>{"a": 0}</reasoning> {"a": 1}', '{"a": 1}'),  # unclosed stays
        ('<THINK>{"a": 0}</think>{"a": 1}', '{"a": 1}'),
        ('<think>{"a": 0}</thinking>{"a": 1}', None),  # closed by another name: not removed
        ("{'a': 'don\\'t', 'b': [None, True]}", '{"a": "don\'t", "b": [null, true]}'),
        ("{u'a': 1}", '{"a": 1}'),
        ("[NaN, 1]", "[NaN, 1]"),
        ('{"a": "\\"}"} trailing', '{"a": "\\"}"}'),
    ],
)
def test_extract_json_on_tricky_prose(reply: str, found: str | None) -> None:
    if found is None:
        with pytest.raises(InvalidOutput, match="different JSON values"):
            extract_json(reply)
    else:
        assert extract_json(reply) == found


# -- hypothesis: only InvalidOutput, whatever the reply ---------------------------------------

PIECES = [
    "{", "}", "[", "]", '"', "'", "\\", ":", ",", " ", "\n", "\t", "\r", "a", "1", "-1.5e3", "true",
    "None", "NaN", "u'", "<think>", "</think>", "<THINKING>", "```", "```json", "~~~", "````",
    '{"a": ', "{'a': ", '"value"', "yes", "no", "Answer", "Thought", "**", "- [ ] ", "- [x] ",
    "1. ", "#", ">", "\u2028", "\x00", "\ud800", "é", "I don't know", '{"a":' * 300, "}" * 300,
]  # fmt: skip

Parse = Callable[[str], object]

PARSERS: dict[str, Parse] = {
    "extract-json": extract_json,
    "yesno": YesNo().parse,
    "code": Code().parse,
    "code-python": Code("python").parse,
    "tasklist": TaskList().parse,
    "keyvalues": KeyValues(["Thought", "Answer"]).parse,
    "bounded-text": BoundedText(min=1, max=50).parse,
    "json-int": JsonOutput(int).parse,
    "json-node": JsonOutput(Node).parse,
    "prompt-mode-node": lambda text: JsonOutput(Node).parse(extract_json(text)),
}

REPLIES = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(PIECES), max_size=30).map("".join),
)


@pytest.mark.fuzz
@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_reply_parsers_raise_only_invalid_output(parser: str, fuzz_scale: int) -> None:
    parse = PARSERS[parser]

    @settings(
        max_examples=80 * fuzz_scale,
        deadline=None,
        database=None,
        derandomize=fuzz_scale == 1,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(reply=REPLIES)
    def check(reply: str) -> None:
        with contextlib.suppress(InvalidOutput):
            parse(reply)

    check()
