"""A streamed call the caller stops before it ends: closes the stream, leaves an ``async for``
or cancels the task. The model's stream is closed at once, and the engine is told, so the call
ends with a ``CommandCancelled`` event (its spans and records end with it) instead of staying
open; an exception that is no CommandError ends it with ``CommandFailed``."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from alloy import command
from alloy._config import Config
from alloy._drivers import Runtime, read_async, read_sync
from alloy._engine import Abandoned, CallModel, Emit, Plan, run
from alloy._output import TextOutput
from alloy._stream_readers import TextReader
from alloy._types import Request, StreamEvent, Text, TextDelta
from alloy.events import CommandCancelled, CommandFailed, Event, ModelRequest
from alloy.testing import FunctionModel

PROMPT = (Text("hi"),)


def observed_plan() -> Plan:
    return Plan(
        command="cmd", model="test:model", output=TextOutput(), config=Config(), observed=True
    )


def test_the_engine_told_of_a_stopped_stream_emits_command_cancelled() -> None:
    engine = run(observed_plan(), PROMPT, call_id="c1")
    effect = engine.send(None)
    while not isinstance(effect, CallModel):
        effect = engine.send(None)
    emitted = engine.throw(Abandoned("the stream was closed"))
    assert isinstance(emitted, Emit) and isinstance(emitted.event, CommandCancelled)
    assert emitted.event.reason == "the stream was closed" and emitted.event.call_id == "c1"
    with pytest.raises(Abandoned):
        engine.send(None)


def test_a_driver_failure_ends_the_call_as_failed() -> None:
    engine = run(observed_plan(), PROMPT, call_id="c1")
    effect = engine.send(None)
    while not isinstance(effect, CallModel):
        effect = engine.send(None)
    broken = TypeError("a bug")
    emitted = engine.throw(Abandoned("the stream broke", broken))
    assert isinstance(emitted, Emit) and isinstance(emitted.event, CommandFailed)
    assert emitted.event.error is broken


class Endless(FunctionModel):
    """A model whose stream never ends by itself, and says when it was closed."""

    def __init__(self) -> None:
        super().__init__(lambda request: "never")
        self.closed: list[str] = []

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        try:
            while True:
                yield TextDelta("word ")
        finally:
            self.closed.append("sync")

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        try:
            while True:
                yield TextDelta("word ")
                await asyncio.sleep(0)
        finally:
            self.closed.append("async")


def runtime(model: Any, events: list[Event]) -> Runtime:
    return Runtime(model=model, tools={}, handlers=((events.append, ()),))


def test_closing_a_stream_closes_the_models_and_ends_the_call() -> None:
    model, events = Endless(), []
    chunks = read_sync(
        run(observed_plan(), PROMPT, call_id="c1"), runtime(model, events), TextReader()
    )
    assert next(chunks) == "word "
    chunks.close()
    assert model.closed == ["sync"]
    assert [type(e) for e in events][-1] is CommandCancelled
    assert sum(isinstance(e, ModelRequest) for e in events) == 1


def test_closing_an_async_stream_ends_the_call_before_aclose_returns() -> None:
    model, events = Endless(), []

    async def main() -> None:
        chunks = read_async(
            run(observed_plan(), PROMPT, call_id="c1"), runtime(model, events), TextReader()
        )
        assert await chunks.__anext__() == "word "
        await chunks.aclose()  # type: ignore[attr-defined]
        assert model.closed == ["async"]
        assert isinstance(events[-1], CommandCancelled)

    asyncio.run(main())


def test_a_cancelled_task_ends_the_call_as_cancelled() -> None:
    model, events = Endless(), []

    async def read() -> None:
        async for _ in read_async(
            run(observed_plan(), PROMPT, call_id="c1"), runtime(model, events), TextReader()
        ):
            pass

    async def main() -> None:
        task = asyncio.create_task(read())
        while len(events) < 3:  # started, prompt rendered, the model request
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert model.closed == ["async"]
    cancelled = events[-1]
    assert isinstance(cancelled, CommandCancelled) and cancelled.reason == "the task was cancelled"


def test_a_typed_stream_closed_early_ends_the_call() -> None:
    """Through the public API: close() on stream_partial and stream_items, break in async for."""
    events: list[Event] = []

    @command(output=list[int], model=FunctionModel(lambda request: '{"value": [1, 2, 3]}'))
    def numbers(text: str) -> str:
        return text

    numbers.subscribe(events.append, CommandCancelled)
    partials = numbers.stream_partial("x")
    next(partials)
    partials.close()
    items = numbers.stream_items("x")
    assert next(items) == 1
    items.close()

    async def main() -> None:
        async for _ in numbers.astream_partial("x"):
            break
        # Left behind by the break, the stream is freed and asyncio's finalizer hook starts a
        # task on this loop that closes it: let that task run, as a program that goes on does
        # (asyncio.run cancels tasks still pending at its end). The collection makes sure
        # nothing is left for a later one: a stream finalized by the collector once the loop
        # is gone never ends its call.
        gc.collect()
        for _ in range(3):
            await asyncio.sleep(0)
        stream = numbers.astream_items("x")
        await stream.__anext__()
        await stream.aclose()

    asyncio.run(main())
    assert [e.reason for e in events] == ["the stream was closed"] * 4  # type: ignore[attr-defined]


def test_a_stream_read_to_its_end_is_not_cancelled() -> None:
    model = FunctionModel(lambda request: "done")
    events: list[Event] = []
    engine = run(observed_plan(), PROMPT, call_id="c1")
    assert list(read_sync(engine, runtime(model, events), _Text())) == []
    assert not any(isinstance(e, CommandCancelled) for e in events)
    chunks = read_sync(run(observed_plan(), PROMPT), runtime(model, events), TextReader())
    assert list(chunks) == ["done"]
    assert not any(isinstance(e, CommandCancelled) for e in events)


class _Text:
    """A reader that shows nothing."""

    def begin(self, request: Request) -> tuple[()]:
        return ()

    def feed(self, delta: Any) -> tuple[()]:
        return ()

    def finish(self, result: Any) -> tuple[()]:
        return ()

    def event(self, output: Any) -> None:
        return None


@pytest.mark.parametrize("form", ["astream", "astream_partial", "astream_items"])
def test_an_async_stream_closed_early_ends_its_call_at_once(form: str) -> None:
    """``aclose()`` ends the call before it returns, not when the loop collects what is left."""
    events: list[Event] = []
    reply = '{"value": [1, 2, 3]}'

    @command(output=str if form == "astream" else list[int], model=FunctionModel(lambda r: reply))
    def numbers(text: str) -> str:
        return text

    numbers.subscribe(events.append, CommandCancelled)

    async def main() -> int:
        stream = getattr(numbers, form)("x")
        await stream.__anext__()
        await stream.aclose()
        return len(events)

    assert asyncio.run(main()) == 1
