"""Load a Guardrails RAIL ``<output>`` element as an alloy output type.

Elements become a TypedDict (built at load time) whose fields carry their ``description`` (it
flows into the JSON Schema) and their ``format`` criteria with the ``on-fail-<criterion>``
actions, so the result works anywhere an output type does::

    @command(output=load_rail(RAIL))
    def write(topic: str) -> str: ...

Values come back as dicts and lists, as RAIL describes them. A criterion without an
``on-fail-*`` attribute only records its failures (``noop``), as in Guardrails. A top-level
``<output type="string">`` is plain text, checked by its criteria.

Unsupported tags, attributes and criteria are, as RAIL specifies, treated leniently by default:
an unknown type becomes a string without checks and anything else unknown is ignored, each with
a :class:`~alloy.checks.SpecWarning`. With ``strict="true"`` on ``<output>`` (or
``load_rail(..., strict=True)``) each is a ConfigurationError.

A malformed or hostile spec is a ConfigurationError that says where: a DOCTYPE is refused (its
entities could expand without bound, or read files), and elements may nest 32 levels deep.
"""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, cast

from typing_extensions import NotRequired

from .._output import OutputType
from ..checks import Action, CheckedOutput, Criterion, checked
from ..checks._criterion import ACTIONS
from ..checks._plan import annotated, make_typeddict, split_annotated
from ..checks._spec import make_criterion, normalize, parse_format, unknown
from ..errors import ConfigurationError
from ._shared import MAX_DEPTH, TypeNames, surrogate_at, too_deep

__all__ = ["RailText", "load_rail"]

_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "float": float,
    "bool": bool,
    "boolean": bool,
    "date": datetime.date,
    "time": datetime.time,
    "url": str,
    "email": str,
    "percentage": str,
    "pythoncode": str,
    "sql": str,
}
_COMMON = frozenset({"name", "description", "format", "required"})
_EXTRA = {"enum": {"values"}, "date": {"date-format"}, "time": {"time-format"}}
_OUTPUT_ATTRIBUTES = frozenset({"strict", "type", "format", "description", "name"})


@dataclass(frozen=True)
class RailText:
    """A RAIL ``<output type="string">``: the whole reply as text, surrounding space removed."""

    description: str | None = None
    expected: str = field(default="str", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="text", init=False)
    value_type: type = field(default=str, init=False, repr=False)

    @property
    def instructions(self) -> str | None:
        return f"Answer with plain text: {self.description}" if self.description else None

    def example(self) -> None:
        """None: any text is an answer."""
        return None

    def render(self, value: str) -> str:
        if not isinstance(value, str):
            raise TypeError(f"text is a str, got {type(value).__name__}")
        return value

    def parse(self, text: str) -> str:
        return text.strip()


def load_rail(spec: str | ET.Element, *, strict: bool | None = None) -> OutputType:
    """The output type a RAIL spec (a ``<rail>`` document or its ``<output>`` element) describes.

    ``strict`` overrides the ``strict`` attribute of ``<output>``.
    """
    output = _output_element(spec)
    if strict is None:
        strict = _flag(output.get("strict"), "strict")
    loader = _Loader(strict)
    loader.check_attributes(output, "<output>", _OUTPUT_ATTRIBUTES)
    kind = output.get("type")
    children = list(output)
    if kind is not None:
        if children:
            raise ConfigurationError('<output type="..."> cannot also have child elements')
        if kind != "string":
            unknown(
                f"Unsupported output type {kind!r}", strict=strict, fallback="treated as string"
            )
        criteria = loader.criteria(output, "the answer", str)
        return checked(RailText(output.get("description")), *criteria)
    if not children:
        raise ConfigurationError("<output> has neither child elements nor a type attribute")
    root = loader.mapping(output, "RailOutput", "", 0)
    root_criteria = loader.criteria(output, "the answer", dict)
    return CheckedOutput(annotated(root, tuple(root_criteria)))


def _output_element(spec: str | ET.Element) -> ET.Element:
    root = _parse_xml(spec) if isinstance(spec, str) else spec
    if root.tag == "output":
        return root
    found = root.find("output")
    if found is None:
        raise ConfigurationError(f"RAIL spec has no <output> element (root is <{root.tag}>)")
    return found


def _parse_xml(spec: str) -> ET.Element:
    """The root element of a RAIL document, parsed without a DOCTYPE (so without entities)."""
    spec = spec.strip()
    doctype = spec.find("<!DOCTYPE")
    if doctype >= 0:
        raise ConfigurationError(
            f"RAIL spec line {_line(spec, doctype)}: DOCTYPE declarations are not allowed (their "
            "entities could expand without bound or read files); remove it"
        )
    bad = surrogate_at(spec)
    if bad is not None:
        column = bad - spec.rfind("\n", 0, bad)
        raise ConfigurationError(
            f"RAIL spec line {_line(spec, bad)}, column {column}: {spec[bad]!r} is a lone "
            "surrogate, not valid text"
        )
    try:
        return ET.fromstring(spec)
    except ET.ParseError as exc:
        raise ConfigurationError(f"RAIL spec is not well-formed XML: {exc}") from None


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _flag(value: str | None, what: str) -> bool:
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ConfigurationError(f"{what} must be true or false, got {value!r}")


