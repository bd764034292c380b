"""``alloy.providers.offline._sample``: the stand-in values the offline model and the emulator answer with.

What a stand-in promises: the value validates against the schema (pydantic's own validator, in
strict JSON mode, is the judge), the same schema and seed give the same value in any process,
and a ``pattern`` it cannot write is a ConfigurationError that names it. The types below are the
output types of the examples and the tests, and hypothesis builds many more.
"""

from __future__ import annotations

import datetime as dt
import enum
import ipaddress
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from typing_extensions import TypedDict

from alloy import command
from alloy._command import output_type_for
from alloy.compat import load_pdl, load_rail
from alloy.errors import ConfigurationError
from alloy.providers.offline._sample import _flat_draws, sample_value, sampler_for

from ..providers.output_types import City, Point, Trip


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Invoice:  # examples/03
    vendor: str
    total: float
    lines: list[str]
    due: str | None = None


@dataclass
class Topic:  # examples/04
    name: str
    weight: float


@dataclass
class Order:  # examples/10
    item: str
    quantity: int


@dataclass
class Contact:  # examples/19
    name: str
    email: str


@dataclass
class Shape:  # tests/core/test_output_types
    name: Annotated[str, Field(description="What the shape is called")]
    corners: list[Point]
    color: Color
    label: str | None = None


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Tree(BaseModel):  # a required list of itself
    label: str
    children: list[Tree]


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


class Address(BaseModel):  # tests/emulator/test_emulator_schema_rules
    street: str
    zip_code: str = Field(pattern=r"^\d{5}$")


class Registration(BaseModel):
    name: str = Field(min_length=1, max_length=50)
    age: int = Field(ge=0, le=150)
    nickname: str | None = None
    addresses: list[Address] = Field(min_length=1, max_length=3)


class Constrained(BaseModel):
    small: Annotated[int, Field(ge=3, le=9, multiple_of=3)]
    exclusive: Annotated[int, Field(gt=10, lt=13)]
    ratio: Annotated[float, Field(gt=0, lt=1)]
    tiny: Annotated[float, Field(gt=0, lt=0.001)]
    price: Annotated[float, Field(ge=0.5, le=2.5, multiple_of=0.25)]
    tenths: Annotated[float, Field(gt=0.1, lt=0.5, multiple_of=0.1)]
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")]
    slug: Annotated[str, Field(min_length=3, max_length=5, pattern=r"^[a-z]+$")]
    padded: Annotated[str, Field(min_length=12)]
    short: Annotated[str, Field(max_length=2)]
    few: Annotated[list[int], Field(min_length=2, max_length=3)]
    unique: set[int]
    negative: Annotated[int, Field(lt=0)]
    some: Annotated[dict[str, int], Field(min_length=2, max_length=3)]
    keyed: dict[Literal["x", "y"], int]


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
    network: ipaddress.IPv6Network
    nested: Invoice
    movies: list[Movie]
    anything: Any


class Sentiment(enum.Enum):  # examples/04
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    NEGATIVE = "negative"


OUTPUT_TYPES: list[Any] = [
    int,
    float,
    str,
    bool,
    dict,
    type(None),
    list[int],
    dict[str, float],
    str | None,
    Optional[int],
    Literal["only"],
    Literal["low", "medium", "high"] | None,
    Union[int, str],
    Sentiment,
    Color,
    Level,
    dt.datetime,
    uuid.UUID,
    Invoice,
    list[Topic],
    Order,
    Contact,
    City,
    Point,
    Trip,
    Shape,
    Node,
    Tree,
    LinkedItem,
    Expr,
    Pet,
    Movie,
    Registration,
    Constrained,
    Everything,
    list[Node],
    Invoice | None,
    Cat | Dog,
    tuple[int, str, bool],
]


def type_id(tp: Any) -> str:
    return getattr(tp, "__name__", repr(tp))


@pytest.mark.parametrize("tp", OUTPUT_TYPES, ids=type_id)
def test_values_validate_against_the_schema_pydantic_wrote(tp: Any) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    schema = adapter.json_schema()
    for seed in range(12):
        adapter.validate_json(json.dumps(sample_value(schema, seed=seed)), strict=True)


