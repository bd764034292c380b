"""The rail types the engine and drivers use: ``Rail``, ``Block`` and how a rail is applied.

Kept apart from :mod:`alloy.rails`, whose ready-made rails (``judge``, ``self_check_input``) are
themselves commands: the engine needs the types, and must not import the commands.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from ._blocking import run_blocking
from ._types import Media, Part, Text

RailKind = Literal["input", "output", "tool"]


@dataclass(frozen=True)
class Block:
    """Returned by a rail to stop the call; ``reason`` goes into the RailBlocked error."""

    reason: str


@dataclass(frozen=True)
class Rail:
    """A named check of one kind. ``fn`` follows the conventions in :mod:`alloy.rails`."""

    kind: RailKind
    name: str
    fn: Callable[..., Any]
    afn: Callable[..., Any] | None = None

    # -- sync and async application; both return the new subject or a Block --
    def apply(self, subject: Any) -> Any:
        args = self._args(subject)
        outcome = self.fn(*args)
        if inspect.isawaitable(outcome):  # an async rail, called from sync code
            outcome = run_blocking(outcome)
        return self._interpret(subject, outcome)

    async def aapply(self, subject: Any) -> Any:
        args = self._args(subject)
        outcome = (self.afn or self.fn)(*args)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return self._interpret(subject, outcome)

    def _args(self, subject: Any) -> tuple[Any, ...]:
        if self.kind == "input":
            text = "".join(p.text for p in subject if isinstance(p, Text))
            media = tuple(p for p in subject if isinstance(p, Media))
            return (text, media) if _arity(self.fn) >= 2 else (text,)
        if self.kind == "tool":
            if isinstance(subject, tuple):  # (call, result) after the tool ran
                return subject
            return (subject, None)
        return (subject,)

    def _interpret(self, subject: Any, outcome: Any) -> Any:
        if outcome is None or isinstance(outcome, Block):
            return subject if outcome is None else outcome
        if self.kind == "input":
            if not isinstance(outcome, str):
                raise TypeError(f"input rail {self.name!r} must return None, Block or str")
            media: tuple[Part, ...] = tuple(p for p in subject if isinstance(p, Media))
            return (Text(outcome), *media)
        if self.kind == "tool":
            if isinstance(subject, tuple):
                call, result = subject
                return (call, replace(result, content=str(outcome)))
            if not isinstance(outcome, dict):
                raise TypeError(
                    f"tool rail {self.name!r} must return None, Block or new arguments (dict)"
                )
            return replace(subject, args=outcome)
        return outcome


def _arity(fn: Callable[..., Any]) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 1
