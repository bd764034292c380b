"""Typed values while they stream: partials, list items, and how each field is shown.

``cmd.stream_partial(...)`` yields :class:`Partial` views of the answer as it arrives, ending
with the complete, validated value; ``cmd.stream_items(...)`` yields each element of a list
answer once it is complete and validated. Both have async twins (``astream_partial``,
``astream_items``). Every stream, ``stream()``'s text included, holds the call's ``result`` once
it has run to its end, so a streamed call is carried on (``history=``) like any other. When the
stream starts over (a re-ask, a retried failure, or in prompt mode an answer found elsewhere in
the reply), a partial with ``attempt`` one higher and no data says so, and an
:class:`ItemStream` calls its :meth:`~ItemStream.on_restart` handlers with a :class:`Restart`.

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

import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar, Union, overload

from typing_extensions import Self

from . import _blocking
from ._partial_json import Live, Snapshot, materialize, open_path
from ._types import Result

__all__ = [
    "AsyncItemStream",
    "AsyncStream",
    "ItemStream",
    "JsonValue",
    "Marker",
    "Partial",
    "Restart",
    "Stream",
    "done",
    "grow",
    "not_null",
]

T = TypeVar("T")
E = TypeVar("E")
V = TypeVar("V")
D = TypeVar("D")
Y = TypeVar("Y")
R = TypeVar("R")

JsonValue: TypeAlias = Union[dict[str, "JsonValue"], list["JsonValue"], str, int, float, bool, None]
"""What :attr:`Partial.data` holds: JSON-shaped values. ``data`` itself is typed ``Any``, as
``json.loads`` is: see :attr:`Partial.data` for why, and :meth:`Partial.get_as` for typed reads."""


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
_MISSING: Any = object()


class Partial(Generic[T]):
    """The answer as far as it has arrived: JSON-shaped data holding only complete values (and
    the strings marked to grow), which attempt it belongs to, and, on the last one, the value.

    ``data`` is an object root's dict, or for other types (lists, scalars) the value itself;
    None before anything is shown. Every value in ``data`` is complete except those on
    ``open_path``, the way to the member being written.

    The partials of an attempt build one value between them: reading ``data`` costs what
    arrived since the partial read before, not the size of the answer (see :attr:`data`).
    """

    __slots__ = (
        "__weakref__",
        "_data",
        "_live",
        "_path",
        "_position",
        "_snapshot",
        "_value",
        "_wrapped",
        "attempt",
    )

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        attempt: int,
        wrapped: bool,
        value: Any = _NOT_FINAL,
        data: Any = _NOT_FINAL,
        live: Live | None = None,
        position: int = 0,
    ) -> None:
        self._snapshot = snapshot
        self._wrapped = wrapped
        self._value = value
        self._data = data
        self._live = live
        self._position = position
        self._path: tuple[str | int, ...] | None = () if value is not _NOT_FINAL else None
        #: 1 for the first answer; one more each time the stream starts over (the partial
        #: that starts an attempt has no data): after a re-ask, a retried failure, or when the
        #: answer turned out to be other JSON than the one shown (prompt mode).
        self.attempt = attempt

    @property
    def data(self) -> Any:
        """What has arrived, JSON-shaped (dicts, lists, str, int, float, bool, None: see
        :data:`JsonValue`).

        Typed ``Any``: the shape of a half-arrived ``T`` (any field may be missing, a list
        short, a string cut) has no Python type, and a static type that claimed ``T``'s fields
        would be wrong exactly while the stream runs. Read it with :meth:`get` or the typed
        :meth:`get_as`; the last partial's :attr:`value` is the ``T``.

        Partials share what they show. Complete members are shared, so treat ``data`` as
        read-only. The open containers (those on :attr:`open_path`) are extended in place for
        the next partial whose ``data`` is read, unless this partial is still held: so a
        partial you keep keeps its ``data`` as it was, but a ``data`` value you keep without
        its partial grows with the stream (copy it, e.g. ``copy.deepcopy``, to keep it).
        """
        if self._data is _NOT_FINAL:
            live = self._live
            if live is not None and self._position >= live.position:
                root = live.show(self._snapshot, self._position, self)
            else:
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

    @overload
    def get_as(self, kind: type[V], *path: str | int) -> V | None: ...
    @overload
    def get_as(self, kind: type[V], *path: str | int, default: D) -> V | D: ...
    def get_as(self, kind: type[Any], *path: str | int, default: Any = None) -> Any:
        """The value at ``path`` if it is a ``kind``, else ``default``: a typed :meth:`get`
        (``p.get_as(float, "total")`` is ``float | None`` to mypy).

        ``kind`` is a JSON type: ``str``, ``int``, ``float`` (an integer is read as a float,
        as JSON does not tell them apart), ``bool``, ``dict`` or ``list``. A bool is not an
        int here, though Python says it is.
        """
        found = self.get(*path, default=_MISSING)
        if found is _MISSING or isinstance(found, bool) is not (kind is bool):
            return default
        if kind is float and type(found) is int:
            return float(found)
        return found if isinstance(found, kind) else default

    def is_complete(self, *path: str | int) -> bool:
        """Whether the value at ``path`` has arrived whole (the whole answer for no path)."""
        if self.complete:
            return True
        if not path:
            return False
        if self.get(*path, default=_MISSING) is _MISSING:
            return False
        return tuple(path) != self.open_path[: len(path)]

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"open at {list(self.open_path)}"
        return f"Partial(attempt={self.attempt}, {state}, data={self.data!r})"


@dataclass(frozen=True)
class Restart:
    """A list stream starts over: the elements already yielded (``discarded`` of them) belong
    to an answer that is not the final one, and ``attempt``'s elements follow.

    It comes when a finished answer is re-asked (it failed validation or a check), when a
    provider failure is retried (whether or not elements had arrived), or, in prompt mode,
    when the answer turned out to be other JSON in the reply than the one read while it
    streamed. A tool round is not a new attempt.
    """

    #: The attempt starting now (1 is the first answer).
    attempt: int
    #: How many elements of the attempt before were yielded (0 when that answer was re-asked
    #: or retried before any of its elements was shown).
    discarded: int


RestartHandler = Callable[[Restart], object]


class _Ended(Generic[R]):
    """Keeps a streamed call's Result once the stream has run to its end.

    The outputs are handed the ``append`` of a list the stream holds (:meth:`_ending`), not a
    method of the stream itself, so they keep no reference back to it: a stream left early (a
    ``break`` out of its loop) is freed at once and its call ends then (``CommandCancelled``),
    instead of waiting in a reference cycle for the garbage collector, which may finalize it
    too late for asyncio to close it."""

    _results: list[Result[Any]]

    def _ending(self) -> Callable[[Result[Any]], None]:
        """What the outputs call with the Result at the end."""
        results: list[Result[Any]] = []
        self._results = results
        return results.append

    @property
    def result(self) -> Result[R]:
        """The call's :class:`~alloy.Result`, as ``run()`` returns it: the value, the usage and
        the whole conversation (``result.messages``, tool rounds included), to carry on with
        ``history=``. It is there once the stream has run to its end; before that (or after
        the stream failed or was closed early) reading it raises ``ValueError``."""
        if not self._results:
            raise ValueError(
                "the stream has not run to its end: its result (and messages) are there once "
                "the last chunk has been read"
            )
        return self._results[-1]


class Stream(_Ended[R], Iterator[Y], Generic[Y, R]):
    """What a streamed call yields (``stream()``: text; ``stream_partial()``: partials), as
    it arrives; once it has all arrived, :attr:`result` is the call's Result."""

    def __init__(self, start: Callable[[Callable[[Result[Any]], None]], Iterator[Y]]) -> None:
        #: ``start`` makes the outputs, given what to call with the Result at the end.
        self._outputs = start(self._ending())

    def __iter__(self) -> Stream[Y, R]:
        return self

    def __next__(self) -> Y:
        return next(self._outputs)

    def close(self) -> None:
        """Stop the stream (and the call) early."""
        _blocking.close(self._outputs)


