"""The Gemini dialect: canonical schemas of real types -> what ``responseJsonSchema`` accepts."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from alloy._output import JsonOutput
from alloy.providers._gemini_dialect import GEMINI_KEYWORDS, gemini_schema
from alloy.providers.offline._sample import sample_value
from alloy.testing.emulator._schema_rules import gemini_problem, walk


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: Annotated[int, Field(ge=1, le=9)]
    name: Annotated[str, Field(min_length=1, max_length=20, pattern=r"^[A-Z]")]


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    color: Color | None = None
    level: Level
    born: dt.date
    id: uuid.UUID
    tags: Annotated[list[str], Field(max_length=3, min_length=1)] = []
    weight: Annotated[float, Field(gt=0, multiple_of=0.5)]
    flag: Literal[True] = True


class Node(BaseModel):
    value: int
    children: list[Node] = []


@dataclasses.dataclass
class Invoice:
    vendor: str
    total: float
    lines: list[str]


class Movie(TypedDict):
    title: str
    year: int


class Described(BaseModel):
    """A thing with described fields."""

    city: Annotated[Color, Field(description="The colour")]
    note: Annotated[str, Field(description="A note", min_length=2)]


TYPES: list[Any] = [
    float,
    bool,
    str,
    list[int],
    int | None,
    int | str,
    Literal["a", "b"],
    Literal[1, 2],
    Color,
    Invoice,
    Movie,
    Pet,
    Node,
    Described,
    list[Pet],
]


@pytest.mark.parametrize("tp", TYPES, ids=lambda t: getattr(t, "__name__", str(t)))
@pytest.mark.parametrize("ordering", [False, True])
def test_real_types_become_acceptable_schemas(tp: Any, ordering: bool) -> None:
    canonical = JsonOutput(tp).schema
    sent = gemini_schema(canonical, property_ordering=ordering)
    assert gemini_problem(sent) is None
    for _, node in walk(sent):
        assert set(node) <= GEMINI_KEYWORDS
    # A value sampled from what Gemini sees is one the canonical schema promised (when the
    # moved constraints happen to hold), so the two describe the same shape.
    sample_value(sent, seed=1)


def test_input_is_not_modified() -> None:
    canonical = JsonOutput(Pet).schema
    before = repr(canonical)
    gemini_schema(canonical, property_ordering=True)
    assert repr(canonical) == before


def test_unsupported_keywords_move_into_the_description() -> None:
    sent = gemini_schema(JsonOutput(Pet).schema)
    cat = sent["$defs"]["Cat"]["properties"]
    assert cat["lives"] == {"maximum": 9, "minimum": 1, "type": "integer"}
    assert cat["name"]["type"] == "string"
    assert cat["name"]["description"] == '{maxLength: 20, minLength: 1, pattern: "^[A-Z]"}'
    weight = sent["properties"]["weight"]
    assert weight["description"] == "{exclusiveMinimum: 0, multipleOf: 0.5}"
    tags = sent["properties"]["tags"]
    assert (tags["minItems"], tags["maxItems"]) == (1, 3)  # array bounds are supported


def test_existing_description_is_kept_and_extended() -> None:
    sent = gemini_schema(JsonOutput(Described).schema)
    note = sent["properties"]["note"]
    assert note["description"] == "A note\n\n{minLength: 2}"


def test_ref_with_siblings_is_wrapped() -> None:
    sent = gemini_schema(JsonOutput(Described).schema)
    city = sent["properties"]["city"]
    assert city == {"description": "The colour", "anyOf": [{"$ref": "#/$defs/Color"}]}


def test_const_enum_oneof_and_discriminator() -> None:
    sent = gemini_schema(JsonOutput(Pet).schema)
    assert sent["$defs"]["Cat"]["properties"]["kind"] == {"enum": ["cat"], "type": "string"}
    pet = sent["properties"]["pet"]
    assert pet == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}
    assert sent["$defs"]["Level"]["enum"] == [1, 2]
    flag = sent["properties"]["flag"]
    assert flag == {"type": "boolean", "description": "{const: true}"}


def test_nullable_types_and_formats_are_kept() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"], "format": "date"}}}
    assert gemini_schema(schema)["properties"]["a"] == {
        "type": ["string", "null"],
        "format": "date",
    }


def test_property_ordering_for_gemini_2_0() -> None:
    sent = gemini_schema(JsonOutput(Invoice).schema, property_ordering=True)
    assert sent["propertyOrdering"] == ["vendor", "total", "lines"]
    assert "propertyOrdering" not in gemini_schema(JsonOutput(Invoice).schema)


def test_recursion_through_defs_is_kept() -> None:
    sent = gemini_schema(JsonOutput(Node).schema)
    assert sent["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in sent["$defs"]


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"allOf": [{"$ref": "#/$defs/A"}]}, {"anyOf": [{"$ref": "#/$defs/A"}]}),
        (
            {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
            {"type": "array", "items": {"type": "integer"}, "description": "{uniqueItems: true}"},
        ),
        ({"enum": [True, None]}, {"description": "{enum: [true, null]}"}),
        (
            {"$ref": "#/$defs/A", "$comment": "x"},
            {"description": '{$comment: "x"}', "anyOf": [{"$ref": "#/$defs/A"}]},
        ),
        (
            {"type": "string", "not": {"const": "x"}},
            {"type": "string", "description": '{not: {"const": "x"}}'},
        ),
    ],
)
def test_edge_nodes(node: dict[str, Any], expected: dict[str, Any]) -> None:
    result = gemini_schema(node)
    assert result == expected
    assert gemini_problem(result) is None