class _Loader:
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.names = TypeNames()

    # -- elements --
    def field(self, el: ET.Element, where: str, depth: int) -> tuple[Any, bool]:
        """(annotated type, may be dropped) for one element inside ``depth`` containers."""
        tag = el.tag.lower()
        known = _COMMON | _EXTRA.get(tag, set())
        self.check_attributes(el, f"<{el.tag}> at {where}", known)
        if tag in ("object", "list") and depth >= MAX_DEPTH:
            raise ConfigurationError(f"<{el.tag}> at {where}: {too_deep()}")
        base: Any
        if tag == "object":
            if len(el):
                base = self.mapping(el, _class_name(el.get("name") or where), where, depth + 1)
            else:
                self.unsupported(f"<object> at {where} has no child elements (open-ended keys)")
                base = str
        elif tag == "list":
            base = self.sequence(el, where, depth + 1)
        elif tag == "enum":
            values = [v.strip() for v in (el.get("values") or "").split(",") if v.strip()]
            if not values:
                raise ConfigurationError(f'<enum> at {where} needs values="a, b, c"')
            base = Literal.__getitem__(tuple(values))
        elif tag in _SCALARS:
            base = _SCALARS[tag]
        else:
            self.unsupported(f"Unsupported type: {el.tag} (at {where})")
            return str, False
        criteria = self.criteria(el, where, base)
        metadata: list[Any] = list(criteria)
        description = el.get("description")
        if description and tag != "object":
            from pydantic import Field

            metadata.insert(0, Field(description=description))
        optional = not _flag(el.get("required", "true"), f"required at {where}")
        droppable = optional or any(c.on_fail == "filter" for c in criteria)
        tp = Optional[base] if optional else base  # noqa: UP045 - a runtime type expression
        return annotated(tp, tuple(metadata)), droppable

    def mapping(self, el: ET.Element, name: str, where: str, depth: int) -> Any:
        fields: dict[str, Any] = {}
        prefix = f"{where}." if where else ""
        for child in el:
            key = child.get("name")
            if not key:
                raise ConfigurationError(f"<{child.tag}> inside {where or '<output>'} needs a name")
            if key in fields:
                raise ConfigurationError(f"Duplicate field name {key!r} in {where or '<output>'}")
            tp, droppable = self.field(child, prefix + key, depth)
            fields[key] = NotRequired[tp] if droppable else tp
        return make_typeddict(self.names.unique(name), fields, el.get("description"))

    def sequence(self, el: ET.Element, where: str, depth: int) -> Any:
        children = list(el)
        if len(children) > 1:
            self.unsupported(
                f"<list> at {where} has {len(children)} child elements; one is allowed"
            )
        if not children:
            return list[str]
        item, _ = self.field(children[0], f"{where}[]", depth)
        return list[item]  # type: ignore[valid-type]

    # -- criteria --
    def criteria(self, el: ET.Element, where: str, base: Any) -> list[Criterion]:
        actions = {
            normalize(k[len("on-fail-") :]): v
            for k, v in el.attrib.items()
            if k.startswith("on-fail-")
        }
        out: list[Criterion] = []
        named: set[str] = set()
        spec = el.get("format") or ""
        for name, args, kwargs in parse_format(spec):
            named.add(name)
            action = actions.get(name, "noop")
            if action not in ACTIONS:
                raise ConfigurationError(
                    f"on-fail-{name}={action!r} at {where}: use one of {', '.join(ACTIONS)}"
                )
            try:
                criterion = make_criterion(name, args, kwargs, cast(Action, action))
            except ConfigurationError as exc:
                raise ConfigurationError(f"<{el.tag}> at {where}, format={spec!r}: {exc}") from None
            if criterion is None:
                self.unsupported(f"Unsupported criterion {name!r} at {where}")
                continue
            if not _applies(criterion, base):
                self.unsupported(f"Criterion {name} does not apply to {_kind(base)} at {where}")
                continue
            out.append(criterion)
        for name in actions.keys() - named:
            self.unsupported(f"on-fail-{name} at {where} names no criterion in its format")
        return out

    # -- helpers --
    def check_attributes(
        self, el: ET.Element, where: str, known: frozenset[str] | set[str]
    ) -> None:
        for attribute in el.attrib:
            if attribute not in known and not attribute.startswith("on-fail-"):
                self.unsupported(f"Unsupported attribute {attribute!r} on {where}")

    def unsupported(self, message: str) -> None:
        fallback = "treated as string" if message.startswith("Unsupported type") else "ignored"
        unknown(message, strict=self.strict, fallback=fallback)


def _applies(criterion: Criterion, base: Any) -> bool:
    plain = split_annotated(base)[0]
    kind = getattr(plain, "__origin__", plain)
    if object in criterion.accepts or not isinstance(kind, type):
        return True
    if kind is bool:
        return bool in criterion.accepts
    return issubclass(kind, criterion.accepts)


def _kind(base: Any) -> str:
    kind = getattr(base, "__origin__", base)
    return {str: "string", int: "integer", float: "float", bool: "bool", list: "list"}.get(
        kind, getattr(kind, "__name__", str(kind))
    )


def _class_name(name: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(w[:1].upper() + w[1:] for w in words if w) or "Object"
