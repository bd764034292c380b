"""From a row as given to the arguments of a call, and to the row's stable key.

A tuple row is the positional arguments, a dict row the keyword arguments, an :class:`Args` row
exactly what it says, and anything else the one argument. When the tuple or dict reading does
not fit the signature but the command takes one argument, the row is that argument whole (a
command over ``dict`` records, say).

The key of a row is what a checkpoint finds it by when a run is resumed: a SHA-256 of the
command's identity, the row's arguments as JSON, the model, the output schema and the options
that shape the request. The same row of the same run gets the same key in any process.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import hashlib
import inspect
import json
import typing
from collections.abc import Mapping
from typing import Any

import typing_extensions

from ..errors import AlloyError
from ._records import Args

#: The options whose change changes what a row's request asks for (and so its key).
KEYED_OPTIONS = (
    "system",
    "temperature",
    "max_tokens",
    "output_mode",
    "extra_json",
    "reasoning_effort",
    "max_reasks",
    "max_tool_turns",
)


class RowInputError(AlloyError):
    """A row's input does not fit the command's parameters. It fails that row only."""


def bind(
    signature: inspect.Signature, row: Any, command: str, fn: Any = None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional and keyword arguments ``row`` stands for; RowInputError if none fit.

    ``fn`` is the prompt function, whose type hints say whether a row that does not fit as
    arguments is its one argument whole (a ``dict`` row for a parameter typed as a record)."""
    if isinstance(row, Args):
        args, kwargs = row.args, dict(row.kwargs)
    elif isinstance(row, tuple):
        args, kwargs = row, {}
    elif isinstance(row, Mapping):
        args, kwargs = (), {str(k): v for k, v in row.items()}
    else:
        args, kwargs = (row,), {}
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        if (
            not isinstance(row, Args)
            and isinstance(row, (tuple, Mapping))
            and _whole_row_parameter(signature, fn, row)
        ):
            return (row,), {}
        shown = ", ".join(str(p.replace(annotation=p.empty)) for p in signature.parameters.values())
        raise RowInputError(f"row {row!r:.80} does not fit {command}({shown}): {exc}") from None
    return tuple(args), kwargs


def _whole_row_parameter(signature: inspect.Signature, fn: Any, row: Any) -> bool:
    """Whether the command takes one argument whose type is a record or a sequence (or is not
    given), so that ``row`` can be it."""
    parameters = [
        p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    required = [p for p in parameters if p.default is p.empty]
    if not parameters or len(required) > 1 or parameters[0].kind == parameters[0].KEYWORD_ONLY:
        return False
    try:
        hints = typing.get_type_hints(fn) if fn is not None else {}
    except Exception:  # an annotation that does not resolve says nothing either way
        return False
    hint = hints.get(parameters[0].name, Any)
    if hint is Any:
        return True
    origin = typing.get_origin(hint) or hint
    if isinstance(row, tuple):
        return _is_class(origin, (tuple, list, collections.abc.Sequence))
    return (
        _is_class(origin, (dict, collections.abc.Mapping))
        or typing_extensions.is_typeddict(origin)
        or dataclasses.is_dataclass(origin)
        or hasattr(origin, "model_validate")
    )


def _is_class(value: Any, kinds: Any) -> bool:
    return isinstance(value, type) and issubclass(value, kinds)


def identity(fn: Any) -> str:
    """The command's stable name: its module and qualified name."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def run_identity(command: str, model: str, schema: Any, options: Mapping[str, Any]) -> str:
    """What every row key of one run shares, as canonical JSON (made once per run)."""
    shaping = {name: options.get(name) for name in KEYED_OPTIONS}
    return _canonical([command, model, schema, shaping])


def row_key(run: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """The row's key: SHA-256 of the run's identity and the arguments as JSON."""
    text = run + "\n" + _canonical([list(args), dict(kwargs)])
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value: Any) -> str:
    from pydantic_core import to_jsonable_python

    plain = to_jsonable_python(value, fallback=repr, serialize_unknown=True)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
