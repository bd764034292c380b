"""Criteria by name, as spec formats spell them: ``"two-words; length: 1 10; min-val: 0"``.

Arguments follow the criterion's name after a colon, separated by spaces: numbers, bare words,
quoted strings, ``key=value`` pairs, or a Python literal in braces (``{['a', 'b']}``), as RAIL
writes them. Unknown names are a ConfigurationError when strict, else skipped with a warning.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigurationError
from ._builtin import (
    BugFreePython,
    BugFreeSql,
    EndsWith,
    IsJson,
    Length,
    LowerCase,
    OneLine,
    ReadingTime,
    RegexMatch,
    TwoWords,
    UpperCase,
    ValidChoices,
    ValidEmail,
    ValidRange,
    ValidUrl,
)
from ._criterion import Action, Criterion


class SpecWarning(UserWarning):
    """Something in a lenient spec was not understood and was ignored or treated as a string."""


Factory = Callable[[list[Any], dict[str, Any], Action], Criterion]


def _choices(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
    choices = kwargs.pop("choices", None)
    if choices is None:
        choices = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return ValidChoices(choices, on_fail=on_fail, **kwargs)


def _range(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
    return ValidRange(*args, on_fail=on_fail, **kwargs)


def _only(field: str) -> Callable[[type[Criterion]], Factory]:
    """``min-val: 0`` style: one argument, given as ``field``."""

    def make(cls: type[Criterion]) -> Factory:
        def factory(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
            if len(args) != 1 or kwargs:
                raise TypeError(f"takes exactly one argument, got {args or kwargs}")
            return cls(**{field: args[0]}, on_fail=on_fail)

        return factory

    return make


def _plain(cls: type[Criterion]) -> Factory:
    def factory(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
        return cls(*args, on_fail=on_fail, **kwargs)

    return factory


CRITERIA: dict[str, Factory] = {
    "two-words": _plain(TwoWords),
    "upper-case": _plain(UpperCase),
    "lower-case": _plain(LowerCase),
    "one-line": _plain(OneLine),
    "length": _plain(Length),
    "valid-length": _plain(Length),
    "min-len": _only("min")(Length),
    "max-len": _only("max")(Length),
    "valid-range": _range,
    "min-val": _only("min")(ValidRange),
    "max-val": _only("max")(ValidRange),
    "valid-choices": _choices,
    "regex-match": _plain(RegexMatch),
    "valid-url": _plain(ValidUrl),
    "valid-email": _plain(ValidEmail),
    "ends-with": _plain(EndsWith),
    "is-json": _plain(IsJson),
    "valid-json": _plain(IsJson),
    "bug-free-python": _plain(BugFreePython),
    "bug-free-sql": _plain(BugFreeSql),
    "reading-time": _plain(ReadingTime),
}


def normalize(name: str) -> str:
    """``guardrails/Two_Words`` -> ``two-words``."""
    return name.strip().rsplit("/", 1)[-1].lower().replace("_", "-")


def parse_format(spec: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """``"two-words; length: 1 10"`` -> ``[("two-words", [], {}), ("length", [1, 10], {})]``."""
    out = []
    for item in _split(spec, ";"):
        if not item.strip():
            continue
        name, sep, rest = item.partition(":")
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for token in _tokens(rest) if sep else []:
            key, eq, raw = token.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_][\w-]*", key):
                kwargs[key.replace("-", "_")] = _value(raw)
            else:
                args.append(_value(token))
        out.append((normalize(name), args, kwargs))
    return out


def make_criterion(
    name: str, args: list[Any], kwargs: dict[str, Any], on_fail: Action
) -> Criterion | None:
    """The criterion for a spec name, or None when the name is unknown."""
    factory = CRITERIA.get(normalize(name))
    if factory is None:
        return None
    try:
        return factory(list(args), dict(kwargs), on_fail)
    except TypeError as exc:
        raise ConfigurationError(f"Bad arguments for criterion {name}: {exc}") from None


def parse_criteria(
    spec: str,
    *,
    on_fail: Mapping[str, Action] | Action = "reask",
    strict: bool = True,
) -> list[Criterion]:
    """Criteria from a spec string; ``on_fail`` is one action or one per criterion name."""
    out = []
    for name, args, kwargs in parse_format(spec):
        action = on_fail if isinstance(on_fail, str) else on_fail.get(name, "noop")
        criterion = make_criterion(name, args, kwargs, action)
        if criterion is None:
            unknown(f"Unknown criterion {name!r}", strict=strict)
            continue
        out.append(criterion)
    return out


def unknown(message: str, *, strict: bool, fallback: str = "ignored") -> None:
    """A ConfigurationError in a strict spec, a SpecWarning in a lenient one."""
    if strict:
        raise ConfigurationError(f"{message} (strict spec)")
    warnings.warn(f"{message}; {fallback}", SpecWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The warning's stack level of the first frame outside alloy: the user's load call."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        package
    ):
        frame = frame.f_back
        level += 1
    return level


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside quotes and braces."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _tokens(text: str) -> list[str]:
    """Whitespace-separated tokens, keeping ``{...}`` groups and quoted strings whole."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        depth, quote = 0, ""
        while i < n:
            ch = text[i]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch.isspace() and depth == 0:
                break
            i += 1
        tokens.append(text[start:i])
    return tokens


def _value(token: str) -> Any:
    """A token as a Python value: ``{...}`` and quoted strings are literals, numbers are numbers."""
    token = token.strip()
    if token.startswith("{") and token.endswith("}"):
        inner = token[1:-1].strip()
        try:
            return ast.literal_eval(inner)
        except (ValueError, SyntaxError):
            return inner
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    for convert in (int, float):
        try:
            return convert(token)
        except ValueError:
            pass
    return token
