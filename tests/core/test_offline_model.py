"""The built-in offline model: schema-valid answers for every output type, tools, streaming."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Literal

import pytest

from alloy import ask, command, tool
from alloy.providers.offline import OFFLINE_NOTE

from ..conftest import Call


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


@dataclass
class Tree:
    label: str
    mood: Mood
    kind: Literal["oak", "elm"]
    children: list[Tree] = field(default_factory=list)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")


def test_typed_outputs_are_schema_valid(call: Call) -> None:
    for output in (int, float, bool, Mood, list[Tree], Tree, Literal["a", "b"]):

        @command(output=output)
        def make(topic: str) -> str:
            return f"Make {topic}"

        assert make.output_type.parse is not None
        call(make, "x")  # parsed strictly by the real validator: raises if not schema-valid


def test_same_prompt_same_answer() -> None:
    @command(output=Tree)
    def make(topic: str) -> str:
        return f"Make {topic}"

    assert make("a") == make("a")


def test_text_answers_say_they_come_from_the_offline_model(call: Call) -> None:
    assert ask("hello").startswith(OFFLINE_NOTE)
    assert "".join(ask.stream("hello")).startswith(OFFLINE_NOTE)

    async def collect() -> str:
        return "".join([chunk async for chunk in ask.astream("hello")])

    assert asyncio.run(collect()).startswith(OFFLINE_NOTE)


def test_each_tool_is_called_once_then_the_answer_comes(call: Call) -> None:
    calls: list[int] = []

    @tool
    def roll(sides: int) -> int:
        """Roll a die."""
        calls.append(sides)
        return 4

    @command(tools=[roll])
    def game() -> str:
        return "play"

    answer = call(game)
    assert len(calls) == 1
    assert "roll -> 4" in answer


def test_forced_tool_output_mode(call: Call) -> None:
    @command(output=Tree, output_mode="tool")
    def make() -> str:
        return "tree"

    assert isinstance(call(make), Tree)


def test_offline_alias_fake_and_usage() -> None:
    @command(output=int, model="fake")
    def number() -> str:
        return "a number"

    result = number.run()
    assert isinstance(result.value, int)
    assert result.usage.input_tokens > 0 and result.cost == 0.0


def test_non_json_formats_get_an_answer_in_their_format(call: Call) -> None:
    from alloy import BoundedText, Code, KeyValues, TaskList, YesNo

    expectations = {
        YesNo(): True,
        Code(language="sql"): "print('written by the alloy offline model')",
        KeyValues(["Thought", "Answer"]): {
            "thought": "offline thought",
            "answer": "offline answer",
        },
    }
    for output, expected in expectations.items():

        @command(output=output)
        def make() -> str:
            return "x"

        assert call(make) == expected
    tasks = call(command(output=TaskList())(lambda: "plan"))
    assert [t.done for t in tasks] == [True, False]
    for bounds in ((None, 10), (100, None), (5, 20)):
        text = call(command(output=BoundedText(*bounds))(lambda: "write"))
        assert (bounds[0] or 0) <= len(text) <= (bounds[1] or 10_000)


def test_a_text_format_reaches_the_offline_model_through_the_command_not_the_request() -> None:
    """The wire Request carries nothing for stand-ins: the command binds the offline model to
    its output type, and the model answers with a reply that type accepts."""
    from dataclasses import fields

    from alloy import YesNo
    from alloy._types import Request
    from alloy.providers.offline import OfflineModel

    assert "example" not in {f.name for f in fields(Request)}
    model = OfflineModel()
    bound = model.for_output(YesNo())
    assert bound.reply == "yes" and bound.name == model.name
    assert model.reply is None  # the registry's instance is left as it is
    assert model.for_output(command(lambda: "x").output_type) is model  # plain text: as it is
