"""alloy-ai's ``stream()``: a text command declared ``output=str`` streams its text, and an
``async def`` prompt function streams through an async iterator (issue 21, item 2)."""

from __future__ import annotations

import pytest

from alloy import ConfigurationError, command
from alloy.testing import FunctionModel, override_model, script

from .conftest import collect, prompt_of


def test_a_str_command_streams_its_text(model: FunctionModel) -> None:
    @command(output=str)
    def brainstorm(topic: str) -> str:
        return f"Ideas about {topic}"

    assert "".join(brainstorm.stream("alloy")) == "done"
    assert model.requests[0].output is None  # text, not {"value": ...}
    assert "".join(collect(brainstorm.astream("alloy"))) == "done"


def test_a_str_command_called_still_answers_through_its_schema() -> None:
    @command(output=str)
    def brainstorm(topic: str) -> str:
        return f"Ideas about {topic}"

    fake = script('{"value": "idea"}')
    with override_model(fake):
        assert brainstorm("alloy") == "idea"
    assert fake.requests[0].output is not None


def test_an_async_command_streams_through_an_async_iterator(model: FunctionModel) -> None:
    @command
    async def title(text: str) -> str:
        return f"Title for {text}"

    chunks = title.stream("alloy")
    assert hasattr(chunks, "__aiter__")
    assert "".join(collect(chunks)) == "done"
    assert prompt_of(model) == "Title for alloy"


def test_a_typed_command_still_refuses_to_stream() -> None:
    @command(output=float)
    def price(text: str) -> str:
        return f"Price in {text}"

    with pytest.raises(ConfigurationError, match="stream"):
        price.stream("$49.99")
