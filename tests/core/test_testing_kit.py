"""The test kit's own promises: a FunctionModel that runs out of replies, and a script whose
replies are not all used, fail the test saying so."""

from __future__ import annotations

import pytest

from alloy import command
from alloy.testing import FunctionModel, ScriptedModel, override_model, script

from ..conftest import Call


@command
def say(line: str) -> str:
    return line


def test_a_function_model_whose_iterator_runs_out_fails_clearly(call: Call) -> None:
    replies = iter(["one"])
    model = FunctionModel(lambda request: next(replies))
    with override_model(model):
        assert call(say, "a") == "one"
        with pytest.raises(AssertionError, match=r"raised StopIteration on request #2"):
            call(say, "b")


def test_an_async_function_model_that_runs_out_fails_clearly(call: Call) -> None:
    replies = iter(["one"])

    async def reply(request: object) -> str:
        return next(replies)

    with override_model(FunctionModel(reply)):
        assert call(say, "a") == "one"
        with pytest.raises(AssertionError, match="StopIteration"):
            call(say, "b")


def test_a_stream_from_a_model_that_runs_out_fails_clearly() -> None:
    replies = iter(["one"])
    with override_model(FunctionModel(lambda request: next(replies))):
        assert "".join(say.stream("a")) == "one"
        with pytest.raises(AssertionError, match="StopIteration"):
            "".join(say.stream("b"))


def test_a_script_with_all_used_fails_on_replies_left_over(call: Call) -> None:
    left_over = r"1 unused reply after 1 request\(s\): \['two'\]"
    with (
        pytest.raises(AssertionError, match=left_over),
        override_model(script("one", "two", all_used=True)),
    ):
        assert call(say, "a") == "one"
    with override_model(script("one", all_used=True)) as model:
        assert call(say, "a") == "one"
    assert isinstance(model, ScriptedModel) and model.unused == []


def test_a_script_by_default_lists_its_unused_replies(call: Call) -> None:
    with override_model(script("one", "two")) as model:
        assert call(say, "a") == "one"
    assert model.unused == ["two"]
    with pytest.raises(AssertionError, match="unused"):
        model.check_all_used()
