"""The rail types the engine and drivers use: ``Rail``, ``Block``, the subjects rails see, and
how a rail is applied to one.

Kept apart from :mod:`alloy.rails`, whose ready-made rails (``judge``, ``self_check_input``) are
themselves commands: the engine needs the types, and must not import the commands.

What a rail sees depends on where it runs, so each place has its own subject type, and applying
a rail matches on it: the prompt (input rails), the parsed value (output rails), a tool call
before it runs and the call with its result after (tool rails). A rail's own function gets plain
values (text, the value, the ``ToolCall``), as :mod:`alloy.rails` describes.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from time import perf_counter
from typing import Any, Literal, Union

from typing_extensions import assert_never

from ._blocking import run_blocking
from ._deps import arity_without, context_parameter, current
from ._pickling import by_reference, function_ref, located
from ._types import Media, Part, Text, ToolCall, ToolResult
from .errors import ConfigurationError

RailKind = Literal["input", "output", "tool"]

#: How long an unmarked synchronous rail may hold the event loop before alloy says it should be
#: marked blocking (asyncio's own debug threshold for a slow callback).
SLOW_RAIL_SECONDS = 0.1
_warned_slow: set[str] = set()
logger = logging.getLogger("alloy")


@dataclass(frozen=True)
class Block:
    """Returned by a rail to stop the call; ``reason`` goes into the RailBlocked error."""

    reason: str


@dataclass(frozen=True, slots=True)
class PromptSubject:
    """What input rails see: the rendered prompt, text and media parts."""

    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class OutputSubject:
    """What output rails see: the parsed value, before the call returns it."""

    value: Any


@dataclass(frozen=True, slots=True)
class ToolCallSubject:
    """What tool rails see before a tool runs: the model's call."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolResultSubject:
    """What tool rails see after a tool ran: the call and the result the model will read."""

    call: ToolCall
    result: ToolResult


Subject = Union[PromptSubject, OutputSubject, ToolCallSubject, ToolResultSubject]


@dataclass(frozen=True)
class Rail:
    """A named check of one kind. ``fn`` follows the conventions in :mod:`alloy.rails`;
    ``afn``, when given, is used instead of ``fn`` under the async driver.

    A synchronous rail runs inline, on the event loop under the async driver: a thread per
    check costs more than a cheap check does. ``blocking=True`` marks one that waits (on I/O, a
    lock, a slow library), which under the async driver then runs in a worker thread
    (``asyncio.to_thread``) so the loop serves other calls meanwhile. An async rail yields the
    loop by itself, so marking one blocking is a ConfigurationError."""

    kind: RailKind
    name: str
    fn: Callable[..., Any]
    afn: Callable[..., Any] | None = None
    blocking: bool = False
    _context_param: str | None = field(default=None, init=False, repr=False, compare=False)
    _wants_media: bool = field(default=False, init=False, repr=False, compare=False)

    # -- sync and async application; both return the new subject or a Block --
    def __post_init__(self) -> None:
        if not isinstance(self.blocking, bool):
            raise ConfigurationError(
                f"rail {self.name!r}: blocking must be True or False, not {self.blocking!r}"
            )
        if self.blocking and _is_async(self.afn or self.fn):
            raise ConfigurationError(
                f"rail {self.name!r} is async: blocking=True is for synchronous rails that would "
                "stall the event loop while they wait; an async rail already yields it"
            )
        # The parameter that receives the call's Context (deps=), and whether an input rail
        # takes the media parts too, found once: a signature costs more than a cheap rail.
        context = context_parameter(self.fn)
        object.__setattr__(self, "_context_param", context)
        object.__setattr__(self, "_wants_media", arity_without(self.fn, context) >= 2)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its module and name when they find this very rail (``@input_rail`` on a
        module's function), else by its parts (see :mod:`alloy._pickling`)."""
        module = getattr(self.fn, "__module__", None)
        qualname = getattr(self.fn, "__qualname__", None)
        if by_reference(self, module, qualname):
            return (located, (module, qualname))
        afn = None if self.afn is None else function_ref(self.afn)
        return (Rail, (self.kind, self.name, function_ref(self.fn), afn, self.blocking))

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        name = self._context_param
        if name is None:
            return fn(*args)
        return fn(*args, **{name: current(f"Rail {self.name!r}")})

    def apply(self, subject: Subject) -> Subject | Block:
        outcome = self._call(self.fn, self._args(subject))
        if inspect.isawaitable(outcome):  # an async rail, called from sync code
            outcome = run_blocking(outcome)
        return self._interpret(subject, outcome)

    async def aapply(self, subject: Subject) -> Subject | Block:
        fn, args = self.afn or self.fn, self._args(subject)
        if self.blocking:
            import asyncio  # only for a blocking rail: ``import alloy`` stays light

            # to_thread copies the context, so the call's Context (deps=) reaches the rail.
            outcome = await asyncio.to_thread(self._call, fn, args)
        else:
            started = perf_counter()
            outcome = self._call(fn, args)
            held = perf_counter() - started
            if held > SLOW_RAIL_SECONDS and self.name not in _warned_slow:
                _warned_slow.add(self.name)
                logger.warning(
                    "rail %r held the event loop for %.0f ms; if it waits on I/O, mark it "
                    "blocking=True (e.g. @input_rail(blocking=True)) so async calls and alloy "
                    "serve run it in a worker thread",
                    self.name,
                    held * 1000,
                )
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return self._interpret(subject, outcome)

    def _args(self, subject: Subject) -> tuple[Any, ...]:
        """What the rail's function is called with for this subject."""
        match subject:
            case PromptSubject(parts):
                text = "".join([p.text for p in parts if isinstance(p, Text)])
                if not self._wants_media:
                    return (text,)
                return (text, tuple([p for p in parts if isinstance(p, Media)]))
            case OutputSubject(value):
                return (value,)
            case ToolCallSubject(call):
                return (call, None)
            case ToolResultSubject(call, result):
                return (call, result)
            case _:
                assert_never(subject)

    def _interpret(self, subject: Subject, outcome: Any) -> Subject | Block:
        """The subject after the rail: unchanged (None), blocked, or rewritten (a subject of
        the same type)."""
        if outcome is None:
            return subject
        if isinstance(outcome, Block):
            return outcome
        match subject:
            case PromptSubject(parts):
                if not isinstance(outcome, str):
                    raise TypeError(f"input rail {self.name!r} must return None, Block or str")
                # Tool results the turn carries (a caller's, through the /v1 proxy) stay first.
                results = tuple([p for p in parts if isinstance(p, ToolResult)])
                kept = tuple([p for p in parts if isinstance(p, Media)])
                return PromptSubject((*results, Text(outcome), *kept))
            case OutputSubject():
                return OutputSubject(outcome)
            case ToolCallSubject(call):
                if not isinstance(outcome, dict):
                    raise TypeError(
                        f"tool rail {self.name!r} must return None, Block or new arguments (dict)"
                    )
                return ToolCallSubject(replace(call, args=outcome))
            case ToolResultSubject(call, result):
                return ToolResultSubject(call, replace(result, content=str(outcome)))
            case _:
                assert_never(subject)


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` function, or an object whose
    ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (the method itself, not callability)
    )
