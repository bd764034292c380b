"""Why a run failed, as one of a few kinds read off alloy's error tree (``report.failures``)."""

from __future__ import annotations

from typing import Any

from .. import errors

#: Every kind, in the order a report shows them.
KINDS = (
    "parse",
    "refusal",
    "truncated",
    "schema_rejected",
    "tool_limit",
    "rate_limit",
    "other",
)

_BY_TYPE: tuple[tuple[type[BaseException], str], ...] = (
    (errors.ParseError, "parse"),
    (errors.EmptyOutputError, "parse"),
    (errors.RefusalError, "refusal"),
    (errors.ContentFilteredError, "refusal"),
    (errors.TruncatedOutputError, "truncated"),
    (errors.SchemaRejectedError, "schema_rejected"),
    (errors.ToolLoopLimitExceeded, "tool_limit"),
    (errors.RateLimitError, "rate_limit"),
)


def kind_of(error: BaseException) -> str:
    for error_type, kind in _BY_TYPE:
        if isinstance(error, error_type):
            return kind
    return "other"


def describe(error: BaseException) -> dict[str, Any]:
    """A failed run's error as the report keeps it: its kind, type and message."""
    return {"kind": kind_of(error), "type": type(error).__name__, "message": str(error)[:500]}


def count(errors_seen: list[dict[str, Any]], reasked: int) -> dict[str, int]:
    """Failures per kind (every kind present, 0 when none), and ``reasked``: answers that
    needed a re-ask (kept or not)."""
    counts = dict.fromkeys(KINDS, 0)
    for error in errors_seen:
        counts[error["kind"]] = counts.get(error["kind"], 0) + 1
    counts["reasked"] = reasked
    return counts
