"""Find the criteria in an output type: a tree mirroring the type, built once at decoration.

Criteria live in ``Annotated`` metadata anywhere in the type: on dataclass, TypedDict and pydantic
fields, on list items, inside unions, and on the whole output. The tree keeps only what is needed
to walk a validated value to each criterion, and rejects at decoration time what cannot work
(a criterion on the wrong type, ``filter`` on a field that cannot be dropped).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from typing_extensions import NotRequired, ReadOnly, Required, is_typeddict

from ..errors import ConfigurationError
from ._criterion import Criterion

Path = tuple[Union[str, int], ...]
Container = Literal["dataclass", "typeddict", "pydantic"]
#: How a failing field is dropped by ``filter``: delete the key, or set it to None.
Drop = Literal["delete", "none"]

_WRAPPERS = (Required, NotRequired, ReadOnly)


@dataclass(eq=False)
class FieldNode:
    attr: str  # attribute or key
    shown: str  # the name the model sees (a pydantic alias, if any)
    node: Node
    drop: Drop | None


@dataclass(eq=False)
class Node:
    """One position in the type. ``active`` is False where no criterion lies at or below it."""

    kind: Literal["leaf", "object", "list", "union"] = "leaf"
    criteria: tuple[Criterion, ...] = ()
    base: Any = None
    container: Container | None = None
    fields: tuple[FieldNode, ...] = ()
    item: Node | None = None
    options: tuple[Node, ...] = ()
    nullable: bool = False
    active: bool = False
    children: list[Node] = field(default_factory=list)


def split_annotated(tp: Any) -> tuple[Any, tuple[Criterion, ...], tuple[Any, ...]]:
    """``Annotated[T, a, b]`` -> (T, criteria, other metadata); TypedDict wrappers removed."""
    criteria: list[Criterion] = []
    other: list[Any] = []
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            base, *meta = get_args(tp)
            for item in meta:
                (criteria if isinstance(item, Criterion) else other).append(item)
            tp = base
        elif origin in _WRAPPERS:
            tp = get_args(tp)[0]
        else:
            return tp, tuple(criteria), tuple(other)


def annotated(tp: Any, metadata: tuple[Any, ...]) -> Any:
    """``Annotated[tp, *metadata]``, or ``tp`` itself when there is no metadata."""
    if not metadata:
        return tp
    params = (tp, *metadata)
    return Annotated[params]  # a tuple subscript: the spelling every Python version takes


def make_typeddict(name: str, fields: dict[str, Any], doc: str | None = None) -> Any:
    """A TypedDict class built at run time (for specs loaded from RAIL or PDL)."""
    from typing_extensions import TypedDict

    factory: Any = TypedDict
    cls = factory(name, fields)
    if doc:
        cls.__doc__ = doc
    return cls


def strip_criteria(tp: Any) -> Any:
    """The type with criteria removed from its ``Annotated`` layers (classes are left as is)."""
    base, criteria, other = split_annotated(tp)
    origin = get_origin(base)
    args = get_args(base)
    if origin in (Union, types.UnionType):
        base = Union[tuple(strip_criteria(a) for a in args)]
    elif origin in (list, tuple) and args:
        base = origin[tuple(a if a is Ellipsis else strip_criteria(a) for a in args)]
    if not criteria and get_origin(tp) is not Annotated:
        return tp
    return annotated(base, other)


class Builder:
    """Builds the tree for one output type; classes are memoised so recursive types terminate."""

    def __init__(self) -> None:
        self.memo: dict[Any, Node] = {}
        self.nodes: list[Node] = []

    def build(self, tp: Any, where: str = "the answer") -> Node:
        root = self.node(tp, where)
        _mark_active(self.nodes)
        return root

    def node(self, tp: Any, where: str) -> Node:
        base, criteria, _ = split_annotated(tp)
        node = self._shape(base, where)
        if criteria:
            _check_applicable(criteria, base, where)
            if node.kind == "object":
                # Class nodes are shared by every use of the class: wrap instead of mutating.
                node = self._new(kind="union", base=base, options=(node,), children=[node])
            node.criteria = node.criteria + criteria
        return node

    def _new(self, **kwargs: Any) -> Node:
        node = Node(**kwargs)
        self.nodes.append(node)
        return node

    def _shape(self, base: Any, where: str) -> Node:
        origin = get_origin(base)
        args = get_args(base)
        if origin in (Union, types.UnionType):
            options = tuple(self.node(a, where) for a in args if a is not type(None))
            return self._new(
                kind="union",
                base=base,
                options=options,
                nullable=type(None) in args,
                children=list(options),
            )
        if origin in (list, tuple) and (origin is list or (len(args) == 2 and args[1] is Ellipsis)):
            item = self.node(args[0], f"{where}[]") if args else self._new(base=Any)
            return self._new(kind="list", base=origin, item=item, children=[item])
        if isinstance(base, type):
            if base in self.memo:
                return self.memo[base]
            container = container_kind(base)
            if container is not None:
                node = self._new(kind="object", base=base, container=container)
                self.memo[base] = node
                node.fields = tuple(self._fields(base, container, where))
                node.children = [f.node for f in node.fields]
                return node
        return self._new(base=base)

    def _fields(self, cls: type, container: Container, where: str) -> Iterator[FieldNode]:
        prefix = "" if where == "the answer" else where + "."
        for attr, shown, tp, optional_key in declared_fields(cls, container):
            node = self.node(tp, prefix + shown)
            drop: Drop | None = None
            if optional_key:
                drop = "delete"
            elif node.kind == "union" and node.nullable:
                drop = "none"
            if drop is None and _drops(node):
                raise ConfigurationError(
                    f"on_fail='filter' on {prefix + shown} of {cls.__qualname__}: filter drops a "
                    "list item or an optional field, and this field is required; make it "
                    "Optional (X | None) or NotRequired, or choose another action"
                )
            yield FieldNode(attr, shown, node, drop)


def container_kind(cls: type) -> Container | None:
    if is_typeddict(cls):
        return "typeddict"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    try:
        from pydantic import BaseModel
    except ImportError:  # pragma: no cover - pydantic is a dependency
        return None
    if issubclass(cls, BaseModel):
        return "pydantic"
    return None


def declared_fields(cls: type, container: Container) -> Iterator[tuple[str, str, Any, bool]]:
    """(attribute, name shown to the model, annotated type, key may be absent) per field."""
    if container == "pydantic":
        for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
            tp = info.annotation
            if info.metadata:
                tp = annotated(tp, tuple(info.metadata))
            yield name, info.alias or name, tp, False
        return
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except (NameError, TypeError):  # unresolvable forward references: pydantic will say so
        return
    if container == "typeddict":
        optional: frozenset[str] = getattr(cls, "__optional_keys__", frozenset())
        for name, tp in hints.items():
            yield name, name, tp, name in optional
        return
    for f in dataclasses.fields(cls):
        if f.name in hints:
            yield f.name, f.name, hints[f.name], False


def _drops(node: Node) -> bool:
    """Whether a filter failure can surface at this node (and so must be droppable above it)."""
    if any(c.on_fail == "filter" for c in node.criteria):
        return True
    return node.kind == "union" and any(_drops(o) for o in node.options)


def _mark_active(nodes: list[Node]) -> None:
    for node in nodes:
        node.active = bool(node.criteria)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if not node.active and any(child.active for child in node.children):
                node.active = changed = True


_SCALARS: dict[type, tuple[type, ...]] = {
    str: (str,),
    int: (int, float),
    float: (int, float),
    bool: (bool,),
    list: (list,),
    tuple: (tuple, list),
}


def _check_applicable(criteria: tuple[Criterion, ...], base: Any, where: str) -> None:
    """A criterion on a type it cannot check is a mistake worth reporting at decoration."""
    origin = get_origin(base) or base
    kinds = _SCALARS.get(origin) if isinstance(origin, type) else None
    if kinds is None:
        return
    for criterion in criteria:
        if object in criterion.accepts or any(issubclass(k, criterion.accepts) for k in kinds):
            continue
        wanted = " or ".join(t.__name__ for t in criterion.accepts)
        raise ConfigurationError(
            f"Criterion {criterion.name} checks {wanted} values, but {where} is "
            f"{getattr(origin, '__name__', origin)}"
        )


def describe(root: Node) -> list[tuple[str, Criterion]]:
    """(path, criterion) for every criterion in the tree, for the prompt's instructions.

    A recursive type is described down to its first repetition.
    """
    out: list[tuple[str, Criterion]] = []

    def walk(node: Node, where: str, ancestors: frozenset[int]) -> None:
        if not node.active or id(node) in ancestors:
            return
        inside = ancestors | {id(node)}
        if node.kind == "object":
            prefix = "" if where == "the answer" else where + "."
            for f in node.fields:
                walk(f.node, prefix + f.shown, inside)
        elif node.kind == "list" and node.item is not None:
            walk(node.item, f"{where}[]", inside)
        elif node.kind == "union":
            for option in node.options:
                walk(option, where, inside)
        out.extend((where, c) for c in node.criteria)

    walk(root, "the answer", frozenset())
    return out
