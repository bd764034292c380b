"""Events: every stage of a command call, for observers, rails, logging and tracing.

The engine emits an event at each stage (started, prompt rendered, model request and response,
a retry or a move to a fallback model, tool calls, output parsed or rejected, re-ask, finalize
turn, output ready, finished, failed, or cancelled by the caller).
Subscribe globally with :func:`subscribe` or per command with ``cmd.subscribe``; handlers may be
plain or ``async def``. A failing handler is logged and never breaks the call — only rails
(:mod:`alloy.rails`) can stop a call.

Events hold the normalized request and response objects, which never contain an API key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._observers import listen
from ._observers import logger as logger
from ._observers import new_call_id as new_call_id
from ._types import CacheStatus, Part, Request, Response, ToolCall, ToolResult, Transcript, Usage

__all__ = [
    "BatchFinished",
    "BatchSubmitted",
    "CommandCancelled",
    "CommandFailed",
    "CommandFinished",
    "CommandStarted",
    "Event",
    "FellBack",
    "FinalizeTurn",
    "Handler",
    "MapFinished",
    "ModelRequest",
    "ModelResponse",
    "OutputItem",
    "OutputParsed",
    "OutputReady",
    "OutputRejected",
    "PartialOutput",
    "ProfileDowngraded",
    "PromptRendered",
    "ProviderRetry",
    "Reask",
    "RowFinished",
    "ToolCallFinished",
    "ToolCallStarted",
    "subscribe",
]


@dataclass(frozen=True)
class Event:
    """Common fields: which command, which call (an id unique per call), and when."""

    command: str
    call_id: str
    time: float = field(default_factory=time.time, kw_only=True)

    #: What :meth:`describe` adds to the common fields: a ``str.format`` template of the
    #: event ``e``; ``_content`` is added only when content is logged.
    _line: ClassVar[str] = ""
    _content: ClassVar[str] = ""

    def describe(self, *, content: bool = False) -> str:
        """One log line; prompts and outputs appear only when ``content`` is on."""
        line = f"{type(self).__name__} command={self.command} call={self.call_id}"
        if self._line:
            line = f"{line} {self._line.format(e=self)}"
        return f"{line} {self._content.format(e=self)}" if content and self._content else line


@dataclass(frozen=True)
class CommandStarted(Event):
    model: str
    expected: str


@dataclass(frozen=True)
class PromptRendered(Event):
    prompt: tuple[Part, ...]

    _content = "prompt={e.prompt!r}"


@dataclass(frozen=True)
class ModelRequest(Event):
    request: Request
    attempt: int

    def describe(self, *, content: bool = False) -> str:
        mode = self.request.output.mode if self.request.output else "text"
        base = f"{super().describe()} model={self.request.model} attempt={self.attempt} output_mode={mode}"
        return f"{base} messages={self.request.messages!r}" if content else base


@dataclass(frozen=True)
class ModelResponse(Event):
    response: Response
    attempt: int
    duration: float

    @property
    def usage(self) -> Usage:
        return self.response.usage

    @property
    def cached(self) -> bool:
        """Whether the reply came from alloy's response cache (``cache=``), not the provider."""
        return self.response.usage.cache_hits > 0

    @property
    def cache(self) -> CacheStatus | None:
        """Where the response cache stood on this reply: ``"hit"``, ``"miss"``, ``"record"``,
        ``"skipped: not repeatable"`` or ``"skipped: no JSON form"``; None when the call has no
        cache."""
        return self.response.cache

    def describe(self, *, content: bool = False) -> str:
        usage = self.response.usage
        base = (
            f"{super().describe()} finish={self.response.finish_reason} tokens_in={usage.input_tokens} "
            f"tokens_out={usage.output_tokens} duration={self.duration:.3f}s"
        )
        if self.cached:
            base += " cached=true"
        if self.response.cache is not None:
            base += f" cache={self.response.cache!r}"
        return f"{base} parts={self.response.parts!r}" if content else base


@dataclass(frozen=True)
class ProviderRetry(Event):
    """A transient provider failure; the call waits and tries again.

    ``delay`` is the longest the wait may be: the provider's retry-after hint, which is waited
    as it is, or else the backoff's ceiling, below which the wait is jittered.
    """

    error: Exception
    delay: float

    _line = "error={e.error.__class__.__name__} delay={e.delay:.2f}s"


@dataclass(frozen=True)
class FellBack(Event):
    """The call's model failed in a way retries did not mend; the next fallback model takes
    the call over, from its prompt. ``error`` is the failed model's (its transcript holds the
    turns that model had made)."""

    from_model: str
    to_model: str
    error: Exception

    _line = "from={e.from_model} to={e.to_model} error={e.error.__class__.__name__}"


@dataclass(frozen=True)
class ProfileDowngraded(Event):
    """The endpoint refused or dropped how the output was asked for, so the call steps down
    (``native`` -> ``tool`` -> ``prompt``) and the endpoint's profile is remembered as
    observed for the rest of the process. ``endpoint`` is its base URL (or the provider),
    ``from_enforcement`` and ``to_enforcement`` the levels before and after (see
    ``Result.enforcement``), ``reason`` what happened (the 400's message, or prose answered
    to a schema). One WARNING on the ``alloy`` logger per (endpoint, model) goes with it."""

    model: str
    endpoint: str
    from_enforcement: str
    to_enforcement: str
    reason: str

    _line = "model={e.model} endpoint={e.endpoint} from={e.from_enforcement} to={e.to_enforcement}"


