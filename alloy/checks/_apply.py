"""Walk a validated value through the criteria tree and carry out each failure's action.

Children are checked before their parent (so a list's length criterion sees the list after its
failing items were filtered), and a value's criteria run in order, each on the previous one's
fix. ``exception`` raises at once and ``refrain`` ends the walk; re-asks are collected so one
message can name every failure.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Literal, get_args, get_origin

from ..errors import CriterionFailed
from ._criterion import NO_FIX, Criterion
from ._plan import Node, Path
from ._report import CriterionResult, Outcome, shown


class _Dropped:
    """A value removed by ``filter``; its parent leaves it out."""


DROP: Any = _Dropped()


class Refrained(Exception):
    """Internal: a ``refrain`` failure; the call returns None."""


def format_path(path: Path) -> str:
    """``("items", 2, "name")`` -> ``"items[2].name"``; the empty path is the answer itself."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the answer"


class Walk:
    """One parse attempt's walk; ``results`` and ``reasks`` are its record."""

    def __init__(self) -> None:
        self.results: list[CriterionResult] = []

    @property
    def reasks(self) -> list[CriterionResult]:
        return [r for r in self.results if r.outcome == "reasked"]

    def apply(self, node: Node, value: Any, path: Path = ()) -> Any:
        """The value after this node's criteria and actions, or DROP."""
        if not node.active:
            return value
        if node.kind == "object":
            value = self._object(node, value, path)
        elif node.kind == "list":
            value = self._list(node, value, path)
        elif node.kind == "union":
            option = next((o for o in node.options if matches(o, value)), None)
            if option is not None:
                value = self.apply(option, value, path)
                if value is DROP:
                    return DROP
        return self._criteria(node.criteria, value, path)

    def _object(self, node: Node, value: Any, path: Path) -> Any:
        if not matches(node, value):
            return value
        changes: dict[str, Any] = {}
        for f in node.fields:
            if node.container == "typeddict":
                if f.attr not in value:
                    continue
                current = value[f.attr]
            else:
                current = getattr(value, f.attr)
            new = self.apply(f.node, current, (*path, f.shown))
            if new is not current:
                changes[f.attr] = new
        return _rebuild(node, value, changes) if changes else value

    def _list(self, node: Node, value: Any, path: Path) -> Any:
        if not isinstance(value, (list, tuple)) or node.item is None:
            return value
        items = [self.apply(node.item, item, (*path, i)) for i, item in enumerate(value)]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        kept = [item for item in items if item is not DROP]
        return type(value)(kept)

    def _criteria(self, criteria: tuple[Criterion, ...], value: Any, path: Path) -> Any:
        for criterion in criteria:
            if value is None:
                continue  # an absent optional value has nothing to check
            error = validate_value(criterion, value)
            if error is None:
                self._record(criterion, path, "passed", value)
                continue
            action = criterion.on_fail
            if action == "noop":
                self._record(criterion, path, "recorded", value, error)
            elif action == "reask":
                self._record(criterion, path, "reasked", value, error)
            elif action in ("fix", "fix_reask"):
                fixed = criterion.fix(value)
                if fixed is not NO_FIX and validate_value(criterion, fixed) is None:
                    self._record(criterion, path, "fixed", value, error, fixed)
                    value = fixed
                elif action == "fix_reask":
                    self._record(criterion, path, "reasked", value, error)
                else:
                    result = self._record(criterion, path, "unfixable", value, error)
                    raise self._failed(result, "its fix could not repair the value")
            elif action == "filter":
                self._record(criterion, path, "filtered", value, error)
                return DROP
            elif action == "refrain":
                self._record(criterion, path, "refrained", value, error)
                raise Refrained
            else:  # exception
                raise self._failed(self._record(criterion, path, "raised", value, error))
        return value

    def _record(
        self,
        criterion: Criterion,
        path: Path,
        outcome: Outcome,
        value: Any,
        error: str | None = None,
        fixed: Any = None,
    ) -> CriterionResult:
        result = CriterionResult(
            format_path(path), criterion.name, criterion.on_fail, outcome, value, error, fixed
        )
        self.results.append(result)
        return result

    @staticmethod
    def _failed(result: CriterionResult, why: str | None = None) -> CriterionFailed:
        message = (
            f"Criterion {result.criterion} failed on {result.path}: {result.error} "
            f"(got {shown(result.value)})"
        )
        if why:
            message += f"; {why}"
        return CriterionFailed(message, field=result.path, criterion=result.criterion)