def strict_schema(tp: Any) -> dict[str, Any] | None:
    """The schema alloy sends for output ``tp``; None for a type it refuses (``dict``, tuples)."""
    try:
        return output_type_for(tp, has_output=True).schema
    except ConfigurationError:
        return None


@pytest.mark.parametrize("tp", [tp for tp in OUTPUT_TYPES if strict_schema(tp)], ids=type_id)
def test_values_are_answers_an_output_type_accepts(tp: Any) -> None:
    """The schema alloy sends (a primitive wrapped in ``{"value": ...}``), parsed as a reply."""
    output = output_type_for(tp, has_output=True)
    assert output.schema is not None
    for seed in range(6):
        output.parse(json.dumps(sample_value(output.schema, seed=seed)))


@pytest.mark.parametrize("tp", [Invoice, LinkedItem, Everything, Pet, Trip, Constrained])
def test_strict_openai_variant_validates(tp: Any) -> None:
    """The OpenAI strictifier (every property required, optional ones nullable)."""
    from openai.lib._pydantic import to_strict_json_schema

    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    model = tp if isinstance(tp, type) and issubclass(tp, BaseModel) else adapter
    schema = to_strict_json_schema(model)
    for seed in range(4):
        adapter.validate_json(json.dumps(sample_value(schema, seed=seed)))


RAIL = """<rail version="0.1"><output>
<string name="text" format="upper-case" on-fail-upper-case="fix"/>
<float name="score" format="min-val: 0" on-fail-min-val="fix"/>
</output></rail>"""


@pytest.mark.parametrize(
    "spec", [load_rail(RAIL), load_pdl("[{name: str, age: int}]{min: 2, max: 2}")], ids=str
)
def test_specs_from_other_tools_get_answers_they_accept(spec: Any) -> None:
    """examples/16: outputs loaded from a RAIL element and a PDL schema."""
    for seed in range(6):
        spec.parse(json.dumps(sample_value(spec.schema, seed=seed)))


# -- hypothesis: many more types -----------------------------------------------------------

ATOMS = (
    [re.escape(c) for c in "abxyz019_-. "],
    [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", r"\.", r"\-"],
    ["[a-z]", "[A-Z0-9_]", "[^a-z]", "[abc]", r"[\d.]", r"[^\s,]", "[]x]", r"[\w-]"],
)
QUANTIFIERS = ["", "", "?", "*", "+", "{2}", "{1,3}", "{2,}", "*?", "+?"]


@st.composite
def regex_bodies(draw: st.DrawFn, depth: int = 1) -> str:
    """A sequence of quantified atoms; an atom may be a group of alternatives, ``depth`` deep."""
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 3 if depth else 2))
        if kind < 3:
            atom = draw(st.sampled_from(ATOMS[kind]))
        else:
            branches = draw(st.lists(regex_bodies(depth - 1), min_size=1, max_size=3))
            atom = "(" + draw(st.sampled_from(["", "?:"])) + "|".join(branches) + ")"
        pieces.append(atom + draw(st.sampled_from(QUANTIFIERS)))
    return "".join(pieces)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """Patterns in the subset the writer promises, anchored or not."""
    start, end = draw(st.sampled_from(["", "^", r"\A"])), draw(st.sampled_from(["", "$"]))
    return start + draw(regex_bodies()) + end


# Derandomized: some generated patterns nest unbounded quantifiers, and Python's own ``re`` then
# backtracks for minutes checking the answer; a fixed draw keeps the suite's run the same.
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pattern=patterns(), seed=st.integers(0, 2**32 - 1))
def test_patterns_in_the_subset_are_written(pattern: str, seed: int) -> None:
    text = sample_value({"type": "string", "pattern": pattern}, seed=seed)
    assert re.search(pattern, text), (pattern, text)


def _int(bounds: tuple[int, int, int]) -> Any:
    low, width, step = bounds
    return Annotated[int, Field(ge=low * step, le=(low + width) * step, multiple_of=step)]


def _float(bounds: tuple[float, float, bool]) -> Any:
    low, width, exclusive = bounds
    limits = {"gt": low, "lt": low + width} if exclusive else {"ge": low, "le": low + width}
    return Annotated[float, Field(**limits)]


def _str(bounds: tuple[int, int]) -> Any:
    return Annotated[str, Field(min_length=bounds[0], max_length=bounds[0] + bounds[1])]