class AsyncStream(_Ended[R], AsyncIterator[Y], Generic[Y, R]):
    """Async twin of :class:`Stream` (``astream()``, ``astream_partial()``)."""

    def __init__(self, start: Callable[[Callable[[Result[Any]], None]], AsyncIterator[Y]]) -> None:
        self._outputs = start(self._ending())

    def __aiter__(self) -> AsyncStream[Y, R]:
        return self

    async def __anext__(self) -> Y:
        return await self._outputs.__anext__()

    async def aclose(self) -> None:
        """Stop the stream (and the call) early."""
        await _blocking.aclose(self._outputs)


class ItemStream(_Ended[list[E]], Iterator[E]):
    """The elements of a list answer, each yielded once it is complete and validated; once
    the stream has run to its end, :attr:`result` is the call's Result (its value the list).

    When the stream starts over (see :class:`Restart`), the callbacks given to
    :meth:`on_restart` are called before the new attempt's first element, as soon as it
    starts (so a display can clear what it showed while the model answers again);
    ``attempt`` is the attempt of the elements being yielded.
    """

    def __init__(
        self,
        start: Callable[[Callable[[Result[Any]], None]], Iterator[tuple[int, E] | Restart]],
    ) -> None:
        self._pairs = start(self._ending())
        self._on_restart: list[RestartHandler] = []
        self.attempt = 1

    def __iter__(self) -> ItemStream[E]:
        return self

    def __next__(self) -> E:
        while True:
            out = next(self._pairs)
            if type(out) is Restart:
                self.attempt = out.attempt
                for handler in self._on_restart:
                    handler(out)
                continue
            self.attempt, item = out  # type: ignore[misc]
            return item

    def on_restart(self, handler: RestartHandler) -> Self:
        """Call ``handler(restart)`` each time the stream starts over; returns the stream, so
        ``for x in cmd.stream_items(...).on_restart(clear):`` reads as one line."""
        self._on_restart.append(handler)
        return self

    def close(self) -> None:
        """Stop the stream (and the call) early."""
        _blocking.close(self._pairs)


class AsyncItemStream(_Ended[list[E]], AsyncIterator[E]):
    """Async twin of :class:`ItemStream`; an ``on_restart`` handler may be ``async def``."""

    def __init__(
        self,
        start: Callable[[Callable[[Result[Any]], None]], AsyncIterator[tuple[int, E] | Restart]],
    ) -> None:
        self._pairs = start(self._ending())
        self._on_restart: list[RestartHandler] = []
        self.attempt = 1

    def __aiter__(self) -> AsyncItemStream[E]:
        return self

    async def __anext__(self) -> E:
        while True:
            out = await self._pairs.__anext__()
            if type(out) is Restart:
                self.attempt = out.attempt
                for handler in self._on_restart:
                    result = handler(out)
                    if inspect.isawaitable(result):
                        await result
                continue
            self.attempt, item = out  # type: ignore[misc]
            return item

    def on_restart(self, handler: RestartHandler) -> Self:
        """As :meth:`ItemStream.on_restart`; ``handler`` may be ``async def``."""
        self._on_restart.append(handler)
        return self

    async def aclose(self) -> None:
        """Stop the stream (and the call) early."""
        await _blocking.aclose(self._pairs)