class Audit(Walk):
    """A walk that only looks: each criterion that can run outside a call is validated and its
    failure recorded (``raised`` when the criterion itself raised), and no action is carried out.

    Worked examples are audited this way when their command is decorated: an example is the
    answer the model is shown, so it must pass what a real answer is held to. ``noop`` criteria
    only record in a call, so a failing one does not count here either.
    """

    def _criteria(self, criteria: tuple[Criterion, ...], value: Any, path: Path) -> Any:
        for criterion in criteria:
            if value is None or criterion.on_fail == "noop" or not criterion.runs_alone:
                continue
            try:
                error = validate_value(criterion, value)
            except Exception as exc:
                self._record(criterion, path, "raised", value, f"{type(exc).__name__}: {exc}")
                continue
            if error is not None:
                self._record(criterion, path, "recorded", value, error)
        return value


def validate_value(criterion: Criterion, value: Any) -> str | None:
    """The criterion's error for ``value`` (a type error for a type it cannot check), or None."""
    if not isinstance(value, criterion.accepts) or (
        isinstance(value, bool)
        and bool not in criterion.accepts
        and object not in criterion.accepts
    ):
        kinds = " or ".join(
            dict.fromkeys(_KIND_NAMES.get(t, t.__name__) for t in criterion.accepts)
        )
        return f"must be {kinds}"
    return criterion.validate(value)


_KIND_NAMES: dict[type, str] = {
    str: "a string",
    int: "a number",
    float: "a number",
    list: "a list",
    tuple: "a list",
    bool: "true or false",
    dict: "an object",
}


def matches(node: Node, value: Any) -> bool:
    """Whether ``value`` belongs to this union option (first match wins)."""
    if node.kind == "object":
        if node.container != "typeddict":
            return isinstance(value, node.base)
        if not isinstance(value, dict):
            return False
        keys = set(value)
        required: frozenset[str] = getattr(node.base, "__required_keys__", frozenset())
        if not required <= keys <= set(getattr(node.base, "__annotations__", keys)):
            return False
        # A Literal field tells the options of a discriminated union apart.
        return all(
            matches(f.node, value[f.attr])
            for f in node.fields
            if f.attr in value and get_origin(f.node.base) is Literal
        )
    if node.kind == "list":
        return isinstance(value, (list, tuple))
    if node.kind == "union":
        return any(matches(o, value) for o in node.options) or (node.nullable and value is None)
    base = node.base
    if get_origin(base) is Literal:
        return any(value == arg and type(value) is type(arg) for arg in get_args(base))
    if base in (int, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(base, type):
        return isinstance(value, base)
    return True


def _rebuild(node: Node, value: Any, changes: dict[str, Any]) -> Any:
    """A copy of ``value`` with fields changed; DROP deletes a key or sets the field to None."""
    by_attr = {f.attr: f for f in node.fields}
    updates = {}
    deleted = set()
    for attr, new in changes.items():
        if new is DROP:
            if by_attr[attr].drop == "delete":
                deleted.add(attr)
                continue
            new = None
        updates[attr] = new
    if node.container == "typeddict":
        return {k: updates.get(k, v) for k, v in value.items() if k not in deleted}
    if node.container == "pydantic":
        return value.model_copy(update=updates)
    try:
        return dataclasses.replace(value, **updates)
    except (TypeError, ValueError):  # init=False fields: copy and set
        clone = copy.copy(value)
        for attr, new in updates.items():
            object.__setattr__(clone, attr, new)
        return clone