@dataclass(frozen=True)
class ToolCallStarted(Event):
    call: ToolCall

    def describe(self, *, content: bool = False) -> str:
        base = f"{super().describe()} tool={self.call.name} id={self.call.id}"
        return f"{base} args={dict(self.call.args)!r}" if content else base


@dataclass(frozen=True)
class ToolCallFinished(Event):
    call: ToolCall
    result: ToolResult

    _line = "tool={e.call.name} id={e.call.id} error={e.result.is_error}"
    _content = "result={e.result.content!r}"


@dataclass(frozen=True)
class OutputParsed(Event):
    value: Any
    raw: str
    _content = "value={e.value!r}"


@dataclass(frozen=True)
class OutputRejected(Event):
    """The reply failed validation or a quality criterion; ``feedback`` is what the model is told."""

    reason: str
    feedback: str
    raw: str

    _line = "reason={e.reason!r}"
    _content = "feedback={e.feedback!r}"


@dataclass(frozen=True)
class Reask(Event):
    feedback: str
    reask: int


@dataclass(frozen=True)
class FinalizeTurn(Event):
    """The model stopped after tool calls without an answer; one more turn, without tools."""


@dataclass(frozen=True)
class PartialOutput(Event):
    """``stream_partial()`` showed more of the answer: ``partial`` is the
    :class:`~alloy.streaming.Partial` it yielded; ``attempt`` counts answers streamed again."""

    attempt: int
    partial: Any

    _line = "attempt={e.attempt}"
    _content = "data={e.partial.data!r}"


@dataclass(frozen=True)
class OutputItem(Event):
    """``stream_items()`` yielded an element of the list answer, complete and validated."""

    attempt: int
    item: Any

    _line = "attempt={e.attempt}"
    _content = "item={e.item!r}"


@dataclass(frozen=True)
class OutputReady(Event):
    value: Any
    _content = "value={e.value!r}"


@dataclass(frozen=True)
class CommandFinished(Event):
    value: Any
    transcript: Transcript
    duration: float

    _line = (
        "attempts={e.transcript.attempts} tokens={e.transcript.usage.total_tokens} "
        "duration={e.duration:.3f}s"
    )


@dataclass(frozen=True)
class CommandFailed(Event):
    error: BaseException
    duration: float

    _line = "error={e.error.__class__.__name__}: {e.error}"


@dataclass(frozen=True)
class CommandCancelled(Event):
    """The caller stopped a streamed call before it ended: closed the stream (or left an
    ``async for`` over it) or cancelled the task reading it. Nothing failed; ``reason`` says
    what stopped it. The call emits no ``CommandFinished`` or ``CommandFailed``."""

    reason: str
    duration: float

    _line = "reason={e.reason!r}"


@dataclass(frozen=True)
class RowFinished(Event):
    """A run over rows (``cmd.map``) finished a row. ``row`` is its record (``alloy.rows.Ok``
    or ``Failed``); ``done``, ``failed`` and ``total`` count the run's rows so far (``total`` is
    None when the input's length is unknown); ``elapsed`` is seconds since the run began, and
    ``usage`` and ``cost`` are the run's so far. ``call_id`` is the run's id."""

    row: Any
    done: int
    failed: int
    total: int | None
    elapsed: float
    usage: Usage
    cost: float | None

    def describe(self, *, content: bool = False) -> str:
        shown = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
        return f"{super().describe()} rows={shown} failed={self.failed} elapsed={self.elapsed:.1f}s"


@dataclass(frozen=True)
class MapFinished(Event):
    """A run over rows is over; ``summary`` is its ``alloy.rows.Summary``."""

    summary: Any

    _line = "rows={e.summary.rows} failed={e.summary.failed} seconds={e.summary.seconds:.1f}"


@dataclass(frozen=True)
class BatchSubmitted(Event):
    """A batch run (``cmd.map(rows, mode="batch")``) submitted ``requests`` requests to
    ``provider``'s batch API as job ``job``."""

    job: str
    provider: str
    requests: int

    _line = "job={e.job} provider={e.provider} requests={e.requests}"


@dataclass(frozen=True)
class BatchFinished(Event):
    """A batch job ended: ``state`` is ``done``, ``cancelled`` or ``failed``; ``counts`` are the
    provider's own (completed, failed, expired...)."""

    job: str
    provider: str
    state: str
    counts: Mapping[str, int]

    def describe(self, *, content: bool = False) -> str:
        return f"{super().describe()} job={self.job} state={self.state} counts={dict(self.counts)}"


Handler = Callable[[Event], Any]


def subscribe(handler: Handler, *kinds: type[Event]) -> Callable[[], None]:
    """Call ``handler(event)`` for every event (or only the given kinds) of every command.

    Returns a function that unsubscribes.
    """
    return listen((handler, kinds))
