"""Typed values while they stream: partials, list items, and how each field is shown.

``cmd.stream_partial(...)`` yields :class:`Partial` views of the answer as it arrives, ending
with the complete, validated value; ``cmd.stream_items(...)`` yields each element of a list
answer once it is complete and validated. Both have async twins (``astream_partial``,
``astream_items``). Every stream, ``stream()``'s text included, holds the call's ``result`` once
it has run to its end, so a streamed call is carried on (``history=``) like any other.

What a partial shows is decided field by field, with markers in ``Annotated``::

    @dataclass
    class Story:
        title: Annotated[str, streaming.not_null]  # the story shows once its title is there
        body: Annotated[str, streaming.grow]  # shown while it is written
        scenes: list[Annotated[Scene, streaming.done]]  # each scene shown once it is whole

By default a string is shown once its closing quote arrives; numbers, booleans, enums, literals
and dates are only ever shown whole, whatever the markers say. Fields that carry checks
(``alloy.checks`` criteria) are never shown before the whole answer has passed them, and a
command with output rails shows nothing before its final value.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

from ._partial import Snapshot, materialize, open_path
from ._types import Result

__all__ = [
    "AsyncItemStream",
    "AsyncStream",
    "ItemStream",
    "Marker",
    "Partial",
    "Stream",
    "done",
    "grow",
    "not_null",
]

T = TypeVar("T")
E = TypeVar("E")
Y = TypeVar("Y")
R = TypeVar("R")


class Marker:
    """How a field is shown while it streams; put it in ``Annotated[T, marker]``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"streaming.{self.name}"


#: Show the field only once it is complete (an object or list: with all its members).
done = Marker("done")
#: Show a string while it is written; on an object or list, every ``str`` inside it.
grow = Marker("grow")
#: Hold the object that has this field until the field has its value.
not_null = Marker("not_null")

_NOT_FINAL: Any = object()


class Partial(Generic[T]):
    """The answer as far as it has arrived: JSON-shaped data holding only complete values (and
    the strings marked to grow), which attempt it belongs to, and, on the last one, the value.

    ``data`` is an object root's dict, or for other types (lists, scalars) the value itself;
    None before anything is shown. Every value in ``data`` is complete except those on
    ``open_path``, the way to the member being written. Partials share the members that are
    complete, so treat ``data`` as read-only.
    """

    __slots__ = ("_data", "_path", "_snapshot", "_value", "_wrapped", "attempt")

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        attempt: int,
        wrapped: bool,
        value: Any = _NOT_FINAL,
        data: Any = _NOT_FINAL,
    ) -> None:
        self._snapshot = snapshot
        self._wrapped = wrapped
        self._value = value
        self._data = data
        self._path: tuple[str | int, ...] | None = () if value is not _NOT_FINAL else None
        #: 1 for the first answer; one more for each answer streamed again after a re-ask or
        #: a retried failure (the data then starts over).
        self.attempt = attempt

    @property
    def data(self) -> Any:
        """What has arrived, JSON-shaped (dicts, lists, str, int, float, bool, None)."""
        if self._data is _NOT_FINAL:
            root = materialize(self._snapshot)
            if self._wrapped:
                root = root.get("value") if root is not None else None
            self._data = root
        return self._data

    @property
    def complete(self) -> bool:
        """True on the last partial, which carries the validated :attr:`value`."""
        return self._value is not _NOT_FINAL

    @property
    def value(self) -> T:
        """The final, validated value (the same a call returns); only on the last partial."""
        if self._value is _NOT_FINAL:
            raise ValueError(
                "this partial is not complete: only the last one has the value "
                "(check partial.complete, read partial.data meanwhile)"
            )
        value: T = self._value
        return value

    @property
    def open_path(self) -> tuple[str | int, ...]:
        """Keys and indexes down to the member being written (empty when nothing is)."""
        if self._path is None:
            path = open_path(self._snapshot)
            self._path = path[1:] if self._wrapped and path else path
        return self._path

    def get(self, *path: str | int, default: Any = None) -> Any:
        """The value at ``path`` in :attr:`data` (``p.get("lines", 0, "sku")``), or ``default``."""
        node = self.data
        for step in path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                return default
        return node

    def is_complete(self, *path: str | int) -> bool:
        """Whether the value at ``path`` has arrived whole (the whole answer for no path)."""
        if self.complete:
            return True
        if not path:
            return False
        missing = object()
        if self.get(*path, default=missing) is missing:
            return False
        return tuple(path) != self.open_path[: len(path)]

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"open at {list(self.open_path)}"
        return f"Partial(attempt={self.attempt}, {state}, data={self.data!r})"


