"""``typing.TypedDict`` as pydantic takes it on every supported Python.

Before Python 3.12, pydantic refuses a class built with ``typing.TypedDict`` (it needs
``typing_extensions.TypedDict``, whose classes keep what it reads). Users write the standard
library's, so output types and tool parameters are converted where they are declared: each such
class, found at the top or inside ``list[...]``, unions, ``Annotated`` and other TypedDicts, is
rebuilt with ``typing_extensions.TypedDict`` under the same name, keys, required keys and
docstring. A class that refers to itself, directly or through others, is rebuilt referring to
its rebuilt self. The values are plain dicts either way, so nothing else can tell the difference.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Annotated, Any, get_args, get_origin

import typing_extensions

__all__ = ["portable"]

_NEEDED = sys.version_info < (3, 12)
_WRAPPERS = (typing_extensions.Required, typing_extensions.NotRequired, typing_extensions.ReadOnly)


def portable(tp: Any) -> Any:
    """``tp`` with every ``typing.TypedDict`` class in it rebuilt as pydantic accepts it."""
    if not _NEEDED:
        return tp
    return _Converter().convert(tp)


class _Converter:
    def __init__(self) -> None:
        self.done: dict[type, Any] = {}

    def convert(self, tp: Any) -> Any:
        if isinstance(tp, type) and _is_stdlib_typeddict(tp):
            return self.typeddict(tp)
        origin, args = get_origin(tp), get_args(tp)
        if not args or origin is None:
            return tp
        if origin is Annotated:
            base = self.convert(args[0])
            if base is args[0]:
                return tp
            params = (base, *tp.__metadata__)
            return Annotated[params]
        if origin in _WRAPPERS or origin is typing.Literal:
            return tp
        new = tuple(a if a is Ellipsis else self.convert(a) for a in args)
        if all(n is a for n, a in zip(new, args, strict=True)):
            return tp
        try:
            return tp.copy_with(new)
        except AttributeError:  # X | Y and builtin generics (list[X]) have no copy_with
            return typing.Union[new] if origin is _UNION_TYPE else origin[new]

    def typeddict(self, cls: type) -> Any:
        """The rebuilt class. It is made empty first and filled in after its keys' types are
        converted, so a class that refers to itself (or to one that refers back) gets the new
        class in those places, and pydantic sees an ordinary recursive TypedDict."""
        if cls in self.done:
            return self.done[cls]
        factory: Any = typing_extensions.TypedDict
        new = factory(cls.__name__, {})
        new.__qualname__ = cls.__qualname__
        new.__module__ = cls.__module__
        new.__doc__ = cls.__doc__
        self.done[cls] = new  # what the keys' types see of cls while they are converted
        hints = typing.get_type_hints(cls, include_extras=True)
        optional: frozenset[str] = getattr(cls, "__optional_keys__", frozenset())
        fields: dict[str, Any] = {}
        for key, hint in hints.items():
            while get_origin(hint) in _WRAPPERS or get_origin(hint) in _STDLIB_WRAPPERS:
                hint = get_args(hint)[0]
            hint = self.convert(hint)
            fields[key] = typing_extensions.NotRequired[hint] if key in optional else hint
        filled = factory(cls.__name__, fields)
        for name in _TYPEDDICT_ATTRIBUTES:
            if name in vars(filled):
                setattr(new, name, getattr(filled, name))
        return new


#: What a TypedDict class keeps about its keys (typing_extensions sets the read-only pair too).
_TYPEDDICT_ATTRIBUTES = (
    "__annotations__",
    "__required_keys__",
    "__optional_keys__",
    "__readonly_keys__",
    "__mutable_keys__",
    "__total__",
)
_UNION_TYPE = types.UnionType
_STDLIB_WRAPPERS = tuple(
    getattr(typing, name)
    for name in ("Required", "NotRequired", "ReadOnly")
    if hasattr(typing, name)
)


def _is_stdlib_typeddict(cls: type) -> bool:
    """A class made by ``typing.TypedDict``: before 3.12, typing's own check is False for the
    typing_extensions classes pydantic reads."""
    return typing.is_typeddict(cls)
