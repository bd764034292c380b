"""Where Guardrails reads or repairs a value differently from alloy's own criteria and types.

A RAIL spec loaded by :func:`~alloy.compat.load_rail` follows Guardrails, so the same spec gives
the same value in both:

- ``fix`` uses each validator's own programmatic fix (``one-line`` keeps the first line,
  ``two-words`` splits ``over-the-limit`` into words, ``length`` pads a short value with its
  last element). Where Guardrails' validator has no fix, or its fix cannot produce a valid
  value, the field becomes null, which is what Guardrails returns (the missing fix value).
  Under ``fix_reask`` that case is re-asked instead.
- ``<date>``, ``<time>`` and ``<date-time>`` read ISO 8601 text and the element's
  ``date-format``/``time-format``/``datetime-format`` (a ``strptime`` pattern); a date-time
  given for a ``<date>`` keeps its date part, as Guardrails' parser does.
- ``<object>`` without children and ``<list>`` without a child hold any JSON (see
  :func:`~alloy.compat._shared.open_json`).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Annotated, Any

from ..checks import NO_FIX, Action, Criterion, check
from ..checks._apply import validate_value

__all__ = ["as_guardrails_fix", "temporal"]

Fix = Callable[[Criterion, Any], Any]


def _two_words(criterion: Criterion, value: str) -> Any:
    """Guardrails' TwoWords fix: the first two words, splitting ``a-b`` or ``aB`` into words
    when there are no spaces, and doubling a single word."""
    words = value.split()
    if len(words) == 1:
        words = _WORDS.findall(value)
    if len(words) == 1:
        words = [value, value]
    return " ".join(words[:2])


#: Words as pydash's ``words`` (which Guardrails uses) finds them: runs of letters split at
#: case changes, and runs of digits.
_WORDS = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _first_line(criterion: Criterion, value: str) -> Any:
    lines = value.strip().splitlines()
    return lines[0] if lines else value


def _pad_or_cut(criterion: Criterion, value: Any) -> Any:
    """Guardrails' ValidLength fix: cut to the maximum, or pad with the last element."""
    low: int | None = getattr(criterion, "min", None)
    high: int | None = getattr(criterion, "max", None)
    if high is not None and len(value) > high:
        return value[:high]
    if low is not None and len(value) < low and len(value) > 0:
        return value + value[-1:] * (low - len(value))
    return NO_FIX


def _own_fix(criterion: Criterion, value: Any) -> Any:
    return criterion.fix(value)


#: The validators whose Guardrails implementation has a programmatic fix, and that fix.
#: The others (valid-choices, regex-match, valid-url, valid-email, reading-time, bug-free-python,
#: bug-free-sql, is-json) have none: a failing value fixes to null.
_FIXES: dict[str, Fix] = {
    "two-words": _two_words,
    "one-line": _first_line,
    "length": _pad_or_cut,
    "upper-case": _own_fix,
    "lower-case": _own_fix,
    "valid-range": _own_fix,
    "ends-with": _own_fix,
}


def as_guardrails_fix(criterion: Criterion, action: Action) -> Criterion:
    """``criterion`` with on-fail ``action`` (``fix`` or ``fix_reask``) as Guardrails applies it.

    ``criterion`` is built with a passive action; the returned criterion checks the same rule
    under the same name, and fixes with Guardrails' fix for that validator.
    """
    fixer = _FIXES.get(criterion.name)
    unfixed: Any = None if action == "fix" else NO_FIX

    def passes(value: Any) -> str | None:
        return None if value is None else validate_value(criterion, value)

    def fix(value: Any) -> Any:
        fixed = NO_FIX if fixer is None else fixer(criterion, value)
        if fixed is NO_FIX or validate_value(criterion, fixed) is not None:
            return unfixed
        return fixed

    return check(passes, name=criterion.name, fix=fix, rule=criterion.rule(), on_fail=action)


# -- dates and times ------------------------------------------------------------------------


def _iso_datetime(text: str) -> datetime.datetime:
    """``datetime.fromisoformat`` with the spellings Python 3.10 does not read yet: a ``Z``
    offset and a space or ``t`` between date and time."""
    text = text.strip()
    if text[-1:] in "zZ":
        text = text[:-1] + "+00:00"
    if len(text) > 10 and text[10] in " t":
        text = f"{text[:10]}T{text[11:]}"
    return datetime.datetime.fromisoformat(text)


def _read_date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return _iso_datetime(text).date()


def _read_time(text: str) -> datetime.time:
    return datetime.time.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)


#: Per tag: the type, how ISO text is read, what of a ``strptime`` result is kept (for a
#: ``*-format`` pattern, tried first), and an example for the error.
_READERS: dict[str, tuple[type, Callable[[str], Any], Callable[[Any], Any], str]] = {
    "date": (datetime.date, _read_date, datetime.datetime.date, "a date like 2024-05-31"),
    "time": (datetime.time, _read_time, datetime.datetime.time, "a time like 14:30:00"),
    "date-time": (
        datetime.datetime,
        _iso_datetime,
        lambda moment: moment,
        "a date-time like 2024-05-31T14:30:00",
    ),
}


def temporal(tag: str, pattern: str | None) -> Any:
    """The type of a ``<date>``, ``<time>`` or ``<date-time>`` element read as Guardrails reads
    it; ``pattern`` is the element's ``*-format`` attribute, if any."""
    from pydantic import BeforeValidator

    base, read, kept, example = _READERS[tag]
    wanted = example + (f" or in the format {pattern}" if pattern else "")

    def parse(value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if pattern:
                try:
                    return kept(datetime.datetime.strptime(text, pattern))
                except ValueError:
                    pass
            try:
                return read(text)
            except ValueError:
                raise ValueError(f"expected {wanted}") from None
        if isinstance(value, base):
            return value
        raise ValueError(f"expected {wanted}")

    return Annotated[base, BeforeValidator(parse)]
