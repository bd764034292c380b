"""The only code that blocks or awaits: it carries out the engine's effects.

One carrier per color, the shape of httpx's auth-flow drivers: :func:`drive_sync` blocks, so it
works without an event loop (and inside one: async handlers and rails then run on a private loop,
see ``_blocking``); :func:`drive_async` awaits and runs tools concurrently. Each serves whole and
streamed calls: in a whole call it asks the model for its reply itself; in a streamed one it hands
the model call to the thin ``stream_*`` entry point, which streams the reply's text out and
resumes the carrier with the reply. Rails, tools, waits and events take the same path either way;
tool calls are run by ``_tool_runner``.
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from typing_extensions import assert_never

from ._blocking import run_blocking
from ._engine import Accepted, Blocked, CallModel, Effect, Emit, Failed, RunRails, RunTools, Sleep
from ._rail import Block, Rail, Subject
from ._tool_runner import run_tools_async, run_tools_sync
from ._tools import Tool
from ._types import Done, Request, Response, Result, TextDelta, ToolCallDelta
from .cache import ToolCache, keep_reply
from .errors import ProviderError
from .events import Event, Handler, logger

if TYPE_CHECKING:
    from ._model import Model

Engine = Generator[Effect, Any, Result[Any]]
#: What a streamed call gives its Result to when it ends (see ``alloy.streaming.Stream``).
OnResult = Callable[[Result[Any]], None] | None
Handlers = Sequence[tuple[Handler, tuple[type, ...]]]

#: Called with the seconds of each wait before a retry, instead of waiting them; None: wait.
#: Tests set it through ``alloy.testing.recorded_waits()``; threads and tasks started in its
#: context see it too.
WAIT: ContextVar[Callable[[float], object] | None] = ContextVar("alloy_wait", default=None)


_NO_FINAL_RESPONSE = "stream from {} ended without a final response"


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the drivers carry effects out with: the models, the tools, and who listens."""

    model: Model
    tools: Mapping[str, Tool[Any]]
    parallel: int = 1
    handlers: Handlers = ()
    log_content: bool = False
    #: The models of the plan's fallbacks, in the same order.
    fallbacks: tuple[Model, ...] = ()
    #: Where tools marked cacheable find their results, with a response cache; else None.
    tool_cache: ToolCache | None = None

    def model_for(self, call: CallModel | Accepted) -> Model:
        """The model that answers ``call``: the plan's own, or the fallback it names."""
        return self.fallbacks[call.fallback - 1] if call.fallback else self.model


# -- sync ---------------------------------------------------------------------------------


def drive_sync(
    engine: Engine, runtime: Runtime, reply: Any = None, *, stream: bool = False
) -> Result[Any] | CallModel:
    """Carry out the engine's effects, blocking, until it returns the call's Result; ``reply``
    is what the engine is sent first (None to start it).

    A streamed call (``stream``) hands each model call back instead, for :func:`stream_sync` to
    stream and resume this with the reply; every other effect is carried out here either way.
    """
    send = reply
    while True:
        try:
            effect = engine.send(send)
        except StopIteration as done:
            result: Result[Any] = done.value
            return result
        match effect:
            case CallModel(request):
                if stream:
                    return effect
                try:
                    send = runtime.model_for(effect).request(request)
                except ProviderError as error:
                    send = Failed(error)
            case RunTools():
                send = run_tools_sync(runtime.tools, effect, runtime.parallel, runtime.tool_cache)
            case Sleep():
                _wait_sync(effect.seconds(random.random()))
                send = None
            case Emit():
                for pending in _notify(effect, runtime):  # what async handlers returned
                    try:
                        run_blocking(pending)
                    except Exception:
                        _handler_failed(effect)
                send = None
            case RunRails():
                send = _run_rails_sync(effect)
            case Accepted(response):
                keep_reply(runtime.model_for(effect), response)
                send = None
            case _:
                assert_never(effect)


def run_sync(engine: Engine, runtime: Runtime) -> Result[Any]:
    """A whole call, blocking."""
    result = drive_sync(engine, runtime)
    assert isinstance(result, Result)
    return result


