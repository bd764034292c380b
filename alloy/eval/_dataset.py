"""The cases an eval runs: :class:`Case`, :class:`Dataset` (made in code, or loaded from a
JSON Lines file), and how they are checked against a command before anything is asked.

A dataset line is ``{"id": "...", "input": {"param": value, ...}, "expected": <the output as
JSON>, "tags": [...]}``; ``input`` may be a plain value for a one-parameter command. A case
whose input does not fit the command's signature, or whose expected value does not validate
as its output type, is left out and reported (:class:`Skipped`, with its line number), never
scored.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError


@dataclass(frozen=True)
class Case:
    """One case: the command's ``input`` (a dict of its parameters, or the value of its one
    parameter), the ``expected`` output (a value of the output type, or its JSON form), an
    ``id`` (by default its place in the dataset) and ``tags``."""

    input: Any
    expected: Any
    id: str | None = None
    tags: tuple[str, ...] = ()
    #: The line of the file it was read from (None for a case made in code).
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Skipped:
    """A case left out of the eval, and why (``line`` in its file, when it came from one)."""

    line: int | None
    id: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class Ready:
    """A case checked against a command: its keyword arguments, and the expected value in
    JSON form (as the output type dumps it, so it compares with the answers' dumps)."""

    id: str
    tags: tuple[str, ...]
    input: Any  # as given, JSON for the report
    kwargs: dict[str, Any]
    expected: Any


class Dataset:
    """The cases of an eval, in order: ``Dataset([Case(...), ...])`` or
    ``Dataset.load("cases.jsonl")``. A line of the file that is not a case (not JSON, no
    ``input`` or ``expected``) is kept as a :class:`Skipped` and reported."""

    def __init__(
        self, cases: Iterable[Case | Mapping[str, Any]] = (), *, skipped: Iterable[Skipped] = ()
    ) -> None:
        self.cases: list[Case] = []
        self.skipped: list[Skipped] = list(skipped)
        for i, case in enumerate(cases, 1):
            if isinstance(case, Case):
                self.cases.append(case)
            elif isinstance(case, Mapping):
                made = _case(case, None)
                if isinstance(made, Skipped):
                    raise ConfigurationError(f"Dataset: case {i}: {made.reason}")
                self.cases.append(made)
            else:
                raise ConfigurationError(
                    f"Dataset takes Case objects or dicts with 'input' and 'expected', "
                    f"got {type(case).__name__} at case {i}"
                )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Dataset:
        """The cases of a JSON Lines file (blank lines are skipped silently)."""
        try:
            handle = open(path, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise ConfigurationError(
                f"Dataset.load: cannot read {os.fspath(path)!r}: {exc.strerror}"
            ) from None
        cases: list[Case] = []
        skipped: list[Skipped] = []
        with handle:
            for number, text in enumerate(handle, 1):
                if not text.strip():
                    continue
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    skipped.append(Skipped(number, None, f"not JSON: {exc.msg}"))
                    continue
                made = (
                    _case(data, number)
                    if isinstance(data, dict)
                    else Skipped(
                        number, None, f"a line must be a JSON object, got {type(data).__name__}"
                    )
                )
                (skipped if isinstance(made, Skipped) else cases).append(made)  # type: ignore[arg-type]
        return cls(cases, skipped=skipped)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __repr__(self) -> str:
        return f"<Dataset of {len(self.cases)} cases ({len(self.skipped)} skipped)>"

    @staticmethod
    def schema(command: Any) -> dict[str, Any]:
        """The JSON Schema of one dataset line for ``command`` (``alloy eval schema``):
        ``input`` an object of its parameters (or, for a one-parameter command, the value),
        ``expected`` its output as JSON, optional ``id`` and ``tags``."""
        from pydantic import TypeAdapter

        defs: dict[str, Any] = {}

        def hoisted(tp: Any) -> dict[str, Any]:
            schema = TypeAdapter(tp).json_schema()
            defs.update(schema.pop("$defs", {}))
            return schema

        hints = _hints(command.spec.fn)
        parameters = [
            p
            for p in command.spec.signature.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        properties = {p.name: hoisted(hints[p.name]) if p.name in hints else {} for p in parameters}
        required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
        arguments: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        if len(parameters) == 1:
            arguments = {"anyOf": [arguments, properties[parameters[0].name]]}
        line: dict[str, Any] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"alloy eval case for {command.name}",
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "input": arguments,
                "expected": hoisted(command.output_type.value_type),
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["input", "expected"],
        }
        if defs:
            line["$defs"] = defs
        return line

    def check(self, command: Any) -> tuple[list[Ready], list[Skipped]]:
        """The cases that fit ``command`` (its signature and output type), and those left out."""
        from pydantic import TypeAdapter, ValidationError

        signature = command.spec.signature
        hints = _hints(command.spec.fn)
        output = TypeAdapter(command.output_type.value_type)
        adapters: dict[str, Any] = {}
        ready: list[Ready] = []
        skipped = list(self.skipped)
        seen: set[str] = set()
        for index, case in enumerate(self.cases):
            case_id = case.id if case.id is not None else f"c{case.line or index + 1}"
            if case_id in seen:
                skipped.append(Skipped(case.line, case_id, "the same id as an earlier case"))
                continue
            try:
                kwargs = _bind(signature, hints, case.input, adapters)
            except _Unfit as exc:
                skipped.append(Skipped(case.line, case_id, f"input: {exc}"))
                continue
            try:
                expected = output.dump_python(output.validate_python(case.expected), mode="json")
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "value"
                skipped.append(Skipped(case.line, case_id, f"expected: {where}: {first['msg']}"))
                continue
            seen.add(case_id)
            ready.append(Ready(case_id, tuple(case.tags), _plain(case.input), kwargs, expected))
        return ready, skipped


class _Unfit(Exception):
    """A case's input does not fit the command's signature."""


def _case(data: Mapping[str, Any], line: int | None) -> Case | Skipped:
    case_id = data.get("id")
    case_id = None if case_id is None else str(case_id)
    missing = [k for k in ("input", "expected") if k not in data]
    if missing:
        return Skipped(line, case_id, f"no {' or '.join(repr(k) for k in missing)}")
    tags = data.get("tags") or ()
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        return Skipped(line, case_id, "'tags' must be a list of strings")
    return Case(data["input"], data["expected"], case_id, tuple(tags), line)


def _hints(fn: Any) -> dict[str, Any]:
    import typing

    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an annotation that does not resolve: its values are not checked
        return {}


def _bind(
    signature: inspect.Signature, hints: dict[str, Any], given: Any, adapters: dict[str, Any]
) -> dict[str, Any]:
    """``given`` as the command's keyword arguments, each validated as its parameter's type."""
    from pydantic import TypeAdapter, ValidationError

    parameters = [
        p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if isinstance(given, Mapping) and not (
        len(parameters) == 1
        and set(given) != {parameters[0].name}
        and _takes_mapping(hints.get(parameters[0].name))
    ):
        arguments = dict(given)
    elif len(parameters) == 1:
        arguments = {parameters[0].name: given}
    else:
        names = ", ".join(p.name for p in parameters)
        raise _Unfit(
            f"the command takes {len(parameters)} parameters ({names}): give a JSON object"
        )
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    unknown = sorted(set(arguments) - {p.name for p in parameters})
    if unknown and not takes_any:
        names = ", ".join(p.name for p in parameters)
        raise _Unfit(f"no parameter {', '.join(map(repr, unknown))} (the command takes {names})")
    try:
        bound = signature.bind(**arguments)
    except TypeError as exc:
        raise _Unfit(str(exc)) from None
    checked: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        parameter = signature.parameters[name]
        if name not in hints or parameter.kind is parameter.VAR_KEYWORD:
            checked[name] = value
            continue
        adapter = adapters.get(name)
        if adapter is None:
            adapter = adapters[name] = TypeAdapter(hints[name])
        try:
            checked[name] = adapter.validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise _Unfit(f"parameter {name!r}: {first['msg']}") from None
    return checked


def _takes_mapping(annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", annotation)
    return origin in (dict, Mapping) or (isinstance(origin, type) and issubclass(origin, Mapping))


def _plain(value: Any) -> Any:
    """A case's input as JSON (for the report): as it is when it has a JSON form."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)
