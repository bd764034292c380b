"""The OpenAI strict dialect: canonical schemas of real types -> what OpenAI strict accepts."""

from __future__ import annotations

import datetime
import enum
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from pydantic import AnyUrl, BaseModel, Field
from typing_extensions import TypedDict

from alloy._output import JsonOutput
from alloy.errors import ConfigurationError
from alloy.providers._openai_common import openai_strict_schema
from alloy.testing.emulator._schema_rules import openai_strict_problem, walk


class Node(BaseModel):
    value: int
    children: list[Node]


class Cat(BaseModel):
    kind: Literal["cat"]
    meows: int


class Dog(BaseModel):
    kind: Literal["dog"]
    barks: int


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    """Where someone lives."""

    street: str
    city: str


class Person(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=20, pattern="^[A-Z][a-z]+$")]
    age: Annotated[int, Field(ge=0, le=150)]
    tags: set[str]
    home: Annotated[Address, Field(description="the home address")]
    site: AnyUrl
    born: datetime.date
    seen: datetime.datetime
    key: uuid.UUID
    pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]
    color: Color
    nickname: Optional[str] = None
    scores: Annotated[list[float], Field(min_length=1, max_length=3)] = []


@dataclass
class Point:
    x: float
    y: float


class Movie(TypedDict):
    title: str
    year: int


REAL_TYPES: list[Any] = [
    float,
    bool,
    int,
    str,
    list[int],
    Optional[int],
    Union[int, str],
    Point,
    Movie,
    Address,
    Person,
    Node,
    list[Point],
    list[Address],
    Literal["a", "b"],
    Color,
    tuple[Point, ...],
]


def dialect_of(tp: Any) -> dict[str, Any]:
    return openai_strict_schema(JsonOutput(tp).schema)


@pytest.mark.parametrize("tp", REAL_TYPES, ids=repr)
def test_real_types_pass_openai_strict_rules(tp: Any) -> None:
    schema = dialect_of(tp)
    assert openai_strict_problem(schema) is None
    assert schema["type"] == "object" and "anyOf" not in schema


@pytest.mark.parametrize("tp", REAL_TYPES, ids=repr)
def test_every_object_closed_and_all_required(tp: Any) -> None:
    for _, node in walk(dialect_of(tp)):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


def test_unsupported_keywords_are_left_out_and_supported_kept() -> None:
    schema = dialect_of(Person)
    props = schema["properties"]
    assert props["name"] == {"type": "string", "pattern": "^[A-Z][a-z]+$"}
    assert props["age"] == {"type": "integer", "minimum": 0, "maximum": 150}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}  # no uniqueItems
    assert props["site"] == {"type": "string"}  # format "uri" is not in OpenAI's list
    assert props["born"]["format"] == "date"
    assert props["seen"]["format"] == "date-time"
    assert props["key"]["format"] == "uuid"
    inner = props["scores"]
    assert inner["type"] == "array" and inner["minItems"] == 1 and inner["maxItems"] == 3


def test_discriminated_union_becomes_anyof_without_discriminator() -> None:
    pet = dialect_of(Person)["properties"]["pet"]
    assert "oneOf" not in pet and "discriminator" not in pet
    assert pet["anyOf"] == [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]


def test_optional_stays_required_and_nullable() -> None:
    schema = dialect_of(Person)
    assert "nickname" in schema["required"]
    assert {"type": "null"} in schema["properties"]["nickname"]["anyOf"]


def test_ref_with_siblings_is_inlined() -> None:
    home = dialect_of(Person)["properties"]["home"]
    assert "$ref" not in home
    assert home["description"] == "the home address"
    assert home["properties"] == {"street": {"type": "string"}, "city": {"type": "string"}}
    assert home["additionalProperties"] is False


def test_recursion_through_defs_is_kept() -> None:
    schema = dialect_of(Node)
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_root_recursion_ref_kept() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name", "kids"],
        "additionalProperties": False,
    }
    assert openai_strict_schema(tree) == tree


def test_optional_property_becomes_required_and_nullable() -> None:
    loose = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    out = openai_strict_schema(loose)
    assert out["required"] == ["a", "b"]
    assert out["properties"]["b"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert out["additionalProperties"] is False
    assert openai_strict_problem(out) is None


def test_single_allof_is_merged() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}], "description": "an A"}},
        "required": ["a"],
        "additionalProperties": False,
        "$defs": {
            "A": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
                "additionalProperties": False,
            }
        },
    }
    out = openai_strict_schema(schema)
    assert out["properties"]["a"]["properties"] == {"x": {"type": "integer"}}
    assert out["properties"]["a"]["description"] == "an A"
    assert openai_strict_problem(out) is None


def test_canonical_schema_is_not_modified() -> None:
    canonical = JsonOutput(Person).schema
    before = repr(canonical)
    openai_strict_schema(canonical)
    assert repr(canonical) == before


def test_root_must_be_an_object() -> None:
    with pytest.raises(ConfigurationError, match="object at the root"):
        openai_strict_schema({"type": "array", "items": {"type": "string"}})