def _list(args: tuple[Any, int, int]) -> Any:
    item, fewest, more = args
    return Annotated[list[item], Field(min_length=fewest, max_length=fewest + more)]


def _model(fields: list[tuple[Any, bool]]) -> Any:
    spec: dict[str, Any] = {
        f"f{i}": (tp, ... if required else None) for i, (tp, required) in enumerate(fields)
    }
    return create_model("Generated", **spec)


SCALAR_TYPES = st.one_of(
    st.sampled_from(
        [int, float, str, bool, dt.date, dt.datetime, dt.time, uuid.UUID, Decimal, bytes, Color]
    ),
    st.tuples(st.integers(-50, 50), st.integers(0, 5), st.integers(1, 7)).map(_int),
    st.tuples(st.floats(-1e3, 1e3), st.floats(0.01, 1e3), st.booleans()).map(_float),
    st.tuples(st.integers(0, 30), st.integers(0, 10)).map(_str),
    patterns().map(lambda p: Annotated[str, Field(pattern=p)]),
    st.lists(st.sampled_from(["a", "b", 1, 2, True]), min_size=1, max_size=3, unique=True).map(
        lambda members: Literal[tuple(members)]
    ),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(inner, st.integers(0, 3), st.integers(0, 2)).map(_list),
        inner.map(lambda tp: Optional[tp]),
        st.tuples(inner, inner).map(lambda pair: Union[pair[0], pair[1]]),
        st.tuples(inner, inner).map(lambda pair: tuple[pair[0], pair[1]]),
        inner.map(lambda tp: dict[str, tp]),
        st.lists(st.tuples(inner, st.booleans()), min_size=1, max_size=4).map(_model),
    )


TYPES = st.recursive(SCALAR_TYPES, _containers, max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tp=TYPES, seed=st.integers(0, 2**32 - 1))
def test_values_validate_for_generated_types(tp: Any, seed: int) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    adapter.validate_json(json.dumps(sample_value(adapter.json_schema(), seed=seed)), strict=True)


# -- determinism ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_value_and_seeds_differ() -> None:
    schema = TypeAdapter(Everything).json_schema()
    assert sample_value(schema, seed=3) == sample_value(schema, seed=3)
    assert len({json.dumps(sample_value(schema, seed=s)) for s in range(5)}) == 5


@pytest.mark.parametrize("tp", OUTPUT_TYPES, ids=type_id)
def test_a_sampler_worked_out_once_gives_what_the_walk_gives(tp: Any) -> None:
    """``sampler_for`` (what the offline model binds once per output) makes the walk's values:
    flat records and wrapped primitives by their shortcut, everything else by the walk."""
    schemas = [TypeAdapter(tp).json_schema(), strict_schema(tp)]
    for schema in filter(None, schemas):
        sample = sampler_for(schema)
        for seed in (0, 1, 7, 2**31 + 5, 2**64 + 3):
            assert sample(seed) == sample_value(schema, seed=seed)


