"""The built-in, deterministic criteria, named as in RAIL's ``format`` attribute.

Each error message is built from the criterion's own parameters and the measured value, so a
re-ask tells the model exactly what to change; fixes exist where one is unambiguous.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Sequence, Sized
from dataclasses import dataclass
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from .._extract import extract_json
from .._output import InvalidOutput
from ..errors import ConfigurationError
from ._criterion import NO_FIX, Criterion


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _between(lo: Any, hi: Any, unit: str = "") -> str:
    """``"between 2 and 4 items"``, ``"at least 1 item"``; ``unit`` is singular."""

    def suffix(n: Any) -> str:
        return "" if not unit else f" {unit}" if n == 1 else f" {unit}s"

    if lo is not None and hi is not None:
        return f"exactly {lo}{suffix(lo)}" if lo == hi else f"between {lo} and {hi}{suffix(hi)}"
    return f"at least {lo}{suffix(lo)}" if lo is not None else f"at most {hi}{suffix(hi)}"


@dataclass(frozen=True)
class TwoWords(Criterion):
    """Exactly two words. Fix: keep the first two."""

    _name: ClassVar[str] = "two-words"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be exactly two words"

    def validate(self, value: str) -> str | None:
        count = len(value.split())
        return None if count == 2 else f"must be exactly two words, but it has {count}"

    def fix(self, value: str) -> Any:
        words = value.split()
        return " ".join(words[:2]) if len(words) >= 2 else NO_FIX


@dataclass(frozen=True)
class UpperCase(Criterion):
    """All upper case. Fix: upper-case it."""

    _name: ClassVar[str] = "upper-case"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be upper case"

    def validate(self, value: str) -> str | None:
        return None if value == value.upper() else self.rule()

    def fix(self, value: str) -> str:
        return value.upper()


@dataclass(frozen=True)
class LowerCase(Criterion):
    """All lower case. Fix: lower-case it."""

    _name: ClassVar[str] = "lower-case"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be lower case"

    def validate(self, value: str) -> str | None:
        return None if value == value.lower() else self.rule()

    def fix(self, value: str) -> str:
        return value.lower()


@dataclass(frozen=True)
class OneLine(Criterion):
    """A single line. Fix: keep the first line (as Guardrails' one-line does)."""

    _name: ClassVar[str] = "one-line"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be a single line"

    def validate(self, value: str) -> str | None:
        lines = value.strip().splitlines()
        return None if len(lines) <= 1 else f"must be a single line, but it has {len(lines)}"

    def fix(self, value: str) -> str:
        return value.strip().splitlines()[0]


@dataclass(frozen=True)
class Length(Criterion):
    """Length bounds (inclusive): characters of a string, items of a list, keys of an object.
    Fix: truncate a string or list."""

    min: int | None = None
    max: int | None = None

    _name: ClassVar[str] = "length"
    accepts: ClassVar[tuple[type, ...]] = (str, list, tuple, dict)

    def __post_init__(self) -> None:
        _check_bounds(self.name, self.min, self.max)
        super().__post_init__()

    def rule(self) -> str:
        return f"must have a length of {_between(self.min, self.max)}"

    def validate(self, value: Sized) -> str | None:
        n = len(value)
        if (self.min is None or n >= self.min) and (self.max is None or n <= self.max):
            return None
        unit = (
            "character" if isinstance(value, str) else "key" if isinstance(value, dict) else "item"
        )
        return f"must have {_between(self.min, self.max, unit)}, but it has {_plural(n, unit)}"

    def fix(self, value: Any) -> Any:
        if self.max is not None and len(value) > self.max and not isinstance(value, dict):
            return value[: self.max]
        return NO_FIX


@dataclass(frozen=True)
class ValidRange(Criterion):
    """A number within bounds (inclusive). Fix: clamp to the nearest bound."""

    min: float | None = None
    max: float | None = None

    _name: ClassVar[str] = "valid-range"
    accepts: ClassVar[tuple[type, ...]] = (int, float)

    def __post_init__(self) -> None:
        _check_bounds(self.name, self.min, self.max)
        super().__post_init__()

    def rule(self) -> str:
        return f"must be {_between(self.min, self.max)}"

    def validate(self, value: float) -> str | None:
        if isinstance(value, bool):
            return "must be a number"
        too_low = self.min is not None and value < self.min
        too_high = self.max is not None and value > self.max
        return self.rule() if too_low or too_high else None

    def fix(self, value: float) -> Any:
        lo, hi = self.min, self.max
        if isinstance(value, int):  # keep an int an int
            lo = None if lo is None else math.ceil(lo)
            hi = None if hi is None else math.floor(hi)
        if lo is not None and value < lo:
            return type(value)(lo)
        if hi is not None and value > hi:
            return type(value)(hi)
        return value


@dataclass(frozen=True)
class ValidChoices(Criterion):
    """One of a fixed set. Fix: the one choice equal up to case and surrounding spaces."""

    choices: Sequence[Any] = ()

    _name: ClassVar[str] = "valid-choices"

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if not self.choices:
            raise ConfigurationError("valid-choices needs at least one choice")
        super().__post_init__()

    def rule(self) -> str:
        return "must be one of " + ", ".join(json.dumps(c, default=str) for c in self.choices)

    def validate(self, value: Any) -> str | None:
        return None if value in self.choices else self.rule()

    def fix(self, value: Any) -> Any:
        if not isinstance(value, str):
            return NO_FIX
        key = value.strip().casefold()
        found = [c for c in self.choices if isinstance(c, str) and c.strip().casefold() == key]
        return found[0] if len(found) == 1 else NO_FIX


@dataclass(frozen=True)
class RegexMatch(Criterion):
    """Matches a regular expression: the whole value (``fullmatch``) or part of it (``search``)."""

    regex: str = ""
    match_type: Literal["fullmatch", "search"] = "fullmatch"

    _name: ClassVar[str] = "regex-match"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def __post_init__(self) -> None:
        try:
            re.compile(self.regex)
        except re.error as exc:
            raise ConfigurationError(
                f"regex-match: invalid pattern {self.regex!r}: {exc}"
            ) from None
        if self.match_type not in ("fullmatch", "search"):
            raise ConfigurationError("regex-match: match_type must be 'fullmatch' or 'search'")
        super().__post_init__()

    def rule(self) -> str:
        how = "match" if self.match_type == "fullmatch" else "contain a match for"
        return f"must {how} the regular expression {self.regex}"

    def validate(self, value: str) -> str | None:
        matcher = re.fullmatch if self.match_type == "fullmatch" else re.search
        return None if matcher(self.regex, value) else self.rule()


@dataclass(frozen=True)
class ValidUrl(Criterion):
    """An absolute http(s) URL with a host and no spaces."""

    _name: ClassVar[str] = "valid-url"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be a valid http or https URL"

    def validate(self, value: str) -> str | None:
        try:
            parts = urlsplit(value)
        except ValueError as exc:
            return f"{self.rule()} ({exc})"
        if parts.scheme not in ("http", "https"):
            return f"{self.rule()} (it has no http:// or https:// scheme)"
        if not parts.hostname or any(ch.isspace() for ch in value):
            return f"{self.rule()} (it has no valid host)"
        return None


_EMAIL = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)


