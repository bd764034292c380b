"""The only code that blocks or awaits: it carries out the engine's effects.

One carrier per color, the shape of httpx's auth-flow drivers: :func:`drive_sync` blocks, so it
works without an event loop (and inside one: async handlers and rails then run on a private loop,
see ``_blocking``); :func:`drive_async` awaits and runs tools concurrently. Each serves whole and
streamed calls: in a whole call it asks the model for its reply itself; in a streamed one it hands
each model call to :func:`read_sync`/:func:`read_async`, which stream the reply through a reader
(``_stream_readers``: the text, partial values or list elements) and resume the carrier with the reply.
Rails, tools, waits and events take the same path either way; ``_tool_runner`` runs the tools.
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import assert_never

from ._blocking import aclose as aclose
from ._blocking import close as close
from ._blocking import run_blocking
from ._engine import (
    Abandoned,
    Accepted,
    Blocked,
    CallModel,
    Effect,
    Emit,
    Failed,
    RunRails,
    RunTools,
    Sleep,
    Stale,
)
from ._observers import Listener, logger
from ._rail_types import Block, Rail, Subject
from ._tool_runner import run_tools_async, run_tools_sync
from ._tools import Tool
from ._types import Done, Response, Result
from .errors import BudgetExceeded, ProviderError
from .pricing import call_cost

if TYPE_CHECKING:
    from ._model import Model
    from ._stream_readers import Reader
    from .cache import ToolCache
    from .events import Event

Engine = Generator[Effect, Any, Result[Any]]
#: What a streamed call gives its Result to when it ends (see ``alloy.streaming.Stream``).
OnResult = Callable[[Result[Any]], None] | None
Handlers = Sequence[Listener]
Out = TypeVar("Out")

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
    #: Whether the models are behind the response cache: only then are the replies the engine
    #: accepts or finds stale its business (and only then is ``alloy.cache`` loaded).
    cached: bool = False

    def model_for(self, call: CallModel | Accepted | Stale) -> Model:
        """The model that answers ``call``: the plan's own, or the fallback it names."""
        return self.fallbacks[call.fallback - 1] if call.fallback else self.model


# -- the carriers -------------------------------------------------------------------------


def drive_sync(
    engine: Engine, runtime: Runtime, reply: Any = None, *, stream: bool = False
) -> Result[Any] | CallModel:
    """Carry out the engine's effects, blocking, until it returns the call's Result (priced
    here: the engine prices nothing, see :func:`priced`); ``reply``
    is what the engine is sent first (None to start it). A streamed call (``stream``) hands
    each model call back instead, for :func:`read_sync` to stream and resume this with."""
    send = reply
    while True:
        try:
            effect = engine.send(send)
        except StopIteration as done:
            return priced(done.value)
        send = None
        match effect:
            case CallModel(request):
                if stream:
                    return effect
                try:
                    send = runtime.model_for(effect).request(request)
                except (ProviderError, BudgetExceeded) as error:
                    send = Failed(error)
            case RunTools():
                send = run_tools_sync(runtime.tools, effect, runtime.parallel, runtime.tool_cache)
            case Sleep():
                time.sleep(_left_to_sleep(effect))
            case Emit(event):
                _emit_sync(event, runtime)
            case RunRails(rails, subject):
                send = subject
                for rail in rails:
                    try:
                        send = _verdict(rail, rail.apply(send))
                    except Exception as error:
                        send = _verdict(rail, error)
                    if isinstance(send, Blocked):
                        break
            case Accepted():
                _keep(runtime, effect)
            case Stale():
                send = _refresh(runtime, effect)
            case _:
                assert_never(effect)


