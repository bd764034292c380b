"""What a run over rows gives back: one record per row, and a summary of the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, Union

from .._types import Usage

R = TypeVar("R")


class Args:
    """One row's arguments, spelled out: ``Args("ACME", currency="EUR")`` calls the command
    with exactly these, whatever their types (other rows are read as the "Running over
    datasets" guide says: a tuple as positional arguments, a dict as keyword arguments...)."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        shown = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Args({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Args) and (self.args, self.kwargs) == (other.args, other.kwargs)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class BadRow:
    """A row known to be unusable before any call (a line of a file that is not JSON, say):
    it fails alone with a :class:`RowInputError` saying ``reason``; ``line`` is where it was."""

    reason: str
    line: int | None = None


@dataclass(frozen=True)
class Ok(Generic[R]):
    """A row whose call returned ``value``.

    ``index`` is the row's place in the input, ``key`` its checkpoint key, ``input`` the row as
    given; ``usage``, ``attempts`` and ``cost`` are its call's. ``resumed`` says it came from the
    checkpoint of an earlier run (no call was made now)."""

    index: int
    key: str
    input: Any
    value: R
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    cost: float | None = None
    resumed: bool = False

    @property
    def ok(self) -> Literal[True]:
        return True

    @property
    def error(self) -> None:
        return None


@dataclass(frozen=True)
class Failed:
    """A row whose call failed with ``error`` (any exception but a ConfigurationError, which
    stops the whole run). Its ``value`` raises that error."""

    index: int
    key: str
    input: Any
    error: BaseException
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    cost: float | None = None
    resumed: bool = False

    @property
    def ok(self) -> Literal[False]:
        return False

    @property
    def value(self) -> Any:
        raise self.error


Row = Union[Ok[R], Failed]


@dataclass(frozen=True)
class Summary:
    """How a run went: rows done (``ok`` and ``failed``; ``resumed`` of them from the
    checkpoint), tokens and cost of the calls made, the time it took, and pacing."""

    rows: int = 0
    ok: int = 0
    failed: int = 0
    resumed: int = 0
    #: Rows found in the checkpoint whose value no longer validates as the output type (a
    #: check tightened since, say): each was run again as a fresh row.
    invalidated: int = 0
    usage: Usage = field(default_factory=Usage)
    #: USD for the calls made now; None when a model that used tokens has no price.
    cost: float | None = 0.0
    seconds: float = 0.0
    #: Seconds calls spent waiting for the rate limits, summed over calls.
    waited: float = 0.0
    #: 429s the provider answered (each was retried or failed its row).
    rate_limited: int = 0
    #: The limits kept to, per model: requests and tokens per minute (None: none known).
    limits: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0
