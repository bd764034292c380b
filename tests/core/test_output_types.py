"""Every supported output type: the schema alloy sends, and a round trip through a command."""

from __future__ import annotations

import datetime as dt
import enum
import json
import typing
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from alloy import ConfigurationError, ParseError, command
from alloy._output import eager
from alloy.checks import UpperCase
from alloy.testing import json_reply, override_model, script

from ..conftest import Call


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    """A point on the plane."""

    x: float
    y: float


@dataclass
class Shape:
    name: Annotated[str, Field(description="What the shape is called")]
    corners: list[Point]
    color: Color
    label: str | None = None


class Person(TypedDict):
    name: str
    age: int


class Review(BaseModel):
    """A product review."""

    stars: int = Field(description="1 to 5")
    text: str
    tags: list[str] = []


@dataclass
class Node:
    value: int
    children: list[Node] = field(default_factory=list)


def roundtrip(call: Call, output: Any, payload: Any) -> Any:
    @command(output=output)
    def make() -> str:
        return "make it"

    with override_model(script(json.dumps(payload))):
        return call(make)


PRIMITIVES = [
    (int, {"type": "integer"}, 7),
    (float, {"type": "number"}, 49.99),
    (str, {"type": "string"}, "hi"),
    (bool, {"type": "boolean"}, True),
]


@pytest.mark.parametrize(("tp", "inner", "value"), PRIMITIVES)
def test_primitives_are_wrapped_as_value(
    call: Call, tp: type, inner: dict[str, Any], value: Any
) -> None:
    @command(output=tp)
    def make() -> str:
        return "x"

    assert make.schema == {
        "type": "object",
        "properties": {"value": inner},
        "required": ["value"],
        "additionalProperties": False,
    }
    assert roundtrip(call, tp, {"value": value}) == value


def test_float_accepts_an_integer_value(call: Call) -> None:
    assert roundtrip(call, float, {"value": 49}) == 49.0