async def drive_async(
    engine: Engine, runtime: Runtime, reply: Any = None, *, stream: bool = False
) -> Result[Any] | CallModel:
    """Carry out the engine's effects on the running event loop; as :func:`drive_sync`."""
    send = reply
    while True:
        try:
            effect = engine.send(send)
        except StopIteration as done:
            return priced(done.value)
        send = None
        match effect:
            case CallModel(request):
                if stream:
                    return effect
                try:
                    send = await runtime.model_for(effect).arequest(request)
                except (ProviderError, BudgetExceeded) as error:
                    send = Failed(error)
            case RunTools():
                send = await run_tools_async(
                    runtime.tools, effect, runtime.parallel, runtime.tool_cache
                )
            case Sleep():
                import asyncio  # only when waiting: ``import alloy`` stays light

                await asyncio.sleep(_left_to_sleep(effect))
            case Emit(event):
                await _emit_async(event, runtime)
            case RunRails(rails, subject):
                send = subject
                for rail in rails:
                    try:
                        send = _verdict(rail, await rail.aapply(send))
                    except Exception as error:
                        send = _verdict(rail, error)
                    if isinstance(send, Blocked):
                        break
            case Accepted():
                _keep(runtime, effect)
            case Stale():
                send = _refresh(runtime, effect)
            case _:
                assert_never(effect)


def _keep(runtime: Runtime, accepted: Accepted) -> None:
    """Store a reply the engine accepted, when the call's models are behind the cache."""
    if runtime.cached:
        from .cache import keep_reply

        keep_reply(runtime.model_for(accepted), accepted.response)


def _refresh(runtime: Runtime, stale: Stale) -> bool:
    """Whether the next request of a stale hit goes to the provider, not the cache."""
    if not runtime.cached:
        return False
    from .cache import refresh_reply

    return refresh_reply(runtime.model_for(stale), stale.response)


def priced(result: Result[Any]) -> Result[Any]:
    """The Result the engine returned, with its cost (``alloy.pricing.call_cost``).

    The engine made it for this call and no one else holds it yet, so the cost is set on it
    rather than on a copy: ``replace`` rebuilds all ten fields, a twentieth of a cache hit."""
    object.__setattr__(result, "cost", call_cost(result.usage, result.usage_by_model))
    return result


def run_sync(engine: Engine, runtime: Runtime) -> Result[Any]:
    """A whole call, blocking."""
    result = drive_sync(engine, runtime)
    assert isinstance(result, Result)
    return result


# -- streamed calls -----------------------------------------------------------------------


def read_sync(
    engine: Engine, runtime: Runtime, reader: Reader[Out], done: OnResult = None
) -> Iterator[Out]:
    """A streamed call, blocking: what ``reader`` makes of the model's deltas as they arrive,
    tool rounds in between. A failure tells the engine whether an output already reached the
    caller (``Failed.after_text``): from then on no fallback model may start the call over.
    ``done`` is given the Result (before the last outputs, so a caller that stops at the final
    value has it too); a stream the caller stops ends its call (see :func:`_ending`)."""
    shown = False
    tell = reader.event if runtime.handlers else _untold
    try:
        step = drive_sync(engine, runtime, stream=True)
        while isinstance(step, CallModel):
            for output in reader.begin(step.request):
                _emit_sync(tell(output), runtime)
                yield output
            model = runtime.model_for(step)
            reply: Response | Failed | None = None
            events = None
            try:
                for event in (events := model.stream(step.request)):
                    if isinstance(event, Done):
                        reply = event.response
                        break
                    for output in reader.feed(event):
                        shown = True
                        _emit_sync(tell(output), runtime)
                        yield output
            except (ProviderError, BudgetExceeded) as error:
                reply = Failed(error, shown)
            finally:
                close(events)
            if reply is None:
                raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
            step = drive_sync(engine, runtime, reply, stream=True)
    except BaseException as stopped:
        for told in _ending(engine, stopped):
            _emit_sync(told, runtime)
        raise
    if done is not None:
        done(step)
    for output in reader.finish(step):
        _emit_sync(tell(output), runtime)
        yield output


