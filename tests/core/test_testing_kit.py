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


def test_override_model_follows_the_context_and_threads_true_reaches_every_thread() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from alloy import command

    @command(model=FunctionModel(lambda request: "its own model"))
    def greet(name: str) -> str:
        return f"Greet {name}"

    def in_a_thread() -> str:
        found: list[str] = []
        worker = threading.Thread(target=lambda: found.append(greet("Ann")))
        worker.start()
        worker.join()
        return found[0]

    # A plain thread started inside the block does not see a context-local override.
    with override_model(script("hello")):
        assert greet("Ann") == "hello"
        assert in_a_thread() == "its own model"
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(greet, "Bo").result() == "its own model"

    with override_model(script("hello", "hi", "hey"), threads=True) as model:
        assert in_a_thread() == "hello"
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(greet, "Bo").result() == "hi"
        assert greet("Cy") == "hey"
    assert len(model.requests) == 3
    # Gone with the block, for every thread.
    assert in_a_thread() == "its own model"