@dataclass(frozen=True)
class ValidEmail(Criterion):
    """A syntactically valid email address (local@domain.tld)."""

    _name: ClassVar[str] = "valid-email"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be a valid email address"

    def validate(self, value: str) -> str | None:
        ok = _EMAIL.fullmatch(value) and ".." not in value.split("@")[0]
        return None if ok else self.rule()


@dataclass(frozen=True)
class EndsWith(Criterion):
    """A string ending with a suffix, or a list whose last item is it. Fix: append it."""

    end: Any = ""

    _name: ClassVar[str] = "ends-with"
    accepts: ClassVar[tuple[type, ...]] = (str, list)

    def rule(self) -> str:
        return f"must end with {json.dumps(self.end, default=str)}"

    def validate(self, value: Any) -> str | None:
        if isinstance(value, str):
            ok = value.endswith(str(self.end))
        else:
            ok = bool(value) and value[-1] == self.end
        return None if ok else self.rule()

    def fix(self, value: Any) -> Any:
        return value + str(self.end) if isinstance(value, str) else [*value, self.end]


@dataclass(frozen=True)
class IsJson(Criterion):
    """A string holding valid JSON. Fix: the one JSON value found in the text, if there is one."""

    _name: ClassVar[str] = "is-json"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be valid JSON"

    def validate(self, value: str) -> str | None:
        try:
            json.loads(value)
        except json.JSONDecodeError as exc:
            return f"must be valid JSON ({exc.msg} at line {exc.lineno})"
        except ValueError as exc:
            return f"must be valid JSON ({exc})"
        return None

    def fix(self, value: str) -> Any:
        try:
            return extract_json(value)
        except InvalidOutput:
            return NO_FIX


