"""From an output type to its scored fields: one scorer per JSON path (``vendor``,
``address.city``, ``lines``, ``lines[*].sku``), chosen by what the field is, unless
``scorers={path: ...}`` says otherwise.

A record's fields are paths of their own, recursively. A list is one path scored as a list
(:class:`~alloy.eval._kinds.Items`); a list of records also gets a path per field of its items
(``lines[*].sku``: the items' values of that field, matched as a list). An Optional field is
one path (:class:`~alloy.eval._kinds.Maybe`). An output that is not a record is one path,
``value``.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal, Union, get_args, get_origin

import typing_extensions

from ..errors import ConfigurationError
from ._kinds import (
    Classes,
    Custom,
    Items,
    Judged,
    Maybe,
    Number,
    Observation,
    Record,
    Same,
    Scorer,
    Text,
    When,
    label,
)
from ._options import Exact, Ordered, Similar, Tolerance, Within

Getter = Callable[[Any], Any]
ROOT = "value"


@dataclass(frozen=True)
class Field:
    """One scored path: how its value is read from an output's JSON, and its scorer.
    ``projected`` marks a list item's field (``lines[*].sku``), which ``record_exact`` and
    ``field_mean`` leave out (its list, ``lines``, already counts)."""

    path: str
    get: Getter
    scorer: Scorer
    projected: bool = False


class Fields:
    """The scored paths of one output type."""

    def __init__(self, output_type: Any, overrides: Mapping[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._seen: set[str] = set()
        self.fields: dict[str, Field] = {}
        tp, _ = _unwrap(output_type)
        if _record_fields(tp) is not None and ROOT not in self.overrides:
            for name, field_type in _record_fields(tp).items():  # type: ignore[union-attr]
                self._walk(field_type, name, _key(name))
        else:
            self._seen.add(ROOT)
            self._add(Field(ROOT, _identity, self._value_scorer(output_type, ROOT)))
        unknown = sorted(set(self.overrides) - self._seen)
        if unknown:
            raise ConfigurationError(
                f"eval(scorers=...) names {', '.join(map(repr, unknown))}, which the output "
                f"type has no field at; its paths are {', '.join(sorted(self._seen))}"
            )

    def observe(self, expected: Any, got: Any) -> dict[str, Observation]:
        """Every path's observation of one answer ``got`` against ``expected`` (JSON forms)."""
        return {
            path: f.scorer.observe(f.get(expected), f.get(got)) for path, f in self.fields.items()
        }

    @property
    def headline(self) -> list[str]:
        """The paths ``record_exact`` and ``field_mean`` are made of."""
        return [path for path, f in self.fields.items() if not f.projected]

    def _add(self, field: Field) -> None:
        self.fields[field.path] = field

    def _walk(self, tp: Any, path: str, get: Getter) -> None:
        self._seen.add(path)
        bare, meta = _unwrap(tp)
        if path in self.overrides or _optional(bare) is not None or any(_is_judge(m) for m in meta):
            self._add(Field(path, get, self._value_scorer(tp, path)))
            return
        record = _record_fields(bare)
        if record is not None:
            for name, field_type in record.items():
                self._walk(field_type, f"{path}.{name}", _then(get, name))
            return
        item = _list_item(bare)
        if item is not None:
            self._add(Field(path, get, self._value_scorer(tp, path)))
            ordered = _is_ordered(meta)
            inner = _record_fields(_unwrap(item)[0])
            if inner is not None:
                for name, field_type in inner.items():
                    sub = f"{path}[*].{name}"
                    self._seen.add(sub)
                    scorer = self._value_scorer(field_type, sub)
                    self._add(Field(sub, _each(get, name), Items(scorer, ordered), projected=True))
            return
        self._add(Field(path, get, self._value_scorer(tp, path)))

    def _value_scorer(self, tp: Any, path: str) -> Scorer:
        """How a whole value of type ``tp`` at ``path`` is scored."""
        self._seen.add(path)
        bare, meta = _unwrap(tp)
        inner = _optional(bare)
        if inner is not None:
            return Maybe(self._value_scorer(_with_meta(inner, meta), path))
        override = self.overrides.get(path)
        scorer = (
            _overridden(override, bare) if override is not None else self._typed(bare, meta, path)
        )
        for m in meta:
            if _is_judge(m):
                scorer = Judged(m.command, scorer)
        return scorer

    def _typed(self, tp: Any, meta: tuple[Any, ...], path: str) -> Scorer:
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return Classes(tuple(label(m.value) for m in tp))
        if get_origin(tp) is Literal:
            return Classes(tuple(label(a) for a in get_args(tp)))
        if tp is bool:
            return Classes(("true", "false"), kind="bool")
        if tp in (int, float) or tp is Decimal:
            return Number(_tolerance(meta), decimal=tp is Decimal)
        if tp is str:
            return Text()
        if tp is datetime:
            return When(with_time=True, kind="datetime")
        if tp is date:
            return When()
        item = _list_item(tp)
        if item is not None:
            return Items(self._value_scorer(item, f"{path}[*]"), _is_ordered(meta))
        record = _record_fields(tp)
        if record is not None:
            return Record({n: self._value_scorer(t, f"{path}.{n}") for n, t in record.items()})
        return Same()


