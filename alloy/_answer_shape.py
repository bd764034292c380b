"""How an output type is shown while it streams: a :class:`~alloy._partial_json.Shape` per position.

Built from the Python type, the way the checks find their criteria (``Annotated`` metadata on
dataclass, TypedDict and pydantic fields, list items, union options and the whole output): the
``alloy.streaming`` markers say what grows, what is held until done and which fields an object
waits for, and a criterion hides its field until the whole answer has passed.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import types
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from ._output import JsonOutput, OutputType
from ._partial_json import Shape
from .checks import CheckedOutput
from .checks._plan import container_kind, declared_fields, split_annotated
from .errors import ConfigurationError
from .streaming import Marker

#: Origins whose JSON is an array of one item type, in order.
_SEQUENCES = (list, tuple, Sequence, Iterable, Iterator)
#: Types whose JSON is a string that means nothing until it is whole.
_WHOLE_STRINGS = (
    enum.Enum,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
    decimal.Decimal,
    bytes,
)


@dataclass(frozen=True)
class AnswerShape:
    """An output type's shape, whether it travels as ``{"value": ...}``, and for a list the
    type of its elements (None otherwise)."""

    shape: Shape
    wrapped: bool
    element: Any = None
    #: The output carries checks somewhere: elements are released only with the final value.
    checked: bool = False


def answer_shape(output: OutputType, command: str) -> AnswerShape:
    """The shape of a JSON output; ConfigurationError for text, formats and no output."""
    inner: OutputType = output
    root_hidden = False
    if isinstance(output, CheckedOutput):
        inner = output.inner
        root_hidden = bool(output.node.criteria)
    if not isinstance(inner, JsonOutput):
        raise ConfigurationError(
            f"{command} returns {output.expected}, which is not JSON: stream_partial() and "
            "stream_items() stream typed JSON values (output=T); use stream() for text"
        )
    builder = _Builder()
    shape = builder.shape(inner.type, grow=False)
    if root_hidden:
        shape = _with(shape, hide=True)
    if inner.wrapped:
        shape = Shape(fields={"value": shape})
    checked = builder.checked or root_hidden
    return AnswerShape(shape, inner.wrapped, _element(inner.type), checked)


def _element(tp: Any) -> Any:
    base, _, _ = split_annotated(tp)
    origin = get_origin(base)
    args = get_args(base)
    if origin in _SEQUENCES and args and (origin is not tuple or args[1:] == (Ellipsis,)):
        return args[0]
    return None


class _Builder:
    def __init__(self) -> None:
        self.memo: dict[tuple[type, bool], Shape] = {}
        self.checked = False

    def shape(self, tp: Any, *, grow: bool) -> Shape:
        base, criteria, other = split_annotated(tp)
        marks = {m.name for m in other if isinstance(m, Marker)}
        grow = grow or "grow" in marks
        inner = self._inner(base, grow)
        self.checked = self.checked or bool(criteria)
        if criteria or "done" in marks:
            return _with(inner, hide=bool(criteria) or inner.hide, hold="done" in marks)
        return inner

    def _inner(self, base: Any, grow: bool) -> Shape:
        origin = get_origin(base)
        args = get_args(base)
        if origin in (Union, types.UnionType):
            options = [a for a in args if a is not type(None)]
            shapes = [self.shape(a, grow=grow) for a in options]
            merged = shapes[0]
            for other in shapes[1:]:
                merged = _merge(merged, other)
            strings = [s for a, s in zip(options, shapes, strict=True) if _makes_string(a)]
            return _with(merged, grow=bool(strings) and all(s.grow for s in strings))
        if origin in _SEQUENCES or origin in (set, frozenset):
            item = self.shape(args[0], grow=grow) if args else Shape()
            return Shape(item=item)
        if isinstance(base, type):
            kind = container_kind(base)
            if kind is not None:
                return self._object(base, kind, grow)
            return Shape(
                grow=grow and issubclass(base, str) and not issubclass(base, _WHOLE_STRINGS)
            )
        return Shape()

    def _object(self, cls: type, kind: Any, grow: bool) -> Shape:
        key = (cls, grow)
        found = self.memo.get(key)
        if found is not None:
            return found
        fields: dict[str, Shape] = {}
        shape = Shape(fields=fields)
        self.memo[key] = shape  # before the fields: a recursive type finds itself
        needs = []
        for _, shown, tp, _ in declared_fields(cls, kind):
            _, _, other = split_annotated(tp)
            if any(isinstance(m, Marker) and m.name == "not_null" for m in other):
                needs.append(shown)
            fields[shown] = self.shape(tp, grow=grow)
        shape.needs = frozenset(needs)
        return shape


def _with(
    shape: Shape, *, hold: bool | None = None, hide: bool | None = None, grow: bool | None = None
) -> Shape:
    """A copy of ``shape`` with some of its flags changed."""
    return Shape(
        fields=shape.fields,
        item=shape.item,
        hold=shape.hold if hold is None else hold,
        hide=shape.hide if hide is None else hide,
        grow=shape.grow if grow is None else grow,
        needs=shape.needs,
    )


def _merge(a: Shape, b: Shape, merging: dict[tuple[int, int], Shape] | None = None) -> Shape:
    """One shape for two union options: a field is held or hidden if it is in either.

    ``merging`` holds the merges under way, so recursive types (whose shapes are cyclic) end.
    """
    merging = {} if merging is None else merging
    key = (id(a), id(b))
    found = merging.get(key)
    if found is not None:
        return found
    fields: dict[str, Shape] = {}
    merged = Shape(
        fields=fields,
        hold=a.hold or b.hold,
        hide=a.hide or b.hide,
        grow=a.grow and b.grow,
        needs=a.needs & b.needs if a.fields and b.fields else a.needs | b.needs,
    )
    merging[key] = merged
    fields.update(a.fields)
    for name, shape in b.fields.items():
        fields[name] = _merge(fields[name], shape, merging) if name in fields else shape
    if a.item is None or b.item is None:
        merged.item = a.item or b.item
    else:
        merged.item = _merge(a.item, b.item, merging)
    return merged


def _makes_string(tp: Any) -> bool:
    """Whether values of ``tp`` may arrive as JSON strings."""
    base, _, _ = split_annotated(tp)
    origin = get_origin(base)
    if origin is Literal:
        return any(isinstance(a, str) for a in get_args(base))
    if origin is not None:
        return origin in (Union, types.UnionType) and any(_makes_string(a) for a in get_args(base))
    if not isinstance(base, type):
        return True
    if issubclass(base, (bool, int, float)) and not issubclass(base, enum.Enum):
        return False
    return container_kind(base) is None and base is not type(None)


def check_items(answer: AnswerShape, command: str, expected: str) -> Any:
    """The element type of a list answer, or ConfigurationError."""
    if answer.element is None:
        raise ConfigurationError(
            f"{command} returns {expected}; stream_items() streams the elements of a list "
            "(output=list[T] or Iterable[T]): use stream_partial() for other types"
        )
    return answer.element
