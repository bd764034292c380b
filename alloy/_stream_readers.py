"""Readers: what a streamed call yields, made from the model's deltas as they arrive.

:class:`TextReader` yields the text (``Command.stream``). The others follow a typed answer:
partial values, or list elements, per attempt. A streamed call is a series of model calls (tool rounds, re-asks, retried failures); the
drivers tell a reader when each begins, hand it every delta, and give it the call's Result at
the end. The answer is the text of a reply in native and prompt mode (JSON, maybe inside prose
or a code fence) or the arguments of the output tool in tool mode; everything else (prose
before a tool call, other tools' arguments) is passed over.

The stream starts over (a new *attempt*, which the consumer is told of) when a model call
follows one whose answer was shown, and when what was shown is not part of the final answer:
in prompt mode the JSON read while the reply streamed can turn out not to be the one the
engine reads from the whole reply (an answer in prose replaced by a JSON fence after it, or
other JSON the engine prefers). Nothing shown then stays unexplained: the final value comes
as the first value of a new attempt.

Pure: no I/O, no clock. Parsing is :mod:`alloy._partial_json`'s, linear in the answer's size.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._extract import extract_json
from ._nesting import check_nesting
from ._output import InvalidOutput
from ._partial_json import JsonStream, Live, Snapshot, agrees, materialize, open_path
from ._types import Message, Request, Result, RetryPrompt, TextDelta, ToolCallDelta
from .streaming import Partial, Restart

if TYPE_CHECKING:
    from ._answer_shape import AnswerShape
    from .events import Event

_TEXT = -1  # the answer comes as text (not as a tool call's arguments)
_NOTHING_SHOWN: Snapshot = ((), None)
_UNKNOWN: Any = object()
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

    def __init__(
        self,
        answer: AnswerShape,
        *,
        command: str,
        call_id: str,
        early: bool,
        schema: Mapping[str, Any] | None = None,
    ) -> None:
        self.answer = answer
        self.command = command
        self.call_id = call_id
        #: Whether anything is shown before the final value (not with output rails).
        self.early = early
        #: The output's schema, to find the answer in a whole prompt-mode reply as the engine does.
        self.schema = schema
        self.attempt = 1
        self.shown = False  # whether this attempt has shown anything yet
        #: The messages of the model call before (None before the first).
        self.asked: tuple[Message, ...] | None = None
        self.restarts = 0  # the parser's restarts seen (an answer given up for a later one)
        self.tool: str | None = None
        self.source: int | None = None
        self.parser: JsonStream | None = None

    def begin(self, request: Request) -> Sequence[Any]:
        """A model call starts. It is a new attempt after one that showed an answer, and when
        it asks for the answer again though nothing was shown: a re-ask (its last turn holds
        the RetryPrompt) or a retry of the same messages. A tool round's next call is not."""
        spec = request.output
        self.tool = spec.name if spec is not None and spec.mode == "tool" else None
        self.source = None
        self.parser = None
        before, self.asked = self.asked, request.messages
        again = before is not None and (_reasks(request) or request.messages == before)
        return self.restart() if self.shown or again else ()

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
            self.restarts = 0
        return self.read(parser, text)

    def restart(self) -> Sequence[Any]:
        """A new attempt: what this one showed is not part of the final answer."""
        self.attempt += 1
        self.shown = False
        return self.restarted()

    def final_json(self, result: Result[Any]) -> Any:
        """The answer's JSON as the engine read it (unwrapped), or _UNKNOWN when the reply
        cannot be read back as JSON (a Python-style literal the engine accepted, say)."""
        text = result.output
        if text is None:
            return _UNKNOWN
        try:
            check_nesting(text)
            data = json.loads(text)
        except ValueError:
            try:
                data = json.loads(extract_json(text, self.schema))
            except (ValueError, InvalidOutput, RecursionError):
                return _UNKNOWN
        except RecursionError:
            return _UNKNOWN
        if self.answer.wrapped and type(data) is dict and "value" in data:
            return data["value"]
        return data

    # -- what each reader does --
    def start(self) -> JsonStream:
        return JsonStream(
            self.answer.shape,
            envelope=self.answer.wrapped,
            bare_list=self.answer.element is not None,
        )

    def read(self, parser: JsonStream, text: str) -> Sequence[Any]:
        raise NotImplementedError

    def restarted(self) -> Sequence[Any]:
        return ()


