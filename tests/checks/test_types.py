"""Criteria found anywhere in an output type: dataclass, TypedDict and pydantic fields, list items,
unions, recursive types and the whole output; what is sent to the model; decoration-time errors."""

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional, Union

import pytest
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from alloy import ConfigurationError, command
from alloy._command import output_type_for
from alloy._output import JsonOutput
from alloy.checks import (
    CheckedOutput,
    Length,
    LowerCase,
    TwoWords,
    UpperCase,
    ValidRange,
    check,
    checked,
    checked_output_for,
)
from alloy.testing import override_model, script

from ..conftest import Call


class Review(BaseModel):
    stars: Annotated[int, ValidRange(1, 5, on_fail="fix")] = Field(description="1 to 5")
    summary: Annotated[str, TwoWords(on_fail="reask")] = Field(alias="Summary")
    tags: list[Annotated[str, LowerCase(on_fail="fix")]] = []


class Entry(TypedDict):
    word: Annotated[str, UpperCase(on_fail="fix")]
    note: NotRequired[Annotated[str, TwoWords(on_fail="filter")]]


@dataclass
class Tree:
    label: Annotated[str, LowerCase(on_fail="fix")]
    children: list["Tree"] = field(default_factory=list)


def test_output_type_for_picks_checked_output_only_with_criteria() -> None:
    assert isinstance(output_type_for(Review, has_output=True), CheckedOutput)
    assert isinstance(output_type_for(list[Entry], has_output=True), CheckedOutput)
    assert (
        type(output_type_for(Annotated[str, Field(description="x")], has_output=True)) is JsonOutput
    )
    assert checked_output_for(int) is None


def test_schema_is_the_plain_types_schema() -> None:
    @dataclass
    class Plain:
        text: str
        n: int

    @dataclass
    class Checked:
        text: Annotated[str, TwoWords()]
        n: Annotated[int, ValidRange(0, 3)]

    checked_out = CheckedOutput(Checked)
    assert checked_out.schema == JsonOutput(Plain).schema
    assert checked_out.expected == Checked.__qualname__
    assert checked_out.name == "test_schema_is_the_plain_types_schema_locals_Checked"
    assert CheckedOutput(list[Annotated[str, TwoWords()]]).expected == "list[str]"


def test_criteria_are_described_in_the_system_prompt(call: Call) -> None:
    @command(output=Review, system="Be brief.")
    def review(text: str) -> str:
        return text

    reply = '{"stars": 4, "Summary": "great read", "tags": []}'
    with override_model(script(reply)) as model:
        call(review, "...")
    assert model.requests[0].system == (
        "Be brief.\n\nThe answer must also meet these criteria:\n"
        "- stars: must be between 1 and 5\n"
        "- Summary: must be exactly two words\n"
        "- tags[]: must be lower case"
    )


def test_pydantic_fields_with_aliases(call: Call) -> None:
    @command(output=Review)
    def review(text: str) -> str:
        return text

    first = '{"stars": 9, "Summary": "a great read", "tags": ["Sci-Fi"]}'
    second = '{"stars": 9, "Summary": "great read", "tags": ["Sci-Fi"]}'
    with override_model(script(first, second)) as model:
        value = call(review, "...")
    assert value == Review(stars=5, Summary="great read", tags=["sci-fi"])
    assert model.requests[1].messages[-1].parts[0].errors == (
        '- Summary: must be exactly two words, but it has 3 (got "a great read"; criterion two-words)'
    )


def test_typeddict_filter_deletes_a_not_required_key(call: Call) -> None:
    @command(output=list[Entry])
    def entries(text: str) -> str:
        return text

    reply = json.dumps(
        {"value": [{"word": "cat", "note": "a small animal"}, {"word": "dog", "note": "good boy"}]}
    )
    with override_model(script(reply)):
        assert call(entries, "...") == [{"word": "CAT"}, {"word": "DOG", "note": "good boy"}]


def test_recursive_types(call: Call) -> None:
    @command(output=Tree)
    def tree(text: str) -> str:
        return text

    reply = json.dumps(
        {
            "label": "Root",
            "children": [{"label": "A", "children": [{"label": "B", "children": []}]}],
        }
    )
    with override_model(script(reply)):
        assert call(tree, "...") == Tree("root", [Tree("a", [Tree("b")])])


