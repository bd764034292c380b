"""Dependencies: a value a call carries to its tools, checks and rails, never to the model.

``cmd.run(..., deps=db)`` makes ``db`` the call's dependencies; a tool, check or rail receives
them by declaring a parameter annotated ``Context[DB]`` (the shape of pydantic-ai's
``RunContext``), which is left out of the tool's schema. The value is never sent, logged or put
in an event.

It travels in a context variable set only while alloy runs the call's own code: around a
whole call, and around each step of a stream (never while a chunk is with the caller). So two
calls in two threads or tasks, or two streams read in turn, each see their own; a tool run on a
worker thread sees it through the context copy that thread is started with.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import ConfigurationError

D = TypeVar("D")
Y = TypeVar("Y")


@dataclass(frozen=True)  # not slotted: on 3.10-3.12 that makes Context[T](...) a TypeError
class Context(Generic[D]):
    """What a tool, check or rail that declares a ``Context[...]`` parameter is given.

    A test of such a tool makes one itself: ``warranty(Context[Customer](customer))``.
    """

    #: The call's ``deps=`` value, as it was passed.
    deps: D

    def __repr__(self) -> str:
        return f"Context(deps=<{type(self.deps).__name__}>)"  # never the value: it may hold secrets


_CURRENT: ContextVar[Context[Any] | None] = ContextVar("alloy_deps", default=None)


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter annotated ``Context[...]``, or None."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = getattr(fn, "__annotations__", {}) or {}
    for name, hint in hints.items():
        if name != "return" and (hint is Context or typing.get_origin(hint) is Context):
            return name
    return None


def arity_without(fn: Callable[..., Any], parameter: str | None) -> int:
    """How many parameters ``fn`` has besides its Context one."""
    try:
        names = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return 1
    return len(names) - (parameter in names)


def current(owner: str) -> Context[Any]:
    """The running call's Context; ``owner`` (a tool, check or rail) declared that it needs one."""
    context = _CURRENT.get()
    if context is None:
        raise ConfigurationError(
            f"{owner} takes a Context parameter, but the call was given no deps=...; pass "
            "deps= to run(), arun(), stream() or astream()"
        )
    return context


def scoped(deps: Any, call: Callable[[], D]) -> D:
    """``call()`` with ``deps`` as the call's dependencies."""
    token = _CURRENT.set(Context(deps))
    try:
        return call()
    finally:
        _CURRENT.reset(token)


async def ascoped(deps: Any, awaitable: typing.Awaitable[D]) -> D:
    """``await awaitable`` with ``deps`` as the call's dependencies (task-local)."""
    token = _CURRENT.set(Context(deps))
    try:
        return await awaitable
    finally:
        _CURRENT.reset(token)


def scoped_iter(deps: Any, chunks: Iterator[Y]) -> Iterator[Y]:
    """A stream whose every step runs with ``deps``, which is unset while a chunk is yielded."""
    context = Context(deps)
    try:
        while True:
            token = _CURRENT.set(context)
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            finally:
                _CURRENT.reset(token)
            yield chunk
    finally:  # stopped early: the stream inside stops now too
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


async def ascoped_iter(deps: Any, chunks: AsyncIterator[Y]) -> AsyncIterator[Y]:
    """Async twin of :func:`scoped_iter`."""
    context = Context(deps)
    try:
        while True:
            token = _CURRENT.set(context)
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return
            finally:
                _CURRENT.reset(token)
            yield chunk
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
