"""Output types: the Python type a command returns, its strict JSON Schema, and the parser.

One machinery, pydantic's ``TypeAdapter``, builds the schema and validates the reply for every
supported type, so what is promised to the provider and what is checked locally never drift.
Schemas are built once, when the command is decorated.
"""

from __future__ import annotations

import collections.abc
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, get_args, get_origin, runtime_checkable

from ._pickling import mended
from ._schema import is_object_root, strict_schema, wrap_value
from .errors import ConfigurationError


class InvalidOutput(Exception):
    """The reply could not become the expected value. ``feedback`` is written for the model.

    ``report`` is what the output type recorded about the attempt (a criteria-aware output's
    ``CheckReport``), kept in ``Result.reports`` and on the error that ends the call; None when
    it records nothing.
    """

    def __init__(self, summary: str, feedback: str, *, report: Any = None) -> None:
        super().__init__(summary)
        self.summary = summary
        self.feedback = feedback
        self.report = report


@dataclass(frozen=True)
class Parsed:
    """A parse result with a report attached (criteria results, fixes); the engine unwraps it."""

    value: Any
    report: Any = None


@runtime_checkable
class OutputType(Protocol):
    """What the engine needs from an output type: JSON (:class:`JsonOutput`), plain text, none,
    a text format (:mod:`alloy.formats`) or one of those with criteria (``alloy.checks``)."""

    @property
    def expected(self) -> str:
        """Human-readable name of the expected type, used in errors."""
        ...

    @property
    def schema(self) -> dict[str, Any] | None:
        """Canonical strict JSON Schema sent to the provider, or None for free text."""
        ...

    @property
    def name(self) -> str:
        """Schema name for providers that want one."""
        ...

    @property
    def instructions(self) -> str | None:
        """Formatting instructions added to the system prompt, if any."""
        ...

    @property
    def value_type(self) -> Any:
        """The Python type ``parse`` returns (criteria on a format are checked against it)."""
        ...

    def example(self) -> str | None:
        """A reply this type accepts, for stand-in models such as the offline one; None when the
        schema says enough (JSON) or any text will do."""
        ...

    def render(self, value: Any) -> str:
        """The reply a model would give for ``value``, which ``parse`` reads back: how a worked
        example's answer is sent. Raises ValueError or TypeError when ``value`` is no answer."""
        ...

    def parse(self, text: str) -> Any:
        """Turn the model's final text into the value (or a ``Parsed``), or raise InvalidOutput.

        Raising a CommandError subclass ends the call at once; the engine attaches the transcript.
        """
        ...


@dataclass(frozen=True)
class TextOutput:
    """The default: the model's final text, as it is."""

    expected: str = "str"
    schema: None = None
    name: str = "text"
    instructions: None = None
    value_type: type = field(default=str, init=False, repr=False)

    def example(self) -> None:
        return None

    def render(self, value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"a text answer is a str, got {type(value).__name__}")
        return value

    def parse(self, text: str) -> str:
        return text