class PartialReader(_Follower):
    """Yields a :class:`~alloy.streaming.Partial` whenever what is shown changes, and a last
    one with the validated value. Each attempt's partials share a :class:`~alloy._partial_json.Live`
    value, so reading every partial's data costs time linear in the answer."""

    def __init__(
        self,
        answer: AnswerShape,
        *,
        command: str,
        call_id: str,
        early: bool,
        schema: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(answer, command=command, call_id=call_id, early=early, schema=schema)
        self.live = Live()
        self.position = 0
        self.last: Snapshot | None = None  # this attempt's last shown snapshot

    def read(self, parser: JsonStream, text: str) -> Sequence[Partial[Any]]:
        if not parser.feed(text):
            return ()
        restart: Sequence[Partial[Any]] = ()
        if parser.restarts != self.restarts:  # a JSON fence replaced an answer in the prose
            self.restarts = parser.restarts
            if self.shown:
                restart = self.restart()
        self.shown = True
        self.position += 1
        snapshot = self.last = parser.snapshot()
        shown: Partial[Any] = Partial(
            snapshot,
            attempt=self.attempt,
            wrapped=self.answer.wrapped,
            live=self.live,
            position=self.position,
        )
        return (*restart, shown) if restart else (shown,)

    def restarted(self) -> Sequence[Partial[Any]]:
        self.live = Live()
        self.position = 0
        self.last = None
        return (Partial(_NOTHING_SHOWN, attempt=self.attempt, wrapped=self.answer.wrapped),)

    def finish(self, result: Result[Any]) -> Sequence[Partial[Any]]:
        from pydantic_core import to_jsonable_python

        out: list[Partial[Any]] = []
        if self.last is not None and not self._agrees(self.last, result):
            out.extend(self.restart())
        value = result.value
        final: Partial[Any] = Partial(
            _NOTHING_SHOWN,
            attempt=self.attempt,
            wrapped=self.answer.wrapped,
            value=value,
            data=to_jsonable_python(value),
        )
        out.append(final)
        return out

    def _agrees(self, snapshot: Snapshot, result: Result[Any]) -> bool:
        """Whether the last partial showed a beginning of the final answer's JSON."""
        shown, path = materialize(snapshot), open_path(snapshot)
        if self.answer.wrapped:
            shown = shown.get("value") if shown is not None else None
            path = path[1:]
        if shown is None:
            return True
        final = self.final_json(result)
        return final is _UNKNOWN or agrees(shown, final, path)

    def event(self, out: Partial[Any]) -> Event:
        from .events import PartialOutput  # told only to listeners, who have loaded the events

        return PartialOutput(self.command, self.call_id, out.attempt, out)


class ItemReader(_Follower):
    """Yields (attempt, element) for each element of a list answer once it is complete and
    validated, in order; after an element that fails validation, none of that attempt. A
    :class:`~alloy.streaming.Restart` comes before the elements of each new attempt.

    Elements are validated from their own JSON text, as the whole answer is, so each equals
    the element of the final value. The final value's elements not yielded yet (all of them
    when the answer arrived whole, or when checks or rails must pass first) follow at the end;
    when the elements yielded are not the final value's first ones (prompt mode: other JSON
    in the reply was the answer), the stream starts over with all of the final value's.
    """

    def __init__(
        self,
        answer: AnswerShape,
        validate: Callable[[str], Any],
        *,
        command: str,
        call_id: str,
        early: bool,
        schema: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(answer, command=command, call_id=call_id, early=early, schema=schema)
        self.validate = validate
        self.tape = _Tape()
        self.ready: list[tuple[int, Any] | Restart] = []
        self.count = 0  # elements yielded in this attempt
        self.spans: list[tuple[int, int]] = []  # their offsets in the tape
        self.broken = False

    def start(self) -> JsonStream:
        self.tape = _Tape()
        self.broken = False
        return JsonStream(self.answer.shape, envelope=True, bare_list=True, on_item=self.element)

    def element(self, start: int, end: int) -> None:
        self._follow_restarts()
        if self.broken:
            return
        from pydantic import ValidationError

        try:
            value = self.validate(self.tape.slice(start, end))
        except ValidationError:
            self.broken = True
            return
        self.ready.append((self.attempt, value))
        self.spans.append((start, end))
        self.count += 1
        self.shown = True

    def _follow_restarts(self) -> None:
        """The parser gave up the answer it read for a later one: so do the elements."""
        parser = self.parser
        if parser is not None and parser.restarts != self.restarts:
            self.restarts = parser.restarts
            self.broken = False
            if self.shown:
                self.ready.extend(self.restart())

    def read(self, parser: JsonStream, text: str) -> Sequence[tuple[int, Any] | Restart]:
        self.tape.add(text)
        parser.feed(text)
        self._follow_restarts()
        if not self.ready:
            return ()
        ready, self.ready = self.ready, []
        return ready

    def restarted(self) -> Sequence[Restart]:
        discarded, self.count, self.spans = self.count, 0, []
        return (Restart(self.attempt, discarded),)

    def finish(self, result: Result[Any]) -> Sequence[tuple[int, Any] | Restart]:
        value = result.value
        if value is None:
            return ()
        items = list(value)
        out: list[tuple[int, Any] | Restart] = []
        if self.count and not self._agrees(result):
            out.extend(self.restart())
        out.extend((self.attempt, item) for item in items[self.count :])
        return out

    def _agrees(self, result: Result[Any]) -> bool:
        """Whether the elements yielded are the final answer's first ones."""
        final = self.final_json(result)
        if final is _UNKNOWN:
            return True
        if type(final) is not list or len(final) < self.count:
            return False
        yielded = [json.loads(self.tape.slice(start, end)) for start, end in self.spans]
        return yielded == final[: self.count]

    def event(self, out: tuple[int, Any] | Restart) -> Event | None:
        if type(out) is Restart:
            return None
        attempt, item = out  # type: ignore[misc]
        from .events import OutputItem  # told only to listeners, who have loaded the events

        return OutputItem(self.command, self.call_id, attempt, item)


def _reasks(request: Request) -> bool:
    """Whether ``request`` is a re-ask: its last turn tells the model what was wrong."""
    messages = request.messages
    return bool(messages) and any(type(part) is RetryPrompt for part in messages[-1].parts)


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