@dataclass
class Cat:
    name: Annotated[str, UpperCase(on_fail="fix")]


@dataclass
class Dog:
    name: Annotated[str, LowerCase(on_fail="fix")]
    good: bool


def test_unions_check_the_member_the_value_belongs_to(call: Call) -> None:
    @command(output=list[Union[Dog, Cat]])
    def pets(text: str) -> str:
        return text

    reply = json.dumps({"value": [{"name": "Tom"}, {"name": "Rex", "good": True}]})
    with override_model(script(reply)):
        assert call(pets, "...") == [Cat("TOM"), Dog("rex", True)]


def test_criteria_on_the_whole_output(call: Call) -> None:
    @dataclass
    class Invoice:
        lines: list[float]
        total: float

    def adds_up(invoice: Invoice) -> bool:
        return abs(sum(invoice.lines) - invoice.total) < 0.01

    total_check = check(adds_up, rule="the total must equal the sum of the lines")

    @command(output=Annotated[Invoice, total_check])
    def invoice(text: str) -> str:
        return text

    bad = '{"lines": [1, 2], "total": 4}'
    good = '{"lines": [1, 2], "total": 3}'
    with override_model(script(bad, good)) as model:
        assert call(invoice, "...") == Invoice([1, 2], 3)
    assert model.requests[1].messages[-1].parts[0].errors == (
        "- the answer: the total must equal the sum of the lines "
        '(got {"lines": [1.0, 2.0], "total": 4.0}; criterion adds-up)'
    )
    assert invoice.output_type.expected == Invoice.__qualname__


def test_a_shared_class_keeps_its_own_criteria_apart(call: Call) -> None:
    not_x = check(
        lambda cat: cat.name != "X", name="not-x", on_fail="fix", fix=lambda cat: Cat("Y")
    )

    @dataclass
    class Pair:
        first: Annotated[Cat, not_x]
        second: Cat

    out = CheckedOutput(Pair)
    assert [(path, c.name) for path, c in out.criteria] == [
        ("first.name", "upper-case"),
        ("first", "not-x"),
        ("second.name", "upper-case"),
    ]
    assert out.parse('{"first": {"name": "x"}, "second": {"name": "x"}}').value == Pair(
        Cat("Y"), Cat("X")
    )


def test_optional_values_that_are_none_are_not_checked(call: Call) -> None:
    @command(output=Annotated[Optional[str], TwoWords(on_fail="exception")])
    def maybe(text: str) -> str:
        return text

    with override_model(script('{"value": null}')):
        assert call(maybe, "...") is None


def test_checked_helper_on_a_type() -> None:
    out = checked(int, ValidRange(0, 10, on_fail="fix"))
    assert out.parse('{"value": 42}').value == 10


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (
            Annotated[int, TwoWords()],
            "Criterion two-words checks str values, but the answer is int",
        ),
        (
            list[Annotated[float, Length(max=2)]],
            "Criterion length checks str or list or tuple or dict values, but the answer[] is float",
        ),
        (Annotated[bool, ValidRange(0, 1)], None),
    ],
)
def test_a_criterion_on_the_wrong_type_fails_at_decoration(tp: Any, message: Optional[str]) -> None:
    if message is None:
        output_type_for(tp, has_output=True)
        return
    with pytest.raises(ConfigurationError) as info:
        output_type_for(tp, has_output=True)
    assert str(info.value) == message


def test_a_value_of_another_union_member_fails_with_a_type_error() -> None:
    out = CheckedOutput(Annotated[Union[str, int], Length(max=2, on_fail="noop")])
    (result,) = out.parse('{"value": 5}').report.results
    assert (result.outcome, result.error) == ("recorded", "must be a string or a list or an object")


def test_none_is_never_checked() -> None:
    from alloy.checks import ValidChoices

    out = CheckedOutput(Annotated[Optional[str], ValidChoices(["a"], on_fail="exception")])
    parsed = out.parse('{"value": null}')
    assert parsed.value is None and parsed.report.results == ()