class _Ended(Generic[R]):
    """Keeps a streamed call's Result once the stream has run to its end."""

    _result: Result[R] | None = None

    def _end(self, result: Result[Any]) -> None:
        self._result = result

    @property
    def result(self) -> Result[R]:
        """The call's :class:`~alloy.Result`, as ``run()`` returns it: the value, the usage and
        the whole conversation (``result.messages``, tool rounds included), to carry on with
        ``history=``. It is there once the stream has run to its end; before that (or after
        the stream failed or was closed early) reading it raises ``ValueError``."""
        result = self._result
        if result is None:
            raise ValueError(
                "the stream has not run to its end: its result (and messages) are there once "
                "the last chunk has been read"
            )
        return result


class Stream(_Ended[R], Iterator[Y], Generic[Y, R]):
    """What a streamed call yields (``stream()``: text; ``stream_partial()``: partials), as
    it arrives; once it has all arrived, :attr:`result` is the call's Result."""

    def __init__(self, start: Callable[[Callable[[Result[Any]], None]], Iterator[Y]]) -> None:
        #: ``start`` makes the outputs, given what to call with the Result at the end.
        self._outputs = start(self._end)

    def __iter__(self) -> Stream[Y, R]:
        return self

    def __next__(self) -> Y:
        return next(self._outputs)

    def close(self) -> None:
        """Stop the stream (and the call) early."""
        close = getattr(self._outputs, "close", None)
        if close is not None:
            close()


class AsyncStream(_Ended[R], AsyncIterator[Y], Generic[Y, R]):
    """Async twin of :class:`Stream` (``astream()``, ``astream_partial()``)."""

    def __init__(self, start: Callable[[Callable[[Result[Any]], None]], AsyncIterator[Y]]) -> None:
        self._outputs = start(self._end)

    def __aiter__(self) -> AsyncStream[Y, R]:
        return self

    async def __anext__(self) -> Y:
        return await self._outputs.__anext__()

    async def aclose(self) -> None:
        """Stop the stream (and the call) early."""
        close = getattr(self._outputs, "aclose", None)
        if close is not None:
            await close()


class ItemStream(_Ended[list[E]], Iterator[E]):
    """The elements of a list answer, each yielded once it is complete and validated; once
    the stream has run to its end, :attr:`result` is the call's Result (its value the list).

    ``attempt`` is the attempt the last element came from: when a finished answer fails
    validation and is re-asked, the elements of the new answer follow, with ``attempt`` one
    higher (those already yielded belonged to the answer that failed).
    """

    def __init__(
        self, start: Callable[[Callable[[Result[Any]], None]], Iterator[tuple[int, E]]]
    ) -> None:
        self._pairs = start(self._end)
        self.attempt = 1

    def __iter__(self) -> ItemStream[E]:
        return self

    def __next__(self) -> E:
        self.attempt, item = next(self._pairs)
        return item

    def close(self) -> None:
        """Stop the stream (and the call) early."""
        close = getattr(self._pairs, "close", None)
        if close is not None:
            close()


class AsyncItemStream(_Ended[list[E]], AsyncIterator[E]):
    """Async twin of :class:`ItemStream`."""

    def __init__(
        self, start: Callable[[Callable[[Result[Any]], None]], AsyncIterator[tuple[int, E]]]
    ) -> None:
        self._pairs = start(self._end)
        self.attempt = 1

    def __aiter__(self) -> AsyncItemStream[E]:
        return self

    async def __anext__(self) -> E:
        self.attempt, item = await self._pairs.__anext__()
        return item

    async def aclose(self) -> None:
        """Stop the stream (and the call) early."""
        close = getattr(self._pairs, "aclose", None)
        if close is not None:
            await close()
