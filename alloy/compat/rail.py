"""Load a Guardrails RAIL ``<output>`` element as an alloy output type.

Elements become a TypedDict (built at load time) whose fields carry their ``description`` (it
flows into the JSON Schema) and their validators with the ``on-fail-<validator>`` actions, so
the result works anywhere an output type does::

    @command(output=load_rail(RAIL))
    def write(topic: str) -> str: ...

Values come back as dicts and lists, as RAIL describes them. Validators are read from the
``validators`` attribute (Guardrails 0.5 and later) and from ``format`` (where Guardrails 0.4 and
earlier read them); hub names such as ``guardrails/two_words`` and the ``on-fail-guardrails_two_words``
spelling are understood. A validator without an ``on-fail-*`` attribute only records its
failures (``noop``), as in Guardrails, and ``fix`` repairs as Guardrails' validators do (see
``_guardrails``). The root may be an object (children of ``<output>``), or another type:
``<output type="string">`` is plain text, ``<output type="list">`` a list, and so on.
``<choice discriminator="...">`` with ``<case name="...">`` children is a discriminated union.

Unsupported tags and attributes are, as RAIL specifies, treated leniently by default: an
unknown type becomes a string without checks and anything else unknown is ignored, with a
:class:`~alloy.checks.SpecWarning`; validators alloy does not implement (hub validators) are
named in one warning per spec. With ``strict="true"`` on ``<output>`` (or
``load_rail(..., strict=True)``) each is a ConfigurationError.

A malformed or hostile spec is a ConfigurationError that says where: a DOCTYPE is refused (its
entities could expand without bound, or read files), and elements may nest 32 levels deep.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union, cast

from typing_extensions import NotRequired

from .._output import OutputType
from ..checks import Action, CheckedOutput, Criterion, checked
from ..checks._criterion import ACTIONS
from ..checks._plan import annotated, make_typeddict, split_annotated
from ..checks._spec import make_criterion, normalize, split_format, unknown
from ..errors import ConfigurationError
from ._guardrails import as_guardrails_fix, temporal
from ._shared import MAX_DEPTH, TypeNames, open_json, surrogate_at, too_deep

__all__ = ["RailText", "load_rail"]

_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "float": float,
    "bool": bool,
    "boolean": bool,
    "url": str,
    "email": str,
    "percentage": str,
    "pythoncode": str,
    "sql": str,
}
#: Temporal tags and the attribute holding each one's strptime pattern.
_TEMPORAL = {
    "date": ("date", "date-format"),
    "time": ("time", "time-format"),
    "date-time": ("date-time", "datetime-format"),
    "datetime": ("date-time", "datetime-format"),
}
_COMMON = frozenset({"name", "description", "format", "validators", "required"})
_EXTRA = {
    "enum": {"values"},
    "date": {"date-format"},
    "time": {"time-format"},
    "date-time": {"datetime-format"},
    "datetime": {"datetime-format"},
    "choice": {"discriminator"},
}
_OUTPUT_ATTRIBUTES = frozenset({"strict", "type", "format", "validators", "description", "name"})
#: Passive stand-in for an action the criterion itself cannot carry (``fix`` without a fix).
_PASSIVE: Action = "noop"


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
    kind = (output.get("type") or "object").strip().lower()
    known = _OUTPUT_ATTRIBUTES | _EXTRA.get(kind, set())
    loader.check_attributes(output, "<output>", known)
    children = list(output)
    result: OutputType
    if kind == "string":
        if children:
            raise ConfigurationError('<output type="string"> cannot also have child elements')
        criteria = loader.criteria(output, "the answer", str)
        result = checked(RailText(output.get("description")), *criteria)
    elif kind == "object":
        root = (
            loader.mapping(output, "RailOutput", "", 0)
            if children
            else open_json(dict, output.get("description"))
        )
        root_criteria = loader.criteria(output, "the answer", dict)
        result = CheckedOutput(annotated(root, tuple(root_criteria)))
    else:  # another RAIL type at the root: <output> is read as that element
        element = ET.Element(kind, {k: v for k, v in output.attrib.items() if k != "strict"})
        element.attrib.pop("type", None)
        element.extend(children)
        tp, _ = loader.field(element, "the answer", 0)
        result = CheckedOutput(tp)
    loader.report_unknown()
    return result


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
        #: Validators named in the spec that alloy does not implement: "name (at path)".
        self.unknown: list[str] = []

    # -- elements --
    def field(self, el: ET.Element, where: str, depth: int) -> tuple[Any, bool]:
        """(annotated type, may be dropped) for one element inside ``depth`` containers."""
        tag = el.tag.lower()
        known = _COMMON | _EXTRA.get(tag, set())
        self.check_attributes(el, f"<{el.tag}> at {where}", known)
        if tag in ("object", "list", "choice") and depth >= MAX_DEPTH:
            raise ConfigurationError(f"<{el.tag}> at {where}: {too_deep()}")
        description = el.get("description")
        base: Any
        if tag == "object":
            if len(el):
                base = self.mapping(el, _class_name(el.get("name") or where), where, depth + 1)
            else:
                base = open_json(dict, description)
        elif tag == "list":
            base = self.sequence(el, where, depth + 1)
        elif tag == "choice":
            base = self.choice(el, where, depth + 1)
        elif tag == "enum":
            values = [v.strip() for v in (el.get("values") or "").split(",") if v.strip()]
            if not values:
                raise ConfigurationError(f'<enum> at {where} needs values="a, b, c"')
            base = Literal.__getitem__(tuple(values))
        elif tag in _TEMPORAL:
            kind, pattern = _TEMPORAL[tag]
            base = temporal(kind, el.get(pattern))
        elif tag in _SCALARS:
            base = _SCALARS[tag]
        else:
            self.unsupported(f"Unsupported type: {el.tag} (at {where})")
            return str, False
        criteria = self.criteria(el, where, base)
        metadata: list[Any] = list(criteria)
        if description and tag not in ("object", "choice"):
            from pydantic import Field

            metadata.insert(0, Field(description=description))
        optional = not _flag(el.get("required", "true"), f"required at {where}")
        droppable = optional or any(c.on_fail == "filter" for c in criteria)
        tp = Optional[base] if optional else base  # noqa: UP045 - a runtime type expression
        return annotated(tp, tuple(metadata)), droppable

    def mapping(self, el: ET.Element, name: str, where: str, depth: int) -> Any:
        fields = self.fields(el, where, depth)
        return make_typeddict(self.names.unique(name), fields, el.get("description"))

    def fields(
        self, el: ET.Element, where: str, depth: int, first: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The fields of an object (or a choice's case), after the ``first`` ones."""
        fields: dict[str, Any] = dict(first or {})
        prefix = f"{where}." if where else ""
        for child in el:
            key = child.get("name")
            if not key:
                raise ConfigurationError(f"<{child.tag}> inside {where or '<output>'} needs a name")
            if key in fields:
                raise ConfigurationError(f"Duplicate field name {key!r} in {where or '<output>'}")
            tp, droppable = self.field(child, prefix + key, depth)
            fields[key] = NotRequired[tp] if droppable else tp
        return fields

    def sequence(self, el: ET.Element, where: str, depth: int) -> Any:
        children = list(el)
        if len(children) > 1:
            self.unsupported(
                f"<list> at {where} has {len(children)} child elements; one is allowed"
            )
        if not children:
            return open_json(list, el.get("description"))
        item, _ = self.field(children[0], f"{where}[]", depth)
        return list[item]  # type: ignore[valid-type]

    def choice(self, el: ET.Element, where: str, depth: int) -> Any:
        """A ``<choice discriminator="d">``: one object per ``<case name="c">``, told apart by
        its ``d`` field holding ``c`` (RAIL 0.2 and later, OpenAPI's discriminated union)."""
        from pydantic import Field

        discriminator = el.get("discriminator")
        if not discriminator:
            raise ConfigurationError(
                f'<choice> at {where} needs a discriminator="..." attribute: the field that '
                "holds the name of the chosen case"
            )
        options = []
        for case in el:
            name = case.get("name")
            if case.tag.lower() != "case" or not name:
                raise ConfigurationError(
                    f'<choice> at {where} holds only <case name="..."> elements, got <{case.tag}>'
                )
            self.check_attributes(case, f"<case> at {where}", {"name", "description"})
            first = {discriminator: Literal.__getitem__(name)}
            fields = self.fields(case, where, depth, first)
            label = _class_name(f"{el.get('name') or where} {name}")
            options.append(
                make_typeddict(self.names.unique(label), fields, case.get("description"))
            )
        if not options:
            raise ConfigurationError(f"<choice> at {where} has no <case> elements")
        if len(options) == 1:
            return options[0]
        union = Union.__getitem__(tuple(options))
        return annotated(union, (Field(discriminator=discriminator),))

    # -- criteria --
    def criteria(self, el: ET.Element, where: str, base: Any) -> list[Criterion]:
        """The validators in ``validators`` and ``format``, each with its on-fail action."""
        actions = {
            _key(k[len("on-fail-") :]): v for k, v in el.attrib.items() if k.startswith("on-fail-")
        }
        out: list[Criterion] = []
        used: set[str] = set()
        for attribute in ("validators", "format"):
            spec = el.get(attribute) or ""
            for written, args, kwargs in split_format(spec):
                keys = _on_fail_keys(written)
                used |= keys
                action = next((actions[k] for k in keys if k in actions), "noop")
                criterion = self.criterion(el, where, written, args, kwargs, action, attribute)
                if criterion is None:
                    continue
                if not _applies(criterion, base):
                    self.unsupported(
                        f"Criterion {criterion.name} does not apply to {_kind(base)} at {where}"
                    )
                    continue
                out.append(criterion)
        for key in actions.keys() - used:
            self.unsupported(f"on-fail-{key} at {where} names no validator of the element")
        return out

    def criterion(
        self,
        el: ET.Element,
        where: str,
        written: str,
        args: list[Any],
        kwargs: dict[str, Any],
        action: str,
        attribute: str,
    ) -> Criterion | None:
        """The criterion ``written`` names, or None (recorded as unknown) when alloy has none."""
        name = normalize(written)
        if action not in ACTIONS:
            raise ConfigurationError(
                f"on-fail-{name}={action!r} at {where}: use one of {', '.join(ACTIONS)}"
            )
        guardrails_fix = action in ("fix", "fix_reask")
        try:
            criterion = make_criterion(
                name, args, kwargs, _PASSIVE if guardrails_fix else cast(Action, action)
            )
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"<{el.tag}> at {where}, {attribute}={el.get(attribute)!r}: {exc}"
            ) from None
        if criterion is None:
            self.unknown.append(f"{written} (at {where})")
            return None
        return as_guardrails_fix(criterion, cast(Action, action)) if guardrails_fix else criterion

    def report_unknown(self) -> None:
        """One warning (or, when strict, one error) naming every validator alloy lacks."""
        if self.unknown:
            unknown(
                "RAIL validators alloy does not implement: " + ", ".join(self.unknown),
                strict=self.strict,
                fallback="they are not checked",
            )

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


def _key(name: str) -> str:
    """An on-fail attribute's validator name, compared without case, ``_`` or ``-``."""
    return name.strip().lower().replace("_", "-")


def _on_fail_keys(written: str) -> set[str]:
    """The names an ``on-fail-*`` attribute may give a validator written as ``written``:
    Guardrails' own (``guardrails/two_words`` -> ``guardrails_two_words``) and the RAIL name."""
    alias = written.strip().removeprefix("hub://")
    return {_key(alias.replace("/", "_")), _key(normalize(written)), _key(alias)}


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