def stream_sync(engine: Engine, runtime: Runtime, done: OnResult = None) -> Iterator[str]:
    """A streamed call, blocking: the model's text as it arrives, tool rounds in between;
    ``done`` is given the call's Result when it ends.

    A failure tells the engine whether text already reached the caller (``Failed.after_text``):
    from then on no fallback model may start the call over.
    """
    shown = False
    step = drive_sync(engine, runtime, stream=True)
    while isinstance(step, CallModel):
        model = runtime.model_for(step)
        reply: Response | Failed | None = None
        try:
            for event in model.stream(step.request):
                if isinstance(event, TextDelta):
                    if event.text:
                        shown = True
                        yield event.text
                elif isinstance(event, Done):
                    reply = event.response
                    break
        except ProviderError as error:
            reply = Failed(error, shown)
        if reply is None:
            raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
        step = drive_sync(engine, runtime, reply, stream=True)
    if done is not None:
        done(step)


def _wait_sync(seconds: float) -> None:
    hook = WAIT.get()
    if hook is not None:
        hook(seconds)
    else:
        time.sleep(seconds)


def _run_rails_sync(effect: RunRails) -> Subject | Blocked:
    subject = effect.subject
    for rail in effect.rails:
        try:
            outcome = rail.apply(subject)
        except Exception as error:
            return _refused(rail, error)
        if isinstance(outcome, Block):
            return _refused(rail, outcome)
        subject = outcome
    return subject


# -- async --------------------------------------------------------------------------------


async def drive_async(
    engine: Engine, runtime: Runtime, reply: Any = None, *, stream: bool = False
) -> Result[Any] | CallModel:
    """Carry out the engine's effects on the running event loop; as :func:`drive_sync`."""
    send = reply
    while True:
        try:
            effect = engine.send(send)
        except StopIteration as done:
            result: Result[Any] = done.value
            return result
        match effect:
            case CallModel(request):
                if stream:
                    return effect
                try:
                    send = await runtime.model_for(effect).arequest(request)
                except ProviderError as error:
                    send = Failed(error)
            case RunTools():
                send = await run_tools_async(
                    runtime.tools, effect, runtime.parallel, runtime.tool_cache
                )
            case Sleep():
                await _wait_async(effect.seconds(random.random()))
                send = None
            case Emit():
                for pending in _notify(effect, runtime):  # what async handlers returned
                    try:
                        await pending
                    except Exception:
                        _handler_failed(effect)
                send = None
            case RunRails():
                send = await _run_rails_async(effect)
            case Accepted(response):
                keep_reply(runtime.model_for(effect), response)
                send = None
            case _:
                assert_never(effect)


async def run_async(engine: Engine, runtime: Runtime) -> Result[Any]:
    """A whole call, on the running event loop."""
    result = await drive_async(engine, runtime)
    assert isinstance(result, Result)
    return result


async def stream_async(
    engine: Engine, runtime: Runtime, done: OnResult = None
) -> AsyncIterator[str]:
    """A streamed call, on the running event loop; as :func:`stream_sync`."""
    shown = False
    step = await drive_async(engine, runtime, stream=True)
    while isinstance(step, CallModel):
        model = runtime.model_for(step)
        reply: Response | Failed | None = None
        try:
            async for event in model.astream(step.request):
                if isinstance(event, TextDelta):
                    if event.text:
                        shown = True
                        yield event.text
                elif isinstance(event, Done):
                    reply = event.response
        except ProviderError as error:
            reply = Failed(error, shown)
        if reply is None:
            raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
        step = await drive_async(engine, runtime, reply, stream=True)
    if done is not None:
        done(step)


async def _wait_async(seconds: float) -> None:
    import asyncio

    hook = WAIT.get()
    if hook is not None:
        hook(seconds)
    else:
        await asyncio.sleep(seconds)


async def _run_rails_async(effect: RunRails) -> Subject | Blocked:
    subject = effect.subject
    for rail in effect.rails:
        try:
            outcome = await rail.aapply(subject)
        except Exception as error:
            return _refused(rail, error)
        if isinstance(outcome, Block):
            return _refused(rail, outcome)
        subject = outcome
    return subject


# -- the same for both colors -------------------------------------------------------------


def _notify(effect: Emit, runtime: Runtime) -> list[Any]:
    """Call every interested handler; a failing handler is logged, never fatal. Returns what
    async handlers gave back, for the driver to run."""
    event = effect.event
    if logger.isEnabledFor(10):
        logger.debug(event.describe(content=runtime.log_content))
    pending = []
    for handler, kinds in runtime.handlers:
        if kinds and not isinstance(event, kinds):
            continue
        try:
            result = handler(event)
        except Exception:
            logger.exception("alloy event handler %r failed on %s", handler, type(event).__name__)
            continue
        if inspect.isawaitable(result):
            pending.append(result)
    return pending


