"""Readers: what a streamed call yields, made from the model's deltas as they arrive.

:class:`TextReader` yields the text (``Command.stream``). The others follow a typed answer:
partial values, or list elements, per attempt. A streamed call is a series of model calls (tool rounds, re-asks, retried failures); the
drivers tell a reader when each begins, hand it every delta, and give it the call's Result at
the end. The answer is the text of a reply in native and prompt mode (JSON, maybe inside prose
or a code fence) or the arguments of the output tool in tool mode; everything else (prose
before a tool call, other tools' arguments) is passed over. A model call after one whose answer
was shown starts a new *attempt*: its partials start over and say so.

Pure: no I/O, no clock. Parsing is :mod:`alloy._partial`'s, linear in the answer's size.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from ._partial import JsonStream, Snapshot
from ._stream_plan import AnswerShape
from ._types import Request, Result, TextDelta, ToolCallDelta
from .events import Event, OutputItem, PartialOutput
from .streaming import Partial

_TEXT = -1  # the answer comes as text (not as a tool call's arguments)
_NOTHING_SHOWN: Snapshot = ((), None)
Out = TypeVar("Out")


class Reader(Protocol[Out]):
    """What the drivers make a streamed call's outputs with: told when each model call begins,
    given each delta, and given the call's Result at the end."""

    def begin(self, request: Request) -> Sequence[Out]: ...

    def feed(self, delta: TextDelta | ToolCallDelta) -> Sequence[Out]: ...

    def finish(self, result: Result[Any]) -> Sequence[Out]: ...

    def event(self, output: Out) -> Event | None:
        """The event observers are told of ``output``, or None."""
        ...


class TextReader:
    """The model's text as it arrives; tool calls are passed over."""

    def begin(self, request: Request) -> Sequence[str]:
        return ()

    def feed(self, delta: TextDelta | ToolCallDelta) -> Sequence[str]:
        return (delta.text,) if type(delta) is TextDelta and delta.text else ()

    def finish(self, result: Result[Any]) -> Sequence[str]:
        return ()

    def event(self, output: str) -> Event | None:
        return None


class _Follower:
    """Picks the answer's deltas out of each model call and reads them with a JsonStream."""

    def __init__(self, answer: AnswerShape, *, command: str, call_id: str, early: bool) -> None:
        self.answer = answer
        self.command = command
        self.call_id = call_id
        #: Whether anything is shown before the final value (not with output rails).
        self.early = early
        self.attempt = 1
        self.shown = False  # whether this attempt has shown anything yet
        self.tool: str | None = None
        self.source: int | None = None
        self.parser: JsonStream | None = None

    def begin(self, request: Request) -> Sequence[Any]:
        """A model call starts: after one that showed an answer, that is a new attempt."""
        spec = request.output
        self.tool = spec.name if spec is not None and spec.mode == "tool" else None
        self.source = None
        self.parser = None
        if not self.shown:
            return ()
        self.attempt += 1
        self.shown = False
        return self.restarted()

    def feed(self, delta: TextDelta | ToolCallDelta) -> Sequence[Any]:
        if type(delta) is TextDelta:
            if self.source is None:
                self.source = _TEXT
            elif self.source != _TEXT:
                return ()
            text = delta.text
        else:
            assert isinstance(delta, ToolCallDelta)
            if delta.name is not None and delta.name == self.tool and self.source != delta.index:
                self.source = delta.index  # the output tool: its arguments are the answer
                self.parser = None
            if self.source != delta.index:
                return ()
            text = delta.args_delta
        if not text or not self.early:
            return ()
        parser = self.parser
        if parser is None:
            parser = self.parser = self.start()
        return self.read(parser, text)

    # -- what each reader does --
    def start(self) -> JsonStream:
        return JsonStream(self.answer.shape, bare_list=self.answer.element is not None)

    def read(self, parser: JsonStream, text: str) -> Sequence[Any]:
        raise NotImplementedError

    def restarted(self) -> Sequence[Any]:
        return ()


class PartialReader(_Follower):
    """Yields a :class:`~alloy.streaming.Partial` whenever what is shown changes, and a last
    one with the validated value."""

    def read(self, parser: JsonStream, text: str) -> Sequence[Partial[Any]]:
        if not parser.feed(text):
            return ()
        self.shown = True
        return (Partial(parser.snapshot(), attempt=self.attempt, wrapped=self.answer.wrapped),)

    def restarted(self) -> Sequence[Partial[Any]]:
        return (Partial(_NOTHING_SHOWN, attempt=self.attempt, wrapped=self.answer.wrapped),)

    def finish(self, result: Result[Any]) -> Sequence[Partial[Any]]:
        from pydantic_core import to_jsonable_python

        value = result.value
        data = to_jsonable_python(value)
        final: Partial[Any] = Partial(
            _NOTHING_SHOWN,
            attempt=self.attempt,
            wrapped=self.answer.wrapped,
            value=value,
            data=data,
        )
        return (final,)

    def event(self, out: Partial[Any]) -> Event:
        return PartialOutput(self.command, self.call_id, out.attempt, out)


class ItemReader(_Follower):
    """Yields (attempt, element) for each element of a list answer once it is complete and
    validated, in order; after an element that fails validation, none of that attempt.

    Elements are validated from their own JSON text, as the whole answer is, so each equals
    the element of the final value. The final value's elements not yielded yet (all of them
    when the answer arrived whole, or when checks or rails must pass first) follow at the end.
    """

    def __init__(
        self,
        answer: AnswerShape,
        validate: Callable[[str], Any],
        *,
        command: str,
        call_id: str,
        early: bool,
    ) -> None:
        super().__init__(answer, command=command, call_id=call_id, early=early)
        self.validate = validate
        self.tape = _Tape()
        self.ready: list[tuple[int, Any]] = []
        self.count = 0  # elements yielded in this attempt
        self.broken = False

    def begin(self, request: Request) -> Sequence[Any]:
        self.count = 0
        return super().begin(request)

    def start(self) -> JsonStream:
        self.tape = _Tape()
        self.broken = False
        return JsonStream(self.answer.shape, bare_list=True, on_item=self.element)

    def element(self, start: int, end: int) -> None:
        if self.broken:
            return
        from pydantic import ValidationError

        try:
            value = self.validate(self.tape.slice(start, end))
        except ValidationError:
            self.broken = True
            return
        self.ready.append((self.attempt, value))

    def read(self, parser: JsonStream, text: str) -> Sequence[tuple[int, Any]]:
        self.tape.add(text)
        parser.feed(text)
        if not self.ready:
            return ()
        ready, self.ready = self.ready, []
        self.count += len(ready)
        self.shown = True
        return ready

    def finish(self, result: Result[Any]) -> Sequence[tuple[int, Any]]:
        value = result.value
        if value is None:
            return ()
        return [(self.attempt, item) for item in list(value)[self.count :]]

    def event(self, out: tuple[int, Any]) -> Event:
        attempt, item = out
        return OutputItem(self.command, self.call_id, attempt, item)


class _Tape:
    """The text a parser was fed, for slicing out an element by its offsets."""

    __slots__ = ("chunks", "size", "starts")

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.starts: list[int] = []
        self.size = 0

    def add(self, text: str) -> None:
        self.starts.append(self.size)
        self.chunks.append(text)
        self.size += len(text)

    def slice(self, start: int, end: int) -> str:
        first = bisect_right(self.starts, start) - 1
        last = bisect_right(self.starts, end - 1)
        base = self.starts[first]
        return "".join(self.chunks[first:last])[start - base : end - base]
