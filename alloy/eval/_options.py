"""What a user writes to choose how a field is scored: the ``scorers={path: ...}`` values
(:func:`within`, :func:`similar`, :func:`exact`) and the ``Annotated`` markers on an output
type (:class:`Tolerance`, :class:`Ordered`). A field with ``alloy.checks.judged_by(...)`` in its
``Annotated`` metadata is scored by that judge (see :mod:`alloy.eval._kinds`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigurationError


@dataclass(frozen=True)
class Tolerance:
    """``Annotated[float, Tolerance(0.01)]``: a number within 0.01 of the expected one counts
    as right (its ``within`` rate; its score is that instead of exact equality)."""

    value: float

    def __post_init__(self) -> None:
        _check_non_negative("Tolerance", self.value)


class Ordered:
    """``Annotated[list[T], Ordered]``: the list is scored item by item in order, instead of
    by the best matching of its items."""


@dataclass(frozen=True)
class Within:
    """A number scored by the rate within ``tolerance`` of the expected value (absolute)."""

    tolerance: float


@dataclass(frozen=True)
class Similar:
    """A string scored by its normalised edit similarity (0..1), or, with ``at_least``, by
    whether the similarity reaches it (1 or 0)."""

    at_least: float | None = None


@dataclass(frozen=True)
class Exact:
    """A value scored by plain equality of its JSON form: no normalisation, no tolerance."""


Override = Within | Similar | Exact


def within(tolerance: float) -> Within:
    """Score a number as right when it is within ``tolerance`` of the expected one."""
    _check_non_negative("within", tolerance)
    return Within(float(tolerance))


def similar(at_least: float | None = None) -> Similar:
    """Score a string by its normalised edit similarity to the expected one (0..1); with
    ``at_least``, as right (1) when the similarity reaches it and wrong (0) otherwise."""
    if at_least is not None and not (
        isinstance(at_least, (int, float)) and not isinstance(at_least, bool) and 0 <= at_least <= 1
    ):
        raise ConfigurationError(f"similar(at_least=...) must be between 0 and 1, got {at_least!r}")
    return Similar(None if at_least is None else float(at_least))


def exact() -> Exact:
    """Score a value by plain equality with the expected one (its JSON form)."""
    return Exact()


def _check_non_negative(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigurationError(f"{name}(...) takes a number of 0 or more, got {value!r}")
