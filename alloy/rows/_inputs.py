"""From a row as given to the arguments of a call, and to the row's stable key.

A row is read in the first of these ways that fits the command's parameters:

- an :class:`Args` row: exactly its arguments, and nothing else;
- a dict: keyword arguments; failing that, the dict whole, when the command takes one
  argument typed as a record (a dict, a TypedDict, a dataclass, a pydantic model) or not typed;
- a tuple: positional arguments; failing that, the tuple whole, when the command takes one
  argument typed as a sequence (a tuple, a list, a ``Sequence``; never ``str``) or not typed;
- a list: the list whole, when the command takes one argument typed as a sequence or not
  typed; otherwise positional arguments;
- anything else: the one argument.

"Takes one argument" means its first parameter may be given positionally and every other one
has a default. A row no reading fits is a :class:`RowInputError`, which fails that row only.

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
from types import UnionType
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
    """A row's input fits no reading of the command's parameters, or holds text that is not
    valid Unicode (a lone surrogate). It fails that row only."""


def bind(
    signature: inspect.Signature, row: Any, command: str, fn: Any = None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional and keyword arguments ``row`` stands for: the first of its readings
    (``readings``) that fits the signature; RowInputError if none does.

    ``fn`` is the prompt function, whose type hints say whether a row can be its one
    argument whole (a ``dict`` row for a parameter typed as a record, say)."""
    refusal: TypeError | None = None
    for args, kwargs in readings(signature, row, fn):
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            refusal = refusal or exc
            continue
        return args, kwargs
    shown = ", ".join(str(p.replace(annotation=p.empty)) for p in signature.parameters.values())
    raise RowInputError(f"row {row!r:.80} does not fit {command}({shown}): {refusal}") from None


def readings(
    signature: inspect.Signature, row: Any, fn: Any
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The ways ``row`` can be read as arguments, the likelier first (see the module's doc)."""
    if isinstance(row, Args):
        return [(tuple(row.args), dict(row.kwargs))]
    whole: tuple[tuple[Any, ...], dict[str, Any]] = ((row,), {})
    if isinstance(row, Mapping):
        keywords = ((), {str(k): v for k, v in row.items()})
        return [keywords, whole] if _takes_whole(signature, fn, row) else [keywords]
    if isinstance(row, tuple):
        return [(row, {}), whole] if _takes_whole(signature, fn, row) else [(row, {})]
    if isinstance(row, list):
        return [whole, (tuple(row), {})] if _takes_whole(signature, fn, row) else [(tuple(row), {})]
    return [whole]


def _takes_whole(signature: inspect.Signature, fn: Any, row: Any) -> bool:
    """Whether the command takes one argument (its first parameter, the others optional) whose
    type can be ``row`` whole: a record for a dict, a sequence other than text for a tuple or a
    list, or no type at all."""
    parameters = [
        p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    required = [p for p in parameters if p.default is p.empty]
    if not parameters or len(required) > 1 or parameters[0].kind == parameters[0].KEYWORD_ONLY:
        return False
    if required and required[0] is not parameters[0]:
        return False
    try:
        hints = typing.get_type_hints(fn) if fn is not None else {}
    except Exception:  # an annotation that does not resolve says nothing either way
        return False
    hint = hints.get(parameters[0].name, Any)
    return any(_holds(kind, row) for kind in _kinds(hint))


def _kinds(hint: Any) -> list[Any]:
    """The types a hint allows: the members of a union, an Annotated type's own type."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _kinds(typing.get_args(hint)[0])
    if origin is typing.Union or origin is UnionType:
        return [kind for member in typing.get_args(hint) for kind in _kinds(member)]
    return [origin or hint]


def _holds(kind: Any, row: Any) -> bool:
    """Whether a parameter of type ``kind`` takes the tuple, list or dict ``row`` whole."""
    if kind is Any or kind is object:
        return True
    if isinstance(row, (tuple, list)):
        return _is_class(kind, (tuple, list, collections.abc.Sequence)) and not _is_class(
            kind, (str, bytes, bytearray)
        )
    return (
        _is_class(kind, (dict, collections.abc.Mapping))
        or typing_extensions.is_typeddict(kind)
        or dataclasses.is_dataclass(kind)
        or hasattr(kind, "model_validate")
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
    """The row's key: SHA-256 of the run's identity and the arguments as JSON.

    RowInputError when the arguments hold text that is not Unicode (a lone surrogate such as
    ``"\\ud800"``): no provider takes it, and no file can hold it."""
    text = run + "\n" + _canonical([list(args), dict(kwargs)])
    try:
        data = text.encode()
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise RowInputError(
            f"the row's text is not valid Unicode: it holds {bad!r}, a lone surrogate "
            "(half of a UTF-16 pair), which cannot be sent or stored"
        ) from None
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> str:
    from pydantic_core import to_jsonable_python

    try:
        plain = to_jsonable_python(value, fallback=repr, serialize_unknown=True)
    except UnicodeDecodeError:  # bytes that are not UTF-8 text (an image, say): as base64
        plain = to_jsonable_python(
            value, fallback=repr, serialize_unknown=True, bytes_mode="base64"
        )
        text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "base64:" + text
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