@dataclass(frozen=True)
class BugFreePython(Criterion):
    """Python source that parses (``ast.parse``); it is not run."""

    _name: ClassVar[str] = "bug-free-python"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def rule(self) -> str:
        return "must be Python code without syntax errors"

    def validate(self, value: str) -> str | None:
        try:
            ast.parse(value)
        except SyntaxError as exc:
            return f"must be Python code without syntax errors ({exc.msg}, line {exc.lineno})"
        except ValueError as exc:  # e.g. null bytes
            return f"must be Python code without syntax errors ({exc})"
        return None


_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")


@dataclass(frozen=True)
class BugFreeSql(Criterion):
    """SQL that parses with sqlglot (optionally in a ``dialect``), each part a statement."""

    dialect: str | None = None

    _name: ClassVar[str] = "bug-free-sql"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def __post_init__(self) -> None:
        _sqlglot()
        super().__post_init__()

    def rule(self) -> str:
        return "must be SQL without syntax errors"

    def validate(self, value: str) -> str | None:
        sqlglot = _sqlglot()
        from sqlglot import expressions as exp

        try:
            statements = [s for s in sqlglot.parse(value, dialect=self.dialect) if s is not None]
        except sqlglot.errors.SqlglotError as exc:
            return f"must be SQL without syntax errors ({_sql_error(exc)})"
        if not statements:
            return "must be SQL without syntax errors (it is empty)"
        for statement in statements:
            # sqlglot also parses bare expressions ("hello world" is a column alias); those are
            # not statements.
            if isinstance(statement, (exp.Condition, exp.Alias)):
                return f"must be SQL without syntax errors ({statement.sql()!r} is not a statement)"
        return None


def _sqlglot() -> Any:
    try:
        import sqlglot
    except ImportError:
        raise ConfigurationError(
            "bug-free-sql needs the sqlglot package: pip install sqlglot"
        ) from None
    return sqlglot


def _sql_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None) or []
    if errors:
        first = errors[0]
        text = _TOKEN.sub(
            lambda m: "the end of the input" if m.group(1) == "SENTINEL" else repr(m.group(2)),
            str(first.get("description", exc)),
        )
        return f"{text}, line {first.get('line')}, column {first.get('col')}"
    return _TOKEN.sub(lambda m: repr(m.group(2)), str(exc).splitlines()[0])


@dataclass(frozen=True)
class ReadingTime(Criterion):
    """Readable within ``max_minutes`` at ``words_per_minute``. Fix: cut to the word budget."""

    max_minutes: float = 1.0
    words_per_minute: int = 200

    _name: ClassVar[str] = "reading-time"
    accepts: ClassVar[tuple[type, ...]] = (str,)

    def __post_init__(self) -> None:
        if self.max_minutes <= 0 or self.words_per_minute <= 0:
            raise ConfigurationError("reading-time: minutes and words per minute must be positive")
        super().__post_init__()

    @property
    def max_words(self) -> int:
        return int(self.max_minutes * self.words_per_minute)

    def rule(self) -> str:
        return (
            f"must take at most {self.max_minutes:g} minutes to read "
            f"(at most {self.max_words} words)"
        )

    def validate(self, value: str) -> str | None:
        words = len(value.split())
        if words <= self.max_words:
            return None
        return f"{self.rule()}, but it has {words} words"

    def fix(self, value: str) -> str:
        return " ".join(value.split()[: self.max_words])


def _check_bounds(name: str, lo: float | None, hi: float | None) -> None:
    if lo is None and hi is None:
        raise ConfigurationError(f"{name} needs a min, a max or both")
    if lo is not None and hi is not None and lo > hi:
        raise ConfigurationError(f"{name}: min ({lo}) is greater than max ({hi})")


BUILTINS: tuple[type[Criterion], ...] = (
    TwoWords,
    UpperCase,
    LowerCase,
    OneLine,
    Length,
    ValidRange,
    ValidChoices,
    RegexMatch,
    ValidUrl,
    ValidEmail,
    EndsWith,
    IsJson,
    BugFreePython,
    BugFreeSql,
    ReadingTime,
)
