"""Worked examples: ``@command(examples=[(input, output), ...])`` sent as earlier turns."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest

import alloy
from alloy import Assistant, ConfigurationError, User, command
from alloy._types import Request, Text
from alloy.checks import LowerCase, TwoWords, UpperCase, ValidRange, check, checked, judged_by
from alloy.testing import FunctionModel
from alloy.testing.emulator import Emulator

from ..conftest import Call
from ..hardening.conftest import PROVIDERS


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


@dataclass
class Review:
    mood: Mood
    stars: int


def recording(answer: str) -> tuple[FunctionModel, list[Request]]:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return answer

    return FunctionModel(reply), seen


def turns(request: Request) -> list[tuple[str, str]]:
    return [
        (
            "user" if isinstance(m, User) else "assistant",
            "".join(p.text for p in m.parts if isinstance(p, Text)),
        )
        for m in request.messages
    ]


def test_examples_are_sent_as_earlier_turns_rendered_by_the_prompt_function(
    run_result: Call,
) -> None:
    model, seen = recording('{"mood": "sad", "stars": 1}')

    @command(
        output=Review,
        model=model,
        examples=[
            ("Loved it!", Review(Mood.HAPPY, 5)),
            (("Meh.",), Review(Mood.SAD, 2)),
            ({"text": "Awful."}, Review(Mood.SAD, 1)),
            (User("Review: literally given"), Review(Mood.HAPPY, 4)),
        ],
    )
    def rate(text: str) -> str:
        return f"Review: {text}"

    result = run_result(rate, "Terrible plot.")
    assert result.value == Review(Mood.SAD, 1)
    assert turns(seen[0]) == [
        ("user", "Review: Loved it!"),
        ("assistant", '{"mood":"happy","stars":5}'),
        ("user", "Review: Meh."),
        ("assistant", '{"mood":"sad","stars":2}'),
        ("user", "Review: Awful."),
        ("assistant", '{"mood":"sad","stars":1}'),
        ("user", "Review: literally given"),
        ("assistant", '{"mood":"happy","stars":4}'),
        ("user", "Review: Terrible plot."),
    ]
    # The examples are the command's: not part of the conversation a caller carries on.
    assert [type(m) for m in result.messages] == [User, Assistant]
    assert result.transcript.messages[:8] == seen[0].messages[:8]


def test_examples_come_before_the_history() -> None:
    model, seen = recording('{"value": 3}')

    @command(output=int, model=model, examples=[("1+1", 2)])
    def add(sum_: str) -> str:
        return f"Compute {sum_}"

    first = add.run("2+2")
    add.run("1+2", history=first.messages)
    assert turns(seen[1]) == [
        ("user", "Compute 1+1"),
        ("assistant", '{"value":2}'),
        ("user", "Compute 2+2"),
        ("assistant", '{"value": 3}'),
        ("user", "Compute 1+2"),
    ]


@pytest.mark.parametrize(
    ("output", "value", "reply"),
    [
        (str, "plain", "plain"),
        (int, 7, '{"value":7}'),
        (list[int], [1, 2], '{"value":[1,2]}'),
        (Literal["a", "b"], "b", '{"value":"b"}'),
        (alloy.YesNo(), False, "no"),
        (alloy.Code("python"), "print(1)", "```python\nprint(1)\n```"),
        (alloy.TaskList(), [alloy.Task("ship", True)], "- [x] ship"),
        (
            alloy.KeyValues(["Answer", "Why"]),
            {"answer": "4", "why": "sum"},
            "Answer: 4\n\nWhy: sum",
        ),
        (alloy.BoundedText(max=10), "short", "short"),
    ],
)
def test_every_output_type_renders_an_example_that_parses_back(
    output: Any, value: Any, reply: str
) -> None:
    model, seen = recording(reply)
    options: dict[str, Any] = {} if output is str else {"output": output}

    @command(model=model, examples=[("x", value)], **options)
    def ask(question: str) -> str:
        return question

    assert ask("y") == value  # the model's reply is the example's own rendering
    assert turns(seen[0])[1] == ("assistant", reply)


@pytest.mark.parametrize(
    ("output", "examples", "message"),
    [
        (int, [("x", "seven")], "the output of example 0 is not a valid int"),
        (Review, [("x", {"mood": "angry", "stars": 1})], "example 0 is not a valid Review"),
        (alloy.YesNo(), [("x", "yes")], "example 0 is not a valid yes or no"),
        (int, [("x", 1), ("only input",)], "example 1 must be an \\(input, output\\) pair"),
        (int, "1+1=2", "examples= must be a list of \\(input, output\\) pairs"),
        (None, [("x", None)], "output=None has no answer"),
    ],
)
def test_bad_examples_are_refused_when_the_command_is_decorated(
    output: Any, examples: Any, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):

        @command(output=output, model="offline", examples=examples)
        def ask(question: str) -> str:
            return question


def test_an_example_input_that_renders_a_conversation_is_refused() -> None:
    model, _ = recording('{"value": 1}')

    @command(output=int, model=model, examples=[("x", 1)])
    def ask(question: str) -> list[Any]:
        return [User(question)]

    with pytest.raises(ConfigurationError, match="returned a conversation for example 0"):
        ask("y")


def test_an_async_prompt_function_renders_its_examples(call: Call) -> None:
    model, seen = recording('{"value": 4}')

    @command(output=int, model=model, examples=[("1+1", 2)])
    async def add(sum_: str) -> str:
        return f"Compute {sum_}"

    if getattr(call, "mode", "") == "sync":
        pytest.skip("an async prompt function is awaited")
    assert call(add, "2+2") == 4
    assert turns(seen[0])[:2] == [("user", "Compute 1+1"), ("assistant", '{"value":2}')]


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_examples_reach_every_provider_as_turns(provider: str, emu: Emulator, call: Call) -> None:
    model, queue, _ = PROVIDERS[provider]

    @command(output=Review, model=model, examples=[("Loved it!", Review(Mood.HAPPY, 5))])
    def rate(text: str) -> str:
        return f"Review: {text}"

    value = call(rate, "Boring.")
    assert isinstance(value, Review)
    body = json.dumps(emu.last_request(queue).body)
    assert "Review: Loved it!" in body and "Review: Boring." in body
    assert '\\"stars\\":5' in body  # the example's answer, as an assistant turn


# -- examples and alloy.checks criteria ------------------------------------------------------


@dataclass
class Headline:
    title: Annotated[str, TwoWords(on_fail="fix")]
    tags: list[Annotated[str, LowerCase(on_fail="filter")]]
    stars: Annotated[int, ValidRange(min=1, max=5)]


@pytest.mark.parametrize(
    ("example", "message"),
    [
        (
            {"title": "Three word title", "tags": ["news"], "stars": 3},
            "the output of example 1 fails criterion two-words on title: must be exactly two "
            "words, but it has 3",
        ),
        (
            {"title": "Big news", "tags": ["ok", "LOUD"], "stars": 3},
            "example 1 fails criterion lower-case on tags\\[1\\]",
        ),
        ({"title": "Big news", "tags": [], "stars": 9}, "criterion valid-range on stars"),
    ],
)
def test_an_example_that_fails_a_criterion_of_the_output_type_is_refused(
    example: dict[str, Any], message: str
) -> None:
    good = {"title": "Small news", "tags": ["local"], "stars": 2}
    with pytest.raises(ConfigurationError, match=message):

        @command(output=Headline, model="offline", examples=[("a", good), ("b", example)])
        def headline(text: str) -> str:
            return text


def test_criteria_on_a_whole_output_and_on_list_items_check_examples_too() -> None:
    with pytest.raises(ConfigurationError, match="example 0 fails criterion upper-case"):

        @command(output=list[Annotated[str, UpperCase()]], examples=[("x", ["OK", "no"])])
        def shout(text: str) -> str:
            return text

    with pytest.raises(ConfigurationError, match="example 0 fails criterion short"):

        @command(
            output=checked(str, check(lambda s: len(s) < 5, name="short")),
            examples=[("x", "far too long")],
        )
        def brief(text: str) -> str:
            return text


def test_criteria_that_need_the_call_are_left_to_the_call() -> None:
    """A check that takes the call's deps, a judge (a model call) and a noop criterion (which
    only records) do not refuse an example; the others still run."""
    judged: list[Any] = []

    @command(output=bool, model="offline")
    def judge(value: str) -> str:
        judged.append(value)
        return value

    def for_tenant(value: str, ctx: alloy.Context[str]) -> bool:
        return False

    @command(
        output=Annotated[
            str,
            check(for_tenant),
            judged_by(judge),
            UpperCase(on_fail="noop"),
            check(lambda s: s.startswith("h"), name="starts-with-h"),
        ],
        model="offline",
        examples=[("x", "hello")],
    )
    def greet(text: str) -> str:
        return text

    assert judged == []
    with pytest.raises(ConfigurationError, match="fails criterion starts-with-h"):

        @command(
            output=Annotated[
                str, check(for_tenant), check(lambda s: s.startswith("h"), name="starts-with-h")
            ],
            examples=[("x", "bye")],
        )
        def farewell(text: str) -> str:
            return text


def test_a_criterion_that_raises_on_an_example_is_a_configuration_error() -> None:
    def broken(value: str) -> bool:
        raise KeyError("oops")

    with pytest.raises(
        ConfigurationError,
        match="criterion broken raised KeyError: 'oops' checking the answer in the output of example 0",
    ):

        @command(output=Annotated[str, check(broken)], examples=[("x", "hello")])
        def greet(text: str) -> str:
            return text
