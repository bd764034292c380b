"""What ``cmd.map`` and ``cmd.amap`` hand back: the run's records, as they come.

``AsyncRows`` is the run on the caller's event loop: ``async for row in cmd.amap(...)``, or
``await cmd.amap(...)`` for the list. ``Rows`` is the same run for blocking code: it runs on a
private event loop in a worker thread (in a copy of the caller's context, so ``use_config()``,
``override_model()`` and ``deps`` reach every row) and hands the records over one at a time.
Either way the run starts when the first record is asked for, and ``summary`` is there once
the records are all out. Stopping early (``break``, ``close()``, Ctrl-C) cancels the calls under
way; every row finished so far is in the checkpoint, so running the same map again resumes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import sys
import threading
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any, Generic, TypeVar

from ._records import Row, Summary
from ._run import Run

R = TypeVar("R")


class AsyncRows(Generic[R]):
    """A run on the running event loop: iterate it with ``async for``, or await the list."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._started = False

    @property
    def summary(self) -> Summary | None:
        """How the run went, once it is over (None before)."""
        return self._run.summary

    def __aiter__(self) -> AsyncIterator[Row[R]]:
        if self._started:
            raise RuntimeError("a map run can be iterated once; call map() again to rerun it")
        self._started = True
        return self._run.rows()

    def __await__(self) -> Generator[Any, None, list[Row[R]]]:
        return self._collect().__await__()

    async def _collect(self) -> list[Row[R]]:
        return [row async for row in self]


_ROW, _END, _ERROR = "row", "end", "error"
#: Seconds ``close()`` waits for a run's calls to stop.
_WIND_DOWN = 30.0
logger = logging.getLogger("alloy.rows")


async def _wind_down() -> None:
    """What ``asyncio.run`` does at the end: cancel every other task (the run, its calls, a
    wait for the next record) and let each finish, then close async generators."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class Rows(Generic[R]):
    """A run for blocking code: iterate it for the records (``list(rows)`` for all of them)."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._queue: asyncio.Queue[tuple[str, Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._over = False

    @property
    def summary(self) -> Summary | None:
        """How the run went, once it is over (None before)."""
        return self._run.summary

    def __iter__(self) -> Iterator[Row[R]]:
        return self

    def __next__(self) -> Row[R]:
        if self._over:
            raise StopIteration
        if self._loop is None:
            self._start()
        assert self._loop is not None and self._queue is not None
        try:
            kind, value = asyncio.run_coroutine_threadsafe(self._queue.get(), self._loop).result()
        except BaseException:  # Ctrl-C while waiting: stop the run, keep what is finished
            self.close()
            raise
        if kind == _ROW:
            row: Row[R] = value
            return row
        self.close()
        if kind == _ERROR:
            raise value
        raise StopIteration

    def __enter__(self) -> Rows[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the run (calls under way are cancelled) and its worker thread."""
        self._over = True
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = self._thread = self._task = None
        if sys.is_finalizing() or not thread.is_alive():
            return  # the interpreter is shutting down: its daemon threads go with it
        try:
            asyncio.run_coroutine_threadsafe(_wind_down(), loop).result(timeout=_WIND_DOWN)
        except concurrent.futures.TimeoutError:
            logger.warning("alloy: a run over rows took over %ss to stop; left to exit", _WIND_DOWN)
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_WIND_DOWN)
        if not thread.is_alive():
            loop.close()

    def __del__(self) -> None:
        # A run dropped before its end (``next(iter(cmd.map(...)))``): stop it, unless the
        # interpreter is already shutting down, when waiting on its thread could hang.
        if self._loop is not None and not sys.is_finalizing():
            self.close()

    def _start(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="alloy-map", daemon=True)
        self._thread.start()
        made = concurrent.futures.Future[
            tuple[asyncio.Queue[tuple[str, Any]], asyncio.Task[None]]
        ]()

        def begin() -> None:
            queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=1)
            made.set_result((queue, loop.create_task(self._produce(queue))))

        context = contextvars.copy_context()  # the caller's settings reach every row
        loop.call_soon_threadsafe(context.run, begin)
        self._queue, self._task = made.result()

    async def _produce(self, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        rows = self._run.rows()
        try:
            async for row in rows:
                await queue.put((_ROW, row))
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            await queue.put((_ERROR, error))
        else:
            await queue.put((_END, None))
        finally:
            await rows.aclose()  # here, in this task: the run's own cleanup cancels its calls
