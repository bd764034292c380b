"""The Anthropic schema dialect: canonical schemas of real types -> what Claude accepts.

Three references: the SDK's own ``transform_schema`` (the dialect must agree with it on every
canonical schema), the emulator's strict Anthropic rule check (it must find no problem), and
the canonical schema itself (local validation still enforces what was moved to descriptions).
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from anthropic.lib._parse._transform import transform_schema
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from alloy._output import JsonOutput
from alloy.errors import ConfigurationError
from alloy.providers._anthropic_dialect import anthropic_schema
from alloy.testing.emulator._schema_rules import anthropic_problem


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Invoice:
    vendor: str
    total: float
    lines: list[str]


class Line(BaseModel):
    sku: Annotated[str, Field(min_length=3, max_length=12, pattern=r"^[A-Z0-9-]+$")]
    quantity: Annotated[int, Field(ge=1, le=100, description="How many")]
    price: Annotated[float, Field(gt=0, multiple_of=0.01)]


class Order(BaseModel):
    lines: Annotated[list[Line], Field(min_length=1, max_length=50)]
    tags: Annotated[list[str], Field(min_length=2)]
    unique: set[str]
    color: Color
    level: Level
    when: dt.datetime
    day: dt.date
    uid: uuid.UUID
    website: str = Field(json_schema_extra={"format": "uri"})
    secret: Annotated[str, Field(json_schema_extra={"format": "password"})]
    note: str | None = None
    kind: Literal["a", "b"] = "a"
    fixed: Literal["x"] = "x"


class Movie(TypedDict):
    title: str
    year: int


FORBIDDEN = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "maxItems",
    "uniqueItems",
    "default",
}

TYPES: list[Any] = [
    float,
    bool,
    int,
    str,
    list[int],
    list[Invoice],
    int | None,
    int | str,
    Invoice,
    Movie,
    Order,
    Line,
    Color,
    Level,
    Literal["yes", "no"],
    Invoice | None,
]


def walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


@pytest.mark.parametrize("tp", TYPES, ids=repr)
def test_dialect_agrees_with_the_sdk_and_passes_the_strict_rules(tp: Any) -> None:
    canonical = JsonOutput(tp).schema
    dialect = anthropic_schema(canonical)
    assert dialect == transform_schema(canonical)
    assert anthropic_problem(dialect) is None
    for node in walk(dialect):
        assert not FORBIDDEN & set(node), node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False


def test_constraints_move_into_the_description_and_stay_in_the_canonical_schema() -> None:
    canonical = JsonOutput(Order).schema
    dialect = anthropic_schema(canonical)
    line = dialect["$defs"]["Line"]["properties"]
    assert line["sku"] == {
        "type": "string",
        "description": "{maxLength: 12, minLength: 3, pattern: ^[A-Z0-9-]+$}",
    }
    assert line["quantity"]["description"] == "How many\n\n{maximum: 100, minimum: 1}"
    assert line["price"]["description"] == "{exclusiveMinimum: 0, multipleOf: 0.01}"
    order = dialect["properties"]
    assert order["lines"]["minItems"] == 1
    assert order["lines"]["description"] == "{maxItems: 50}"
    assert "minItems" not in order["tags"]
    assert order["tags"]["description"] == "{minItems: 2}"
    assert order["unique"]["description"] == "{uniqueItems: True}"
    # Allowed formats stay; others become a hint.
    assert order["when"]["format"] == "date-time"
    assert order["day"]["format"] == "date"
    assert order["uid"]["format"] == "uuid"
    assert order["website"]["format"] == "uri"
    assert "format" not in order["secret"]
    assert order["secret"]["description"] == "{format: password}"
    # Literals drop their type; nullable stays an anyOf.
    assert order["kind"] == {"enum": ["a", "b"]}
    assert order["fixed"] == {"const": "x"}
    assert order["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert order["color"] == {"$ref": "#/$defs/Color"}
    # The canonical schema still carries every constraint for local validation.
    canonical_line = canonical["$defs"]["Line"]["properties"]
    assert canonical_line["sku"]["pattern"] == r"^[A-Z0-9-]+$"
    assert canonical_line["quantity"]["maximum"] == 100


def test_input_is_not_modified() -> None:
    canonical = JsonOutput(Order).schema
    before = repr(canonical)
    anthropic_schema(canonical)
    assert repr(canonical) == before


def test_type_lists_and_one_of() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "maxLength": 3, "format": "email"},
            "b": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0}},
            "c": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["a", "b", "c"],
        "additionalProperties": False,
    }
    out = anthropic_schema(schema)
    assert out["properties"]["a"] == {
        "type": ["string", "null"],
        "format": "email",
        "description": "{maxLength: 3}",
    }
    assert out["properties"]["b"]["items"] == {"type": "integer", "description": "{minimum: 0}"}
    assert out["properties"]["c"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert anthropic_problem(out) is None


def test_objects_always_forbid_extra_keys() -> None:
    out = anthropic_schema({"type": "object", "properties": {"x": {"type": "object"}}})
    assert out["additionalProperties"] is False
    assert out["properties"]["x"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_root_ref_keeps_its_defs() -> None:
    schema = {"$ref": "#/$defs/A", "$defs": {"A": {"type": "object", "properties": {}}}}
    out = anthropic_schema(schema)
    assert out["$ref"] == "#/$defs/A"
    assert out["$defs"]["A"]["additionalProperties"] is False


def test_a_node_without_any_type_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="no 'type'"):
        anthropic_schema({"type": "object", "properties": {"x": {"description": "anything"}}})


# -- recursive types: Claude refuses recursive schemas, so the dialect unrolls them ----------


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode]


class Link(BaseModel):
    value: int
    next: Link | None = None


TreeNode.model_rebuild()
Link.model_rebuild()


def depth_of(schema: Any, key: str) -> int:
    """How many nested levels of ``key`` an unrolled schema spells out."""
    levels = 0
    node = schema
    while True:
        prop = node.get("properties", {}).get(key)
        if prop is None:
            return levels
        options = prop.get("anyOf", [prop])
        inner = [o.get("items", o) for o in options if o.get("type") != "null"]
        inner = [o for o in inner if o.get("type") == "object"]
        if not inner:
            return levels
        levels += 1
        node = inner[0]


@pytest.mark.parametrize(
    ("tp", "key"), [(TreeNode, "children"), (Link, "next"), (list[TreeNode], "")]
)
def test_recursive_types_are_unrolled_into_what_claude_accepts(tp: Any, key: str) -> None:
    from alloy.providers._anthropic_dialect import UNROLL_DEPTH

    canonical = JsonOutput(tp).schema
    assert anthropic_problem(canonical) is not None  # the emulator refuses it as Claude does
    sent = anthropic_schema(canonical)
    assert anthropic_problem(sent) is None
    if key:
        assert depth_of(sent, key) == UNROLL_DEPTH


def test_unrolled_schemas_still_take_answers_within_the_depth() -> None:
    output = JsonOutput(Link)
    value = output.parse('{"value": 1, "next": {"value": 2, "next": null}}')
    assert value == Link(value=1, next=Link(value=2))


def test_non_recursive_definitions_stay_shared() -> None:
    @dataclass
    class Leaf:
        name: str

    class Branch(BaseModel):
        leaf: Leaf
        other: Leaf
        more: list[Branch]

    Branch.model_rebuild()
    sent = anthropic_schema(JsonOutput(Branch).schema)
    assert set(sent["$defs"]) == {"Leaf"}
    assert anthropic_problem(sent) is None