@dataclass(frozen=True, eq=False)
class SchemaOutput:
    """A JSON Schema given as it is, not made from a Python type: the ``json_schema`` response
    format a caller of the ``/v1`` proxy asks for. The reply is read as JSON (one that is not
    is re-asked); the schema itself is the provider's to enforce, sent ``strict`` or not as
    the caller said."""

    name: str
    schema: dict[str, Any]
    strict: bool = True
    instructions: None = None
    value_type: type = field(default=object, init=False, repr=False)

    @property
    def expected(self) -> str:
        return f"JSON matching the {self.name!r} schema"

    def example(self) -> None:
        return None

    def render(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def parse(self, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as error:
            raise InvalidOutput(
                f"The reply is not JSON ({error})",
                f"Your reply was not valid JSON ({error}). Answer with JSON only.",
            ) from None


@dataclass(frozen=True)
class NoOutput:
    """``output=None``: the call is made for its side effects and returns None."""

    expected: str = "None"
    schema: None = None
    name: str = "none"
    instructions: None = None
    value_type: type = field(default=type(None), init=False, repr=False)

    def example(self) -> None:
        return None

    def render(self, value: Any) -> str:
        raise TypeError("a command with output=None has no answer to show")

    def parse(self, text: str) -> None:
        return None


class JsonOutput:
    """A Python type enforced through a strict JSON Schema and validated strictly by pydantic."""

    def __init__(self, tp: Any) -> None:
        from pydantic import TypeAdapter
        from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
        from typing_extensions import TypedDict

        self.type = self.value_type = tp
        self.expected = type_name(tp)
        # Iterable[T] and Iterator[T] are read as list[T]: pydantic would hand back a lazy
        # iterator whose bad items fail only while it is consumed, after the call, unrepaired.
        tp = self._eager = eager(tp)
        try:
            adapter: Any = TypeAdapter(tp)
            raw = adapter.json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
            raise ConfigurationError(
                f"Output type {self.expected} has no JSON Schema: {exc}. Use a dataclass, TypedDict, "
                "pydantic model, primitive, list, Enum, Literal or a union of those."
            ) from exc
        self.wrapped = not is_object_root(raw)
        if self.wrapped:
            # A TypedDict envelope validates in half the time of a model one (functional form:
            # the field type is only known here).
            envelope = TypedDict("Value", {"value": tp})  # type: ignore[name-match]  # noqa: UP013
            adapter = TypeAdapter(envelope)
            schema = wrap_value(raw)
        else:  # the adapter that made the schema validates too: one schema build, not two
            schema = _inline_root_ref(raw)
        self._validate_json = adapter.validator.validate_json
        self._dump_json = adapter.serializer.to_json
        self.schema: dict[str, Any] = strict_schema(schema, type_name=self.expected)
        self.name = schema_name(self.expected)
        self.instructions: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Made again from the type in another process: its validators are pydantic's compiled
        code, and its ``{"value": ...}`` envelope a class made here."""
        return (_json_output, (self.type,))

    def example(self) -> None:
        """None: a stand-in model samples a value from the schema."""
        return None

    def render(self, value: Any) -> str:
        """``value`` as the JSON the schema asks for; read back by ``parse`` to check it."""
        shown = {"value": value} if self.wrapped else value
        text: str = self._dump_json(shown, warnings=False).decode()
        self.parse(text)  # a value of another type is refused here, not sent as an example
        return text

    def parse(self, text: str) -> Any:
        try:
            value = self._validate_json(text, strict=True)
        except ValueError as exc:  # pydantic's ValidationError is one; imported only when needed
            return self._parse_again(text, exc)
        return value["value"] if self.wrapped else value

    def _parse_again(self, text: str, exc: ValueError) -> Any:
        """The value of a reply the first reading refused, or InvalidOutput.

        Two more readings are tried: the inside of one code fence wrapping the reply whole, and,
        for a type sent wrapped as ``{"value": ...}``, the bare value (``[1, 2]`` for a
        ``list[int]``), which models often answer. A reply that is an envelope is judged as one.
        One fence is unwrapped, not fences inside it: recursing into those would let a reply of
        thousands of nested fences exhaust the stack, at quadratic cost on the way.
        """
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise exc
        body = _unfence(text)
        if body is not None and body != text:
            try:
                value = self._validate_json(body, strict=True)
                return value["value"] if self.wrapped else value
            except ValidationError as inner:
                exc = inner
        else:
            body = text
        if self.wrapped and not _is_envelope(body):
            try:
                return self._bare_validator()(body, strict=True)
            except ValidationError as bare:
                raise InvalidOutput(
                    _summary(bare, self.expected, False), _feedback(bare, False)
                ) from bare
        raise InvalidOutput(
            _summary(exc, self.expected, self.wrapped), _feedback(exc, self.wrapped)
        ) from exc

    def _bare_validator(self) -> Any:
        """The validator of the type itself, without the ``{"value": ...}`` envelope: built when
        a reply needs it (the model answered the bare value), which is rare and already a
        second reading, so it is not kept."""
        from pydantic import TypeAdapter

        return TypeAdapter(self._eager).validator.validate_json

    def __repr__(self) -> str:
        return f"JsonOutput({self.expected})"


def _json_output(tp: Any) -> JsonOutput:
    """A JsonOutput made again in another process (see :func:`alloy._pickling.mended`)."""
    return JsonOutput(mended(tp))


def eager(tp: Any) -> Any:
    """``list[T]`` for ``Iterable[T]`` and ``Iterator[T]`` (also inside ``Annotated``); else
    ``tp`` itself."""
    if get_origin(tp) is Annotated:
        inner, *metadata = get_args(tp)
        read = eager(inner)
        params = (read, *metadata)
        return tp if read is inner else Annotated[params]
    if get_origin(tp) in (collections.abc.Iterable, collections.abc.Iterator):
        args = get_args(tp)
        return list[args[0]] if args else list  # type: ignore[valid-type]
    return tp


def type_name(tp: Any) -> str:
    """A readable name for a type, as a user would write it."""
    if isinstance(tp, type) and not getattr(tp, "__args__", None):
        return tp.__qualname__
    return re.sub(
        r"\b(typing|typing_extensions|builtins|collections\.abc)\.", "", repr(tp)
    ).replace("__main__.", "")


def schema_name(expected: str) -> str:
    """The name a schema is sent under (OpenAI: a-zA-Z0-9_- and at most 64 characters)."""
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", expected).strip("_") or "output"
    return name[:64]


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace a root ``$ref`` with its target: providers want ``type: object`` at the root."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    defs = dict(schema.get("$defs", {}))
    target = dict(defs[ref.removeprefix("#/$defs/")])
    rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs")}
    return {**target, **rest, "$defs": defs}


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def _is_envelope(text: str) -> bool:
    """Whether ``text`` is a JSON object with a ``value`` key: an answer in the envelope."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError):
        return True  # not JSON at all: the envelope's error is as good as any
    return isinstance(loaded, dict) and "value" in loaded


def _unfence(text: str) -> str | None:
    """The body of a reply wrapped whole in a code fence, which some models add even in JSON mode."""
    match = _FENCE.match(text)
    return match.group(1) if match else None


def _location(loc: tuple[int | str, ...], wrapped: bool) -> str:
    parts = list(loc[1:] if wrapped and loc and loc[0] == "value" else loc)
    if not parts:
        return "the answer"
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _summary(exc: Any, expected: str, wrapped: bool) -> str:
    first = exc.errors(include_url=False)[0]
    where = _location(tuple(first["loc"]), wrapped)
    problem = first["msg"] if where == "the answer" else f"{where}: {first['msg']}"
    return f"Failed to parse model output as {expected}: {problem}"


def _feedback(exc: Any, wrapped: bool) -> str:
    """One line per validation error, naming the field, the value and what was wrong."""
    lines = []
    for error in exc.errors(include_url=False)[:20]:
        if error["type"] == "json_invalid":
            lines.append(f"- the reply is not valid JSON ({error['msg']})")
            continue
        where = _location(tuple(error["loc"]), wrapped)
        value = error.get("input")
        shown = json.dumps(value, default=str)[:80] if not isinstance(value, Mapping) else "{…}"
        if error["type"] == "missing":
            lines.append(f"- {where}: field required but missing")
        else:
            lines.append(f"- {where}: {error['msg']} (got {shown})")
    return "\n".join(lines)