def test_the_shortcut_is_taken_only_for_required_plain_scalars() -> None:
    def flat(schema: dict[str, Any]) -> bool:
        return _flat_draws(schema) is not None

    assert flat(strict_schema(float) or {})
    assert flat(TypeAdapter(Order).json_schema())
    assert not flat({"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}}})
    assert not flat({"type": "object", "properties": {"a": {"type": "string"}}, "required": []})
    assert not flat({"type": "object", "properties": {}, "required": []})
    assert not flat({"type": "object", "properties": {"a": {"enum": ["x"]}}, "required": ["a"]})


CHILD = """
import json, sys
from dataclasses import dataclass
from alloy import command
from alloy.providers.offline._sample import sample_value

@dataclass
class Order:
    item: str
    quantity: int

make = command(output=Order, model="offline")(lambda text: f"Take the order: {text}")
print(json.dumps([sample_value(json.loads(sys.argv[1]), seed=7), vars(make("two apples"))]))
"""


def test_the_same_prompt_gives_the_same_value_in_other_processes() -> None:
    """No ``hash()`` (salted per process) anywhere between the prompt and the value."""
    schema = TypeAdapter(Everything).json_schema()
    make = command(output=Order, model="offline")(lambda text: f"Take the order: {text}")
    here = json.loads(json.dumps([sample_value(schema, seed=7), vars(make("two apples"))]))
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        child = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(schema)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(child.stdout) == here


def test_the_schema_is_left_as_it_was() -> None:
    schema = TypeAdapter(Everything).json_schema()
    before = json.dumps(schema, sort_keys=True)
    sample_value(schema)
    assert json.dumps(schema, sort_keys=True) == before


# -- recursion and raw schemas -------------------------------------------------------------


def test_recursion_ends_on_a_required_nullable_self_reference() -> None:
    value = sample_value(TypeAdapter(LinkedItem).json_schema())
    depth = 0
    while value is not None:
        value = value["next"]
        depth += 1
    assert 1 <= depth < 10


def test_a_schema_with_no_finite_value_is_a_configuration_error() -> None:
    endless = {
        "$ref": "#/$defs/A",
        "$defs": {
            "A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]}
        },
    }
    with pytest.raises(ConfigurationError, match="requires itself without end"):
        sample_value(endless)


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": ["integer", "null"]}, lambda v: isinstance(v, int)),
        ({"type": "null"}, lambda v: v is None),
        ({"const": {"a": 1}}, lambda v: v == {"a": 1}),
        ({"enum": [1, 2]}, lambda v: v in (1, 2)),
        ({"type": "string", "format": "email"}, lambda v: re.fullmatch(r"\w+@example\.com", v)),
        ({"type": "string", "format": "uuid1"}, lambda v: uuid.UUID(v).version == 1),
        ({"type": "string", "format": "time"}, lambda v: dt.time.fromisoformat(v)),
        ({"type": "integer", "minimum": 5, "maximum": 5}, lambda v: v == 5),
        ({"type": "integer", "multipleOf": 7, "minimum": 8}, lambda v: v % 7 == 0 and v >= 8),
        ({"type": "integer", "multipleOf": 1.5, "minimum": 1}, lambda v: v % 3 == 0 and v >= 3),
        ({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, lambda v: 1 < v < 2),
        ({"type": "number", "minimum": 1, "exclusiveMinimum": True}, lambda v: v > 1),
        ({"type": "array", "items": {"type": "string"}, "minItems": 4}, lambda v: len(v) >= 4),
        ({"type": "array", "maxItems": 0}, lambda v: v == []),
        (
            {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "minItems": 3},
            lambda v: sorted(v) == [1, 2, 3],
        ),
        ({"type": "object", "additionalProperties": False}, lambda v: v == {}),
        ({"type": "object", "minProperties": 2}, lambda v: len(v) >= 2),
        ({"type": "string", "pattern": "(?i)^[a-z]+$"}, lambda v: v.isalpha()),
        ({"type": "string", "pattern": "^a{,2}b$"}, lambda v: re.fullmatch("a{0,2}b", v)),
        ({"type": "string", "pattern": r"^\d+$", "minLength": 9}, lambda v: len(v) >= 9),
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
    for seed in range(5):
        assert check(sample_value(schema, seed=seed))


# -- patterns outside the subset -----------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [r"^(?=.*\d)(?=.*[A-Z]).{8,}$", r"^(ab|cd)\1$", r"^\p{L}+$", r"(?x) a b c (?# comment) d"],
)
def test_a_pattern_outside_the_subset_is_a_clear_error(pattern: str) -> None:
    with pytest.raises(ConfigurationError, match="cannot write a string matching") as caught:
        sample_value({"type": "string", "pattern": pattern})
    assert f"'{pattern}'" in str(caught.value)


def test_a_pattern_outside_the_subset_passes_when_a_plain_string_fits() -> None:
    """Lookarounds are beyond the writer, but a plain word matches this one."""
    assert re.fullmatch(r"(?!\d)\w+", sample_value({"type": "string", "pattern": r"^(?!\d)\w+$"}))


class Account(BaseModel):
    model_config = ConfigDict(regex_engine="python-re")
    password: Annotated[str, Field(pattern=r"^(?=.*\d)(?=.*[A-Z]).{8,}$")]


def test_the_offline_model_names_a_pattern_it_cannot_write() -> None:
    make = command(output=Account, model="offline")(lambda: "Make an account")
    with pytest.raises(ConfigurationError, match="cannot write a string matching") as caught:
        make()
    assert r"'^(?=.*\d)(?=.*[A-Z]).{8,}$'" in str(caught.value)
