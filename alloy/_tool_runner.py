"""Running the model's tool calls for the drivers: concurrency, time limits, and the outcomes.

Each call is looked up, its arguments validated and its contracts checked (``Tool.bind``), and
every failure becomes an outcome the model reads. A call may run for its tool's timeout (or the
command's ``tool_timeout``), cut at the call's deadline; past it the call is a timed-out
outcome. The sync runner uses a thread per call only when that is needed (several calls at once,
or a time limit: a thread it can walk away from); the async one awaits async tools and runs sync
ones on threads, so the event loop goes on.

A call with a response cache hands the runners its :class:`~alloy.cache.ToolCache`: a tool
marked cacheable is looked up there by its name and arguments (once they are validated) and
runs only on a miss, and a result it returned is stored.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TYPE_CHECKING, Any

from ._blocking import in_thread, run_blocking
from ._engine import RunTools, ToolOutcome
from ._tools import Tool, ToolTimedOut, arguments_json, error_result, result_content
from ._types import ToolCall, ToolResult

if TYPE_CHECKING:
    from .cache import ToolCache


def _find_tool(tools: Mapping[str, Tool[Any]], call: ToolCall) -> Tool[Any] | ToolOutcome:
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        message = f"Error: no tool named {call.name!r}; available tools: {known}"
        return ToolOutcome(
            ToolResult(call.id, call.name, message, is_error=True), LookupError(message)
        )
    return tool


def _finish(
    tool: Tool[Any], call: ToolCall, value: Any, stored: tuple[ToolCache, str] | None = None
) -> ToolOutcome:
    try:
        tool.check_result(value)
        content = result_content(value)
    except Exception as exc:
        return ToolOutcome(error_result(call, exc), exc)
    if stored is not None:
        cache, key = stored
        cache.write(key, content)
    return ToolOutcome(ToolResult(call.id, call.name, content))


def _cached(
    cache: ToolCache | None, tool: Tool[Any], call: ToolCall
) -> tuple[ToolCache, str] | ToolOutcome | None:
    """For a cacheable tool: its stored result for these (validated) arguments, or where to
    store the result once it runs; None for a tool that always runs."""
    if cache is None or not tool.cacheable:
        return None
    key = cache.key(call, arguments_json(call))
    if key is None:
        return None
    content = cache.read(key)
    if content is None:
        return cache, key
    return ToolOutcome(ToolResult(call.id, call.name, content))


def _timeout(tools: Mapping[str, Tool[Any]], call: ToolCall, effect: RunTools) -> float | None:
    """The call's tool timeout: its tool's own, else the command's ``tool_timeout``, or None."""
    tool = tools.get(call.name)
    return tool.timeout if tool is not None and tool.timeout is not None else effect.tool_timeout


def _deadline(effect: RunTools) -> float | None:
    """When the call's deadline comes, on ``time.monotonic``; None without one."""
    return None if effect.time_left is None else time.monotonic() + effect.time_left


def _limit(timeout: float | None, deadline: float | None) -> float | None:
    """Seconds a tool call starting now may run: its timeout, cut at the call's deadline."""
    if deadline is None:
        return timeout
    left = max(deadline - time.monotonic(), 0.0)
    return left if timeout is None else min(timeout, left)


def _timed_out(call: ToolCall, seconds: float) -> ToolOutcome:
    error = ToolTimedOut(call.name, seconds)
    return ToolOutcome(error_result(call, error), error)


async def _within(awaitable: Any, limit: float | None, name: str) -> Any:
    """Await ``awaitable``; past ``limit`` seconds (None: no limit), cancel it and raise
    ToolTimedOut."""
    import asyncio

    if limit is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait((task,), timeout=limit)
    finally:
        if not task.done():
            task.cancel()
    if not done:
        raise ToolTimedOut(name, limit)
    return task.result()


# -- tool calls, sync -------------------------------------------------------------------------


def run_tools_sync(
    tools: Mapping[str, Tool[Any]],
    effect: RunTools,
    parallel: int,
    cache: ToolCache | None = None,
) -> list[ToolOutcome]:
    """Run the effect's tool calls, in this thread when that is safe: one call at a time and
    none with a time limit (which needs a thread it can walk away from)."""
    calls = effect.calls
    timeouts = [_timeout(tools, call, effect) for call in calls]
    deadline = _deadline(effect)
    unlimited = deadline is None and all(timeout is None for timeout in timeouts)
    if unlimited and (len(calls) == 1 or parallel <= 1):
        return [_run_tool_sync(tools, call, None, cache) for call in calls]
    return _run_tools_on_threads(tools, calls, timeouts, deadline, parallel, cache)


