"""``alloy._sample.sample_value`` against pydantic: every sampled value must validate.

Each case builds the schema with ``TypeAdapter(T).json_schema()`` (and, where alloy will send
it, the OpenAI-strict variant), samples it under several seeds and validates the value with
the same adapter, so the check is exactly "pydantic accepts what the schema promised".
"""

from __future__ import annotations

import datetime as dt
import enum
import ipaddress
import json
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

from alloy._sample import sample_value


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


@dataclass
class WithDefaults:
    name: str
    tags: list[str] = field(default_factory=list)
    note: str | None = None


class Node(BaseModel):
    value: int
    children: list[Node] = []


class LinkedItem(BaseModel):
    label: str
    next: LinkedItem | None


class Expr(BaseModel):
    op: Literal["add", "mul"]
    left: int | Expr
    right: int | Expr


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: Annotated[int, Field(ge=1, le=9)]


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


class Movie(TypedDict):
    title: str
    year: int


class Constrained(BaseModel):
    small: Annotated[int, Field(ge=3, le=9, multiple_of=3)]
    exclusive: Annotated[int, Field(gt=10, lt=13)]
    ratio: Annotated[float, Field(gt=0, lt=1)]
    price: Annotated[float, Field(ge=0.5, le=2.5, multiple_of=0.25)]
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")]
    slug: Annotated[str, Field(min_length=3, max_length=5, pattern=r"^[a-z]+$")]
    padded: Annotated[str, Field(min_length=12)]
    short: Annotated[str, Field(max_length=2)]
    few: Annotated[list[int], Field(min_length=2, max_length=3)]
    unique: set[int]
    negative: Annotated[int, Field(lt=0)]


class Everything(BaseModel):
    when: dt.datetime
    day: dt.date
    at: dt.time
    span: dt.timedelta
    ident: uuid.UUID
    amount: Decimal
    raw: bytes
    mapping: dict[str, int]
    pair: tuple[int, str]
    many: tuple[int, ...]
    color: Color
    level: Level
    choice: Literal["x", "y", 3]
    maybe: int | None
    either: int | str
    address: ipaddress.IPv4Address
    nested: Invoice
    movies: list[Movie]
    anything: Any


CASES: list[Any] = [
    int,
    float,
    str,
    bool,
    type(None),
    list[int],
    dict[str, float],
    str | None,
    Literal["only"],
    Color,
    Level,
    dt.datetime,
    dt.date,
    uuid.UUID,
    Invoice,
    WithDefaults,
    Node,
    LinkedItem,
    Expr,
    Pet,
    Movie,
    Constrained,
    Everything,
    list[Node],
    Invoice | None,
    Cat | Dog,
    tuple[int, str, bool],
]


@pytest.mark.parametrize("tp", CASES, ids=lambda t: getattr(t, "__name__", repr(t)))
@pytest.mark.parametrize("seed", [0, 1, 2, 7, 42])
def test_sampled_value_validates(tp: Any, seed: int) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    schema = adapter.json_schema()
    value = sample_value(schema, seed=seed)
    json.dumps(value)  # the sample is plain JSON
    adapter.validate_python(value)


@pytest.mark.parametrize("tp", [Invoice, LinkedItem, Everything, Pet])
def test_strict_openai_variant_validates(tp: Any) -> None:
    """The OpenAI strictifier (all properties required, nullables) still samples validly."""
    from openai.lib._pydantic import to_strict_json_schema

    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    schema = (
        to_strict_json_schema(adapter)
        if isinstance(tp, type) and issubclass(tp, BaseModel)
        else adapter.json_schema()
    )
    for seed in range(3):
        adapter.validate_python(sample_value(schema, seed=seed))


def test_deterministic_for_a_seed() -> None:
    schema = TypeAdapter(Everything).json_schema()
    assert sample_value(schema, seed=3) == sample_value(schema, seed=3)
    assert sample_value(schema, seed=3) != sample_value(schema, seed=4)


def test_does_not_mutate_schema() -> None:
    schema = TypeAdapter(Node).json_schema()
    before = json.dumps(schema, sort_keys=True)
    sample_value(schema)
    assert json.dumps(schema, sort_keys=True) == before