def _overridden(override: Any, tp: Any) -> Scorer:
    if isinstance(override, Within):
        return Number(override.tolerance, decimal=tp is Decimal)
    if isinstance(override, Similar):
        return Text("similar", override.at_least)
    if isinstance(override, Exact):
        return Text("raw") if tp is str else Same()
    if callable(override):
        return Custom(override)
    raise ConfigurationError(
        f"eval(scorers=...) takes within(x), similar(...), exact() or a function "
        f"(expected, got) -> 0..1, got {override!r}"
    )


def _identity(value: Any) -> Any:
    return value


def _key(name: str) -> Getter:
    return lambda value: value.get(name) if isinstance(value, dict) else None


def _then(get: Getter, name: str) -> Getter:
    return lambda value: _key(name)(get(value))


def _each(get: Getter, name: str) -> Getter:
    def projected(value: Any) -> Any:
        items = get(value)
        return [_key(name)(item) for item in items] if isinstance(items, list) else None

    return projected


def _unwrap(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """``tp`` without ``Annotated``, ``Required``/``NotRequired``, and the metadata found."""
    meta: tuple[Any, ...] = ()
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            meta += tuple(tp.__metadata__)
            tp = tp.__origin__
        elif origin in (typing_extensions.Required, typing_extensions.NotRequired):
            tp = get_args(tp)[0]
        else:
            return tp, meta


def _with_meta(tp: Any, meta: tuple[Any, ...]) -> Any:
    return typing.Annotated.__class_getitem__((tp, *meta)) if meta else tp  # type: ignore[attr-defined]


def _optional(tp: Any) -> Any:
    """The T of ``T | None`` (one T), else None."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0]
    return None


def _list_item(tp: Any) -> Any:
    import collections.abc as abc

    origin = get_origin(tp)
    if origin in (list, set, frozenset, abc.Sequence, abc.Iterable, abc.Iterator, abc.Set):
        args = get_args(tp)
        return args[0] if args else Any
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


def _record_fields(tp: Any) -> dict[str, Any] | None:
    """A record type's fields and their types (with their Annotated metadata), else None."""
    if not isinstance(tp, type):
        return None
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(tp)}
    model_fields = getattr(tp, "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(tp, "model_validate"):
        return {
            name: _with_meta(info.annotation, tuple(info.metadata))
            for name, info in model_fields.items()
        }
    if typing_extensions.is_typeddict(tp):
        return dict(typing.get_type_hints(tp, include_extras=True))
    return None


def _tolerance(meta: tuple[Any, ...]) -> float | None:
    for m in meta:
        if isinstance(m, Tolerance):
            return float(m.value)
    return None


def _is_ordered(meta: tuple[Any, ...]) -> bool:
    return any(m is Ordered or isinstance(m, Ordered) for m in meta)


def _is_judge(m: Any) -> bool:
    from ..checks import Judged as JudgedCriterion

    return isinstance(m, JudgedCriterion)
