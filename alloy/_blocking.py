"""Blocking on async code from sync code, and worker threads that keep the caller's context.

Low in the layering on purpose: the drivers, rails and the scripted test models all need to run a
coroutine from sync code, and a bare ``asyncio.run`` fails when the thread already runs an event
loop (a notebook, or a sync call made inside async code). ``asyncio`` is imported only when used,
so ``import alloy`` stays light.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def run_blocking(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code, even when this thread has a running loop
    (then on a private loop in a worker thread, see :func:`in_thread`)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    result: T = in_thread(asyncio.run, _await(awaitable)).result()
    return result


def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
    """Run ``fn`` on a new daemon thread in a copy of the caller's context; its future result.

    The copy carries ``use_config()`` and ``override_model()`` into the thread (a plain thread
    starts with an empty context). Daemon, so a thread nobody waits for any more (a tool past its
    timeout) never holds up the interpreter's exit, as a ThreadPoolExecutor's workers would.
    """
    future: Future[T] = Future()
    context = contextvars.copy_context()

    def target() -> None:
        if not future.set_running_or_notify_cancel():  # cancelled before it started
            return
        try:
            result = context.run(fn, *args, **kwargs)
        except BaseException as exc:  # handed to whoever waits on the future
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=target, name="alloy-worker", daemon=True).start()
    return future


async def _await(awaitable: Awaitable[T]) -> T:
    """A coroutine around any awaitable (``asyncio.run`` takes coroutines only)."""
    return await awaitable


def close(stream: Iterator[Any] | None) -> None:
    """Close a stream (a model's, and so the SDK's) now, not when it is collected."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()


async def aclose(stream: AsyncIterator[Any] | None) -> None:
    """Async twin of :func:`close`: an async generator left open is closed only later, by
    the event loop, when it is collected."""
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
