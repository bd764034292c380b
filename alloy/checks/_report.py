"""What one parse attempt did: every criterion's result, the fixes, and what was re-asked.

A command's ``Result.reports`` holds one ``CheckReport`` per parse attempt (so a re-asked call
has two or more), and a ``CriterionFailed`` or ``ParseError`` carries the report of the attempt
that ended the call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ._criterion import Action

Outcome = Literal[
    "passed",  # the value met the criterion
    "fixed",  # it failed; the programmatic fix was applied and passes
    "reasked",  # it failed; the model is asked again
    "filtered",  # it failed; the list item or optional field was dropped
    "refrained",  # it failed; the call returns None
    "recorded",  # it failed; kept as is (noop)
    "raised",  # it failed; CriterionFailed was raised
    "unfixable",  # it failed and the fix could not repair it
]


@dataclass(frozen=True)
class CriterionResult:
    """One criterion checked against one value."""

    #: Where the value is, as the model sees it: ``"items[2].name"``; ``"the answer"`` for the root.
    path: str
    criterion: str
    action: Action
    outcome: Outcome
    #: The value that was checked.
    value: Any
    #: Why it failed, written for the model (None when it passed).
    error: str | None = None
    #: The value after the fix, when one was applied.
    fixed: Any = None

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def line(self) -> str:
        """This failure as one line of a re-ask or error message."""
        return f"- {self.path}: {self.error} (got {shown(self.value)}; criterion {self.criterion})"


@dataclass(frozen=True)
class CheckReport:
    """The record of one parse attempt of a criteria-aware output."""

    #: The text that was parsed (in prompt mode, the JSON extracted from the reply).
    raw: str
    #: The value as validated, before any criterion ran (None if it did not validate).
    parsed: Any
    #: The value after fixes and filters: what the call returns (None when refrained).
    value: Any
    results: tuple[CriterionResult, ...] = ()
    #: The message sent back to the model when this attempt was re-asked.
    reask: str | None = None
    #: Why the text did not validate as the type at all, before criteria.
    parse_error: str | None = None

    @property
    def failures(self) -> tuple[CriterionResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    @property
    def fixes(self) -> tuple[CriterionResult, ...]:
        return tuple(r for r in self.results if r.outcome == "fixed")

    @property
    def reasked(self) -> tuple[CriterionResult, ...]:
        return tuple(r for r in self.results if r.outcome == "reasked")

    @property
    def filtered(self) -> tuple[CriterionResult, ...]:
        return tuple(r for r in self.results if r.outcome == "filtered")

    @property
    def refrained(self) -> bool:
        return any(r.outcome == "refrained" for r in self.results)

    @property
    def passed(self) -> bool:
        """True when the value met every criterion without any fix, filter or failure."""
        return self.parse_error is None and not self.failures


SHOWN_CHARS = 200


def shown(value: Any) -> str:
    """A value as compact JSON for a message, cut to a readable length."""
    from pydantic_core import to_jsonable_python

    try:
        text = json.dumps(to_jsonable_python(value), ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