def test_recursion_terminates_on_required_self_reference() -> None:
    """``next`` is required and nullable: the sampler must end the chain with null."""
    value = sample_value(TypeAdapter(LinkedItem).json_schema())
    depth = 0
    while value is not None:
        value = value["next"]
        depth += 1
    assert 1 <= depth < 10


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": ["integer", "null"]}, lambda v: isinstance(v, int)),
        ({"type": "null"}, lambda v: v is None),
        ({"const": {"a": 1}}, lambda v: v == {"a": 1}),
        ({"enum": [1, 2]}, lambda v: v in (1, 2)),
        ({"type": "string", "format": "email"}, lambda v: "@" in v),
        ({"type": "string", "format": "uri"}, lambda v: v.startswith("https://")),
        ({"type": "string", "format": "time"}, lambda v: len(v) == 8),
        ({"type": "integer", "minimum": 5, "maximum": 5}, lambda v: v == 5),
        ({"type": "integer", "multipleOf": 7, "minimum": 8}, lambda v: v % 7 == 0 and v >= 8),
        ({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, lambda v: 1 < v < 2),
        ({"type": "array", "items": {"type": "string"}, "minItems": 4}, lambda v: len(v) >= 4),
        ({"type": "array", "maxItems": 0}, lambda v: v == []),
        ({"type": "string", "pattern": "(ab|cd)+x?"}, lambda v: v[:2] in ("ab", "cd")),
        ({"type": "string", "pattern": "[^a-z]{2}"}, lambda v: len(v) >= 2),
        ({"type": "object", "additionalProperties": False}, lambda v: v == {}),
        (
            {
                "allOf": [
                    {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                ]
            },
            lambda v: isinstance(v["a"], int) and isinstance(v["b"], str),
        ),
        (
            {"$ref": "#/definitions/X", "definitions": {"X": {"type": "boolean"}}},
            lambda v: isinstance(v, bool),
        ),
        (
            {
                "type": "OBJECT",
                "properties": {"n": {"type": "INTEGER", "nullable": True}},
                "required": ["n"],
            },
            lambda v: isinstance(v["n"], int),
        ),
        ({}, lambda v: v is not None),
    ],
)
def test_raw_schemas(schema: dict[str, Any], check: Any) -> None:
    assert check(sample_value(schema))


def test_the_seeded_source_stays_in_range_and_spreads() -> None:
    from alloy._sample import SplitMix

    rng = SplitMix(2026)
    assert [SplitMix(5).bits64() for _ in range(2)] == [SplitMix(5).bits64()] * 2
    assert {rng.randrange(3) for _ in range(200)} == {0, 1, 2}
    assert {rng.randint(-2, 2) for _ in range(200)} == {-2, -1, 0, 1, 2}
    floats = [rng.random() for _ in range(1000)]
    assert all(0.0 <= f < 1.0 for f in floats) and 0.4 < sum(floats) / 1000 < 0.6
    assert all(1.5 <= rng.uniform(1.5, 2.5) <= 2.5 for _ in range(100))
    huge = 10**30
    assert all(0 <= rng.randrange(huge) < huge for _ in range(100))
    assert rng.getrandbits(128) < 1 << 128 and rng.getrandbits(3) < 8
    with pytest.raises(ValueError, match="empty range"):
        rng.randrange(0)
    with pytest.raises(ValueError, match="empty range"):
        rng.randint(3, 2)


class Tier(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclass
class Flat:
    name: str
    age: int
    score: float
    active: bool
    tier: Tier
    kind: Literal["a", "b", "c"]


@dataclass
class Nested:
    flat: Flat
    note: str


@pytest.mark.parametrize("tp", [Flat, Nested, Tier, int, float, str, bool, Literal[1, 2]])
def test_plain_schemas_sample_directly_and_exactly_as_the_walk_does(tp: Any) -> None:
    """Output schemas of required scalar fields skip the walk, with the same values per seed."""
    from alloy._command import output_type_for
    from alloy._sample import SplitMix, _direct_sampler, _Sampler

    output = output_type_for(tp, has_output=True)
    schema = output.schema
    direct = _direct_sampler(schema)
    assert direct is not None
    for seed in range(25):
        walked = _Sampler(schema, SplitMix(seed)).sample(schema, 0)
        assert direct(SplitMix(seed)) == walked == sample_value(schema, seed=seed)
        output.parse(json.dumps(walked))  # and it is a valid answer


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 3},
        {"type": "integer", "minimum": 5},
        {"type": ["string", "null"]},
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": []},
        {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"$ref": "#/$defs/A", "$defs": {"A": {"type": "string"}}},
        {"type": "STRING"},
        {"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}},
        TypeAdapter(Node).json_schema(),
        TypeAdapter(LinkedItem).json_schema(),
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "required": ["a"],
            "$defs": {
                "A": {
                    "type": "object",
                    "properties": {"a": {"$ref": "#/$defs/A"}},
                    "required": ["a"],
                }
            },
        },
    ],
)
def test_anything_else_is_walked(schema: dict[str, Any]) -> None:
    from alloy._sample import _direct_sampler

    assert _direct_sampler(schema) is None