def _run_tool_sync(
    tools: Mapping[str, Tool[Any]],
    call: ToolCall,
    limit: float | None,
    cache: ToolCache | None = None,
) -> ToolOutcome:
    prepared = _find_tool(tools, call)
    if isinstance(prepared, ToolOutcome):
        return prepared
    try:
        bound = prepared.bind(call)
        stored = _cached(cache, prepared, call)
        if isinstance(stored, ToolOutcome):
            return stored
        value = prepared.fn(*bound.args, **bound.kwargs)
        if inspect.isawaitable(value):  # an async tool: cancelled at its limit
            value = run_blocking(_within(value, limit, call.name))
    except Exception as exc:
        return ToolOutcome(error_result(call, exc), exc)
    return _finish(prepared, call, value, stored)


def _run_tools_on_threads(
    tools: Mapping[str, Tool[Any]],
    calls: Sequence[ToolCall],
    timeouts: Sequence[float | None],
    deadline: float | None,
    parallel: int,
    cache: ToolCache | None = None,
) -> list[ToolOutcome]:
    """Each call on its own thread (see ``in_thread``), at most ``parallel`` at once, in order.

    A call past its time limit is reported as timed out and its thread abandoned: Python cannot
    stop a thread, so the tool runs on (a daemon thread, which holds up neither this call nor
    the interpreter's exit) and no longer counts against ``parallel``.
    """
    waiting = list(reversed(range(len(calls))))  # popped from the end: first call first
    outcomes: list[ToolOutcome | None] = [None] * len(calls)
    # index, time limit and when it runs out (on time.monotonic) of each running call
    running: dict[Future[ToolOutcome], tuple[int, float | None, float]] = {}
    while waiting or running:
        while waiting and len(running) < max(1, parallel):
            index = waiting.pop()
            limit = _limit(timeouts[index], deadline)
            expires = math.inf if limit is None else time.monotonic() + limit
            future = in_thread(_run_tool_sync, tools, calls[index], limit, cache)
            running[future] = (index, limit, expires)
        first_expiry = min(expires for _, _, expires in running.values())
        wait_for = None if first_expiry == math.inf else max(0.0, first_expiry - time.monotonic())
        wait(running, timeout=wait_for, return_when=FIRST_COMPLETED)
        now = time.monotonic()
        for future, (index, limit, expires) in list(running.items()):
            if future.done():
                outcomes[index] = future.result()
            elif now >= expires and limit is not None:
                outcomes[index] = _timed_out(calls[index], limit)
            else:
                continue
            del running[future]
    return [outcome for outcome in outcomes if outcome is not None]


# -- tool calls, async ------------------------------------------------------------------------


async def run_tools_async(
    tools: Mapping[str, Tool[Any]],
    effect: RunTools,
    parallel: int,
    cache: ToolCache | None = None,
) -> list[ToolOutcome]:
    """Run the effect's tool calls concurrently, at most ``parallel`` at a time."""
    import asyncio

    deadline = _deadline(effect)

    async def one(call: ToolCall) -> ToolOutcome:
        limit = _limit(_timeout(tools, call, effect), deadline)
        return await _run_tool_async(tools, call, limit, cache)

    calls = effect.calls
    if len(calls) == 1:
        return [await one(calls[0])]
    gate = asyncio.Semaphore(max(1, parallel))

    async def gated(call: ToolCall) -> ToolOutcome:
        async with gate:
            return await one(call)

    return list(await asyncio.gather(*(gated(call) for call in calls)))


async def _run_tool_async(
    tools: Mapping[str, Tool[Any]],
    call: ToolCall,
    limit: float | None,
    cache: ToolCache | None = None,
) -> ToolOutcome:
    prepared = _find_tool(tools, call)
    if isinstance(prepared, ToolOutcome):
        return prepared
    try:
        bound = prepared.bind(call)
        stored = _cached(cache, prepared, call)
        if isinstance(stored, ToolOutcome):
            return stored
        value = await _within(_call_tool(prepared, bound), limit, call.name)
    except Exception as exc:
        return ToolOutcome(error_result(call, exc), exc)
    return _finish(prepared, call, value, stored)


async def _call_tool(tool: Tool[Any], bound: inspect.BoundArguments) -> Any:
    """Await an async tool; run a sync one on its own thread (``in_thread``), so the event loop
    goes on, and a tool past its limit holds up neither the loop nor ``asyncio.run``'s exit."""
    import asyncio

    if tool.is_async:
        return await tool.fn(*bound.args, **bound.kwargs)
    value = await asyncio.wrap_future(in_thread(tool.fn, *bound.args, **bound.kwargs))
    if inspect.isawaitable(value):
        value = await value
    return value