def test_dataclass_schema_is_strict_and_carries_descriptions() -> None:
    @command(output=Shape)
    def make() -> str:
        return "x"

    schema = make.schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["required"] == ["name", "corners", "color", "label"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["name"] == {
        "type": "string",
        "description": "What the shape is called",
    }
    assert schema["properties"]["label"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert schema["$defs"]["Point"]["description"] == "A point on the plane."
    assert schema["$defs"]["Point"]["additionalProperties"] is False
    assert schema["$defs"]["Color"] == {"enum": ["red", "green"], "type": "string"}
    assert "title" not in json.dumps(schema)


def test_dataclass_round_trip(call: Call) -> None:
    shape = roundtrip(
        call,
        Shape,
        {
            "name": "tri",
            "corners": [{"x": 0, "y": 0}, {"x": 1, "y": 0.5}],
            "color": "red",
            "label": None,
        },
    )
    assert shape == Shape("tri", [Point(0, 0), Point(1, 0.5)], Color.RED, None)


def test_typeddict_round_trip(call: Call) -> None:
    assert roundtrip(call, Person, {"name": "Ada", "age": 36}) == {"name": "Ada", "age": 36}


def test_pydantic_model_round_trip_and_schema(call: Call) -> None:
    review = roundtrip(call, Review, {"stars": 5, "text": "great", "tags": ["a"]})
    assert review == Review(stars=5, text="great", tags=["a"])

    @command(output=Review)
    def make() -> str:
        return "x"

    assert make.schema is not None
    assert make.schema["description"] == "A product review."
    assert make.schema["required"] == ["stars", "text", "tags"]
    assert make.schema["properties"]["stars"]["description"] == "1 to 5"


def test_list_of_dataclasses(call: Call) -> None:
    points = roundtrip(call, list[Point], {"value": [{"x": 1, "y": 2}]})
    assert points == [Point(1, 2)]


def test_nested_lists(call: Call) -> None:
    assert roundtrip(call, list[list[int]], {"value": [[1], [2, 3]]}) == [[1], [2, 3]]


def test_iterables_are_read_whole_so_a_bad_item_is_reasked(call: Call) -> None:
    @command(output=Iterable[int])
    def numbers() -> str:
        return "Some numbers."

    model = script(json_reply({"value": [1, "two"]}), json_reply({"value": [1, 2]}))
    with override_model(model):
        assert call(numbers) == [1, 2]  # a list, not a lazy iterator that fails later
    assert len(model.requests) == 2
    assert numbers.schema == command(output=list[int])(lambda: "x").schema
    assert numbers.output_type.expected == "Iterable[int]"
    assert eager(Annotated[Iterator[str], "note"]) == Annotated[list[str], "note"]


def test_enum_and_literal(call: Call) -> None:
    assert roundtrip(call, Color, {"value": "green"}) is Color.GREEN
    assert roundtrip(call, Literal["yes", "no"], {"value": "no"}) == "no"


def test_optional_is_nullable_and_required() -> None:
    @command(output=Optional[int])
    def make() -> str:
        return "x"

    assert make.schema is not None
    assert make.schema["properties"]["value"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert make.schema["required"] == ["value"]


def test_union_round_trip(call: Call) -> None:
    assert roundtrip(call, Union[int, str], {"value": "a"}) == "a"
    assert roundtrip(call, Union[Point, Person], {"value": {"name": "x", "age": 1}}) == {
        "name": "x",
        "age": 1,
    }
    assert roundtrip(call, Optional[Point], {"value": None}) is None


def test_recursive_type(call: Call) -> None:
    @command(output=Node)
    def make() -> str:
        return "x"

    assert make.schema is not None
    assert (
        make.schema["type"] == "object"
    )  # the root $ref is inlined: providers want an object root
    assert make.schema["$defs"]["Node"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"
    }
    tree = roundtrip(call, Node, {"value": 1, "children": [{"value": 2, "children": []}]})
    assert tree == Node(1, [Node(2, [])])


def test_dates_uuids_decimals(call: Call) -> None:
    assert roundtrip(call, dt.date, {"value": "2024-02-29"}) == dt.date(2024, 2, 29)
    assert roundtrip(call, dt.datetime, {"value": "2024-02-29T10:00:00Z"}).year == 2024
    key = uuid.uuid4()
    assert roundtrip(call, uuid.UUID, {"value": str(key)}) == key
    assert roundtrip(call, Decimal, {"value": "12.50"}) == Decimal("12.50")


def test_schema_is_built_once_at_decoration() -> None:
    @command(output=Shape)
    def make() -> str:
        return "x"

    assert make.schema is make.schema


@pytest.mark.parametrize(
    "bad",
    [dict, dict[str, int], list[dict], list[dict[str, Any]], Any, object, tuple[int, str], bytes],
    ids=lambda t: repr(t),
)
def test_open_ended_types_are_rejected_at_decoration(bad: Any) -> None:
    with pytest.raises(ConfigurationError) as info:

        @command(output=bad)
        def make() -> str:
            return "x"

    assert "use a @dataclass, TypedDict or pydantic model" in str(info.value)


def test_dict_field_inside_a_dataclass_is_rejected_with_its_location() -> None:
    @dataclass
    class Loose:
        meta: dict[str, str]

    with pytest.raises(ConfigurationError, match=r"open-ended mapping.*at \$\.meta"):
        command(output=Loose)


def test_type_without_schema_is_a_configuration_error() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigurationError, match="no JSON Schema"):
        command(output=Opaque)


@pytest.mark.parametrize(
    ("tp", "payload", "message"),
    [
        (int, {"value": 3.7}, "valid integer"),
        (int, {"value": "3"}, "valid integer"),
        (bool, {"value": "yes"}, "valid boolean"),
        (Point, {"x": 1}, "Field required"),
        (Color, {"value": "blue"}, "Input should be"),
    ],
)
def test_strict_parsing_rejects_coercions(call: Call, tp: Any, payload: Any, message: str) -> None:
    @command(output=tp, max_reasks=0)
    def make() -> str:
        return "x"

    with override_model(script(json.dumps(payload))), pytest.raises(ParseError, match=message):
        call(make)


def test_fenced_json_is_accepted(call: Call) -> None:
    @command(output=Point)
    def make() -> str:
        return "x"

    with override_model(script('```json\n{"x": 1, "y": 2}\n```')):
        assert call(make) == Point(1, 2)


def test_wrapped_reply_helper_round_trip(call: Call) -> None:
    assert roundtrip(call, list[int], json.loads(json_reply([1, 2], wrap=True))) == [1, 2]


@pytest.mark.parametrize(
    ("tp", "reply", "expected"),
    [
        (list[int], "[2300]", [2300]),
        (bool, "true", True),
        (int, "```json\n7\n```", 7),
        (Optional[Point], '{"x": 1, "y": 2}', Point(1, 2)),
        (list[int], '{"value": [1]}', [1]),
    ],
)
def test_a_bare_value_is_read_where_the_envelope_is_sent(
    call: Call, tp: Any, reply: str, expected: Any
) -> None:
    @command(output=tp, max_reasks=0)
    def make() -> str:
        return "x"

    with override_model(script(reply)):
        assert call(make) == expected


@pytest.mark.parametrize(
    ("reply", "feedback"),
    [
        (
            '["a"]',
            '- [0]: Input should be a valid integer (got "a")',
        ),
        (
            '{"value": ["a"]}',
            '- [0]: Input should be a valid integer (got "a")',
        ),
        ('{"items": [1]}', "- the answer: Input should be a valid array (got {…})"),
    ],
)
def test_a_bad_bare_value_is_reasked_about_itself(reply: str, feedback: str) -> None:
    @command(output=list[int], max_reasks=1)
    def make() -> str:
        return "x"

    with override_model(script(reply, "[1]")) as model:
        assert make() == [1]
    assert model.requests[1].messages[-1].parts[0].errors == feedback


def test_a_parse_error_names_the_field() -> None:
    @command(output=Point, max_reasks=0)
    def make() -> str:
        return "x"

    with override_model(script('{"x": 1}')), pytest.raises(ParseError) as info:
        make()
    assert str(info.value).startswith("Failed to parse model output as Point: y: Field required")


def test_keys_the_type_does_not_declare_are_dropped(call: Call) -> None:
    class Movie(TypedDict):
        title: str

    @dataclass
    class Film:
        title: str

    class Picture(BaseModel):
        title: str

    reply = '{"title": "Up", "year": 2009}'
    assert roundtrip(call, Movie, json.loads(reply)) == {"title": "Up"}
    assert roundtrip(call, Film, json.loads(reply)) == Film("Up")
    assert roundtrip(call, Picture, json.loads(reply)) == Picture(title="Up")


def test_a_model_that_forbids_extra_keys_has_them_reasked(call: Call) -> None:
    from pydantic import ConfigDict

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        title: str

    @command(output=Strict)
    def make() -> str:
        return "x"

    with override_model(script('{"title": "Up", "year": 2009}', '{"title": "Up"}')) as model:
        assert call(make) == Strict(title="Up")
    assert model.requests[1].messages[-1].parts[0].errors == (
        "- year: Extra inputs are not permitted (got 2009)"
    )


class StdCast(typing.TypedDict, total=False):
    lead: str


class StdMovie(typing.TypedDict):
    """A film."""

    title: Annotated[str, UpperCase(on_fail="fix")]
    cast: list[StdCast]
    sequel: StdCast | None


def test_typing_typeddict_works_as_an_output(call: Call) -> None:
    @command(output=list[StdMovie])
    def films() -> str:
        return "x"

    assert films.schema["$defs"]["StdMovie"]["description"] == "A film."
    reply = json.dumps({"value": [{"title": "up", "cast": [{}], "sequel": None}]})
    with override_model(script(reply)):
        assert call(films) == [{"title": "UP", "cast": [{}], "sequel": None}]


def test_typing_typeddict_works_as_a_tool_parameter() -> None:
    from alloy import tool

    @tool
    def store(movie: StdMovie) -> str:
        return movie["title"]

    assert store.definition.parameters["properties"]["movie"]["$ref"].endswith("StdMovie")


def test_a_self_referring_typing_typeddict_works(call: Call) -> None:
    @command(output=StdTree)
    def tree() -> str:
        return "x"

    definition = tree.schema["$defs"]["StdTree"]
    assert definition["description"] == "A tree."
    assert definition["properties"]["children"]["items"] == {"$ref": "#/$defs/StdTree"}
    reply = {"name": "root", "children": [{"name": "leaf", "children": []}]}
    with override_model(script(json.dumps(reply), json.dumps({"name": "root"}))) as model:
        assert call(tree) == reply
    assert len(model.requests) == 1


def test_typing_typeddicts_that_refer_to_each_other_work(call: Call) -> None:
    from alloy import tool

    @command(output=list[StdBranch])
    def branches() -> str:
        return "x"

    reply = [{"leaf": {"branch": {"label": "inner"}}, "label": "outer"}]
    with override_model(script(json.dumps({"value": reply}))):
        assert call(branches) == reply

    @tool
    def depth(branch: StdBranch) -> int:
        return 1

    assert set(depth.definition.parameters["$defs"]) == {"StdBranch", "StdLeaf"}
    bad = {"leaf": {"branch": {"label": 3}}}
    with override_model(
        script(json.dumps({"value": [bad]}), json.dumps({"value": reply}))
    ) as model:
        assert call(branches) == reply
    assert "leaf.branch.label" in model.requests[1].messages[-1].parts[0].errors


class StdTree(typing.TypedDict):
    """A tree."""

    name: str
    children: list[StdTree]


class StdBranch(typing.TypedDict, total=False):
    leaf: StdLeaf
    label: str


class StdLeaf(typing.TypedDict):
    branch: StdBranch | None