def _handler_failed(effect: Emit) -> None:
    logger.exception("alloy async event handler failed on %s", type(effect.event).__name__)


def _refused(rail: Rail, why: Block | Exception) -> Blocked:
    """A rail's refusal: the Block it returned, or what it raised (rails fail closed)."""
    if isinstance(why, Block):
        return Blocked(rail.name, why.reason)
    return Blocked(rail.name, f"rail raised {type(why).__name__}: {why}", why)


# -- streamed outputs ---------------------------------------------------------------------

Out = TypeVar("Out")


class Reader(Protocol[Out]):
    """What a streamed call's outputs are made from: told when each model call begins, given
    each delta, and given the call's Result at the end (see ``_answer`` for typed answers)."""

    def begin(self, request: Request) -> Sequence[Out]: ...

    def feed(self, delta: TextDelta | ToolCallDelta) -> Sequence[Out]: ...

    def finish(self, result: Result[Any]) -> Sequence[Out]: ...

    def event(self, output: Out) -> Event | None:
        """The event observers are told of ``output``, or None."""
        ...


def read_sync(
    engine: Engine, runtime: Runtime, reader: Reader[Out], done: OnResult = None
) -> Iterator[Out]:
    """A streamed call, blocking: what ``reader`` makes of the model's deltas as they arrive,
    tool rounds in between. As in :func:`stream_sync`, a failure after an output reached the
    caller is one no fallback model may start over, and ``done`` is given the Result (before
    the last outputs, so a caller that stops at the final value has it too)."""
    shown = False
    step = drive_sync(engine, runtime, stream=True)
    while isinstance(step, CallModel):
        for output in reader.begin(step.request):
            _tell_sync(output, reader, runtime)
            yield output
        model = runtime.model_for(step)
        reply: Response | Failed | None = None
        try:
            for event in model.stream(step.request):
                if isinstance(event, Done):
                    reply = event.response
                    break
                for output in reader.feed(event):
                    shown = True
                    _tell_sync(output, reader, runtime)
                    yield output
        except ProviderError as error:
            reply = Failed(error, shown)
        if reply is None:
            raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
        step = drive_sync(engine, runtime, reply, stream=True)
    if done is not None:
        done(step)
    for output in reader.finish(step):
        _tell_sync(output, reader, runtime)
        yield output


async def read_async(
    engine: Engine, runtime: Runtime, reader: Reader[Out], done: OnResult = None
) -> AsyncIterator[Out]:
    """A streamed call, on the running event loop; as :func:`read_sync`."""
    shown = False
    step = await drive_async(engine, runtime, stream=True)
    while isinstance(step, CallModel):
        for output in reader.begin(step.request):
            await _tell_async(output, reader, runtime)
            yield output
        model = runtime.model_for(step)
        reply: Response | Failed | None = None
        try:
            async for event in model.astream(step.request):
                if isinstance(event, Done):
                    reply = event.response
                    continue
                for output in reader.feed(event):
                    shown = True
                    await _tell_async(output, reader, runtime)
                    yield output
        except ProviderError as error:
            reply = Failed(error, shown)
        if reply is None:
            raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
        step = await drive_async(engine, runtime, reply, stream=True)
    if done is not None:
        done(step)
    for output in reader.finish(step):
        await _tell_async(output, reader, runtime)
        yield output


def _tell_sync(output: Out, reader: Reader[Out], runtime: Runtime) -> None:
    """Tell the observers of an output, when anyone listens."""
    event = reader.event(output) if runtime.handlers else None
    if event is None:
        return
    effect = Emit(event)
    for pending in _notify(effect, runtime):
        try:
            run_blocking(pending)
        except Exception:
            _handler_failed(effect)


async def _tell_async(output: Out, reader: Reader[Out], runtime: Runtime) -> None:
    """Async twin of :func:`_tell_sync`."""
    event = reader.event(output) if runtime.handlers else None
    if event is None:
        return
    effect = Emit(event)
    for pending in _notify(effect, runtime):
        try:
            await pending
        except Exception:
            _handler_failed(effect)
