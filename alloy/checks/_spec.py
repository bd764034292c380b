"""Criteria by name, as spec formats spell them: ``"two-words; length: 1 10; min-val: 0"``.

Arguments follow the criterion's name after a colon, separated by spaces: numbers, bare words,
quoted strings, ``key=value`` pairs, or a Python literal in braces (``{['a', 'b']}``), as RAIL
writes them. Unknown names are a ConfigurationError when strict, else skipped with a warning.
"""

from __future__ import annotations

import ast
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigurationError
from ._builtin import BUILTINS, IsJson, Length, ReadingTime, ValidChoices, ValidRange
from ._criterion import Action, Criterion


class SpecWarning(UserWarning):
    """Something in a lenient spec was not understood and was ignored or treated as a string."""


Factory = Callable[[list[Any], dict[str, Any], Action], Criterion]


def _choices(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
    choices = kwargs.pop("choices", None)
    if choices is None:
        choices = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return ValidChoices(choices, on_fail=on_fail, **kwargs)


def _only(field: str) -> Callable[[Factory], Factory]:
    """``min-val: 0`` style: one argument, given as ``field``."""

    def make(inner: Factory) -> Factory:
        def factory(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
            if len(args) != 1 or kwargs:
                raise TypeError(f"takes exactly one argument, got {args or kwargs}")
            return inner([], {field: args[0]}, on_fail)

        return factory

    return make


def _numbers(cls: type[Criterion], *fields: tuple[str, bool]) -> Factory:
    """A factory for a criterion whose arguments are numbers: ``fields`` are their names in
    order, each with whether it must be whole. Checked here, so a spec's ``1e999`` or ``'a'`` is
    a ConfigurationError when the spec loads, not a TypeError in the middle of a call."""
    names = [name for name, _ in fields]
    whole = dict(fields)

    def factory(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
        if len(args) > len(names):
            raise TypeError(f"takes at most {len(names)} arguments, got {len(args)}")
        values = dict(zip(names, args, strict=False))  # fewer arguments than names is fine
        for name in names:
            if name in kwargs:
                if name in values:
                    raise TypeError(f"got {name} twice")
                values[name] = kwargs.pop(name)
        numbers = {name: _number(name, value, whole=whole[name]) for name, value in values.items()}
        return cls(**numbers, **kwargs, on_fail=on_fail)

    return factory


def _number(name: str, value: Any, *, whole: bool) -> Any:
    """``value`` as a finite number (an int when ``whole``); a ValueError says why it is not."""
    if value is None:
        return None
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if whole:
        if not (is_number and math.isfinite(value) and value == int(value)):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        return int(value)
    if not is_number:
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _plain(cls: type[Criterion]) -> Factory:
    def factory(args: list[Any], kwargs: dict[str, Any], on_fail: Action) -> Criterion:
        return cls(*args, on_fail=on_fail, **kwargs)

    return factory


_LENGTH = _numbers(Length, ("min", True), ("max", True))
_RANGE = _numbers(ValidRange, ("min", False), ("max", False))

CRITERIA: dict[str, Factory] = {
    **{criterion._name: _plain(criterion) for criterion in BUILTINS},  # by their own names
    "length": _LENGTH,
    "valid-length": _LENGTH,
    "min-len": _only("min")(_LENGTH),
    "max-len": _only("max")(_LENGTH),
    "valid-range": _RANGE,
    "min-val": _only("min")(_RANGE),
    "max-val": _only("max")(_RANGE),
    "valid-choices": _choices,
    "valid-json": _plain(IsJson),
    "reading-time": _numbers(ReadingTime, ("max_minutes", False), ("words_per_minute", True)),
}


#: Names Guardrails Hub gives the built-in validators where they differ from the RAIL names.
_ALIASES = {"uppercase": "upper-case", "lowercase": "lower-case"}


def normalize(name: str) -> str:
    """``guardrails/Two_Words`` -> ``two-words``; ``hub://guardrails/uppercase`` -> ``upper-case``."""
    plain = name.strip().rsplit("/", 1)[-1].lower().replace("_", "-")
    return _ALIASES.get(plain, plain)


def parse_format(spec: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """``"two-words; length: 1 10"`` -> ``[("two-words", [], {}), ("length", [1, 10], {})]``."""
    return [(normalize(name), args, kwargs) for name, args, kwargs in split_format(spec)]


def split_format(spec: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """Like :func:`parse_format`, with each name as written (``guardrails/two_words``)."""
    out = []
    for item in _split(spec, ";"):
        if not item.strip():
            continue
        name, sep, rest = item.partition(":")
        if sep and name.strip().lower() in ("hub", "http", "https") and rest.startswith("//"):
            more, sep, rest = rest.partition(":")  # hub://owner/name: args
            name = f"{name}:{more}"
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for token in _tokens(rest) if sep else []:
            key, eq, raw = token.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_][\w-]*", key):
                kwargs[key.replace("-", "_")] = _value(raw)
            else:
                args.append(_value(token))
        out.append((name.strip(), args, kwargs))
    return out


def make_criterion(
    name: str, args: list[Any], kwargs: dict[str, Any], on_fail: Action
) -> Criterion | None:
    """The criterion for a spec name, or None when the name is unknown."""
    factory = CRITERIA.get(normalize(name))
    if factory is None:
        return None
    try:
        criterion = factory(list(args), dict(kwargs), on_fail)
        criterion.rule()  # arguments that only fail when rendered (an overflowing product)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigurationError(f"Bad arguments for criterion {name}: {exc}") from None
    return criterion


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
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return inner  # not a literal (the parser signals one too deep with the last two)
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    for convert in (int, float):
        try:
            return convert(token)
        except ValueError:
            pass
    return token