async def read_async(
    engine: Engine, runtime: Runtime, reader: Reader[Out], done: OnResult = None
) -> AsyncIterator[Out]:
    """A streamed call, on the running event loop; as :func:`read_sync`."""
    shown = False
    tell = reader.event if runtime.handlers else _untold
    try:
        step = await drive_async(engine, runtime, stream=True)
        while isinstance(step, CallModel):
            for output in reader.begin(step.request):
                await _emit_async(tell(output), runtime)
                yield output
            model = runtime.model_for(step)
            reply: Response | Failed | None = None
            aevents = None
            try:
                async for event in (aevents := model.astream(step.request)):
                    if isinstance(event, Done):
                        reply = event.response
                        continue
                    for output in reader.feed(event):
                        shown = True
                        await _emit_async(tell(output), runtime)
                        yield output
            except (ProviderError, BudgetExceeded) as error:
                reply = Failed(error, shown)
            finally:
                await aclose(aevents)
            if reply is None:
                raise RuntimeError(_NO_FINAL_RESPONSE.format(model.name))
            step = await drive_async(engine, runtime, reply, stream=True)
    except BaseException as stopped:
        for told in _ending(engine, stopped):
            await _emit_async(told, runtime)
        raise
    if done is not None:
        done(step)
    for output in reader.finish(step):
        await _emit_async(tell(output), runtime)
        yield output


# -- what both colors share ---------------------------------------------------------------


def _emit_sync(event: Event | None, runtime: Runtime) -> None:
    """Tell the observers of ``event`` (see :func:`_notify`), blocking on async handlers."""
    for pending in _notify(event, runtime):
        run_blocking(pending)


async def _emit_async(event: Event | None, runtime: Runtime) -> None:
    """Tell the observers of ``event`` (see :func:`_notify`), awaiting async handlers."""
    for pending in _notify(event, runtime):
        await pending


def _notify(event: Event | None, runtime: Runtime) -> list[Coroutine[Any, Any, None]]:
    """Debug-log ``event`` and call every interested handler; a failing handler is logged,
    never fatal. Returns what async handlers gave back, for the driver to run."""
    if event is None:
        return []
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
            pending.append(_handled(result, event))
    return pending


async def _handled(awaitable: Any, event: Event) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("alloy async event handler failed on %s", type(event).__name__)


def _untold(output: object) -> None:
    """No event for an output: nobody listens."""


def _left_to_sleep(wait: Sleep) -> float:
    """The seconds the driver sleeps before a retry: the jittered wait, or none when a
    ``WAIT`` hook was given it instead."""
    seconds = wait.seconds(random.random())
    hook = WAIT.get()
    if hook is None:
        return seconds
    hook(seconds)
    return 0.0


def _verdict(rail: Rail, outcome: Subject | Block | Exception) -> Subject | Blocked:
    """The subject a rail let through, or ``Blocked`` when it returned a Block or raised
    (rails fail closed)."""
    if isinstance(outcome, Block):
        return Blocked(rail.name, outcome.reason)
    if isinstance(outcome, Exception):
        return Blocked(rail.name, f"rail raised {type(outcome).__name__}: {outcome}", outcome)
    return outcome


# -- streams the caller stops -------------------------------------------------------------
#
# A streamed call can stop while the engine waits on it: the caller closes the stream (or
# leaves an ``async for``, whose generator is closed when it is collected), its task is
# cancelled, or an exception that is no CommandError comes through the driver. The SDK's
# stream is closed, and the engine is told (``Abandoned``), so it emits ``CommandCancelled``
# (or ``CommandFailed``) and the call's spans and records end.


def _ending(engine: Engine, why: BaseException) -> Iterator[Event]:
    """Tell an engine that waits on a stream the caller stopped; the events it emits then,
    for the driver to carry out. Nothing is raised (the caller's exception goes on)."""
    if inspect.getgeneratorstate(engine) != inspect.GEN_SUSPENDED:
        return  # done already (it failed, or returned), or never started
    try:
        effect = engine.throw(_stopped(why))
        while isinstance(effect, Emit):
            yield effect.event
            effect = engine.send(None)
        engine.close()
    except (Abandoned, StopIteration):
        pass
    except Exception:
        logger.exception("alloy could not end a stopped stream's call")


def _stopped(why: BaseException) -> Abandoned:
    """What the engine is told of ``why``: a cancellation, or a failure."""
    if isinstance(why, GeneratorExit):
        return Abandoned("the stream was closed")
    if isinstance(why, (KeyboardInterrupt, SystemExit)):
        return Abandoned(f"interrupted ({type(why).__name__})")
    if type(why).__name__ == "CancelledError":  # asyncio's (no import of asyncio here)
        return Abandoned("the task was cancelled")
    return Abandoned(f"the stream broke ({type(why).__name__})", why)
