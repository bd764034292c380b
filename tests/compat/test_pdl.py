"""PDL schema strings (ragit) loaded as output types with the same constraints, re-asked as ragit
re-prompts; the non-JSON schemas behave as the PDL document describes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from alloy import ConfigurationError, command
from alloy._types import RetryPrompt
from alloy.checks import CheckedOutput, SpecWarning
from alloy.compat import load_pdl
from alloy.formats import BoundedText, Code, Task, TaskList, YesNo
from alloy.testing import override_model, script

from ..conftest import Call


def run(schema: str, call: Call, *replies: str) -> tuple[Any, Any]:
    @command(output=load_pdl(schema))
    def ask(question: str) -> str:
        return question

    with override_model(script(*replies)) as model:
        value = call(ask, "q")
    return value, model


def reask(model: Any, index: int = 1) -> str:
    part = model.requests[index].messages[-1].parts[0]
    assert isinstance(part, RetryPrompt)
    return part.errors


PEOPLE = "[{name: str, age: int}]{min: 3, max: 3}"


def test_array_of_objects_with_an_exact_length(call: Call) -> None:
    two = [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]
    three = [*two, {"name": "Grace", "age": 85}]
    value, model = run(PEOPLE, call, json.dumps({"value": two}), json.dumps({"value": three}))
    assert value == three
    assert reask(model) == (
        "- the answer: must have exactly 3 items, but it has 2 items "
        '(got [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]; criterion length)'
    )
    schema = load_pdl(PEOPLE).schema
    assert schema is not None
    assert schema["properties"]["value"]["items"] == {"$ref": "#/$defs/PdlObject"}
    assert schema["$defs"]["PdlObject"]["required"] == ["name", "age"]


def test_str_with_min_is_the_whole_reply_bounded(call: Call) -> None:
    output = load_pdl("str { min: 100 }")
    assert output == BoundedText(min=100)
    long = "x" * 120
    value, model = run("str { min: 100 }", call, "Too short.", long)
    assert value == long
    assert reask(model) == (
        "- the answer is too short: it has 10 characters; it must have at least 100 characters"
    )
    assert load_pdl("str") == BoundedText()


def test_yesno(call: Call) -> None:
    assert load_pdl("yesno") == YesNo()
    value, model = run("yesno", call, "Hmm, I don't know.", "Yes")
    assert value is True
    assert reask(model).startswith("- the reply does not commit to yes or no")


def test_bool_is_json(call: Call) -> None:
    value, model = run("bool", call, "true")
    assert value is True
    value, model = run("bool", call, '"maybe"', '{"value": false}')
    assert value is False
    assert reask(model) == '- the answer: Input should be a valid boolean (got "maybe")'


def test_code_and_tasklist(call: Call) -> None:
    assert load_pdl("code") == Code() and load_pdl("tasklist") == TaskList()
    value, _ = run("code", call, "Here:\n```rust\nfn main() {}\n```")
    assert value == "fn main() {}"
    value, model = run("tasklist {min: 2}", call, "- [ ] only one", "- [ ] one\n- [x] two")
    assert value == [Task("one"), Task("two", True)]
    assert reask(model) == (
        '- the answer: must have at least 2 items, but it has 1 item (got [{"text": "only one", '
        '"done": false}]; criterion length)'
    )
    assert isinstance(load_pdl("code {max: 100}"), CheckedOutput)


@pytest.mark.parametrize(
    ("schema", "bad", "good", "error"),
    [
        ("int {min: 0, max: 10}", 11, 10, "must be between 0 and 10"),
        ("int {min: -10}", -11, -10, "must be at least -10"),
        ("float {min: -1.5, max: -0.5}", 0.0, -1.0, "must be between -1.5 and -0.5"),
        ("integer{max:-1}", 0, -1, "must be at most -1"),
        ("number {len_min: 0.5}", 0.25, 0.75, "must be at least 0.5"),
    ],
)
def test_number_ranges(call: Call, schema: str, bad: Any, good: Any, error: str) -> None:
    value, model = run(schema, call, json.dumps({"value": bad}), json.dumps({"value": good}))
    assert value == good
    assert reask(model) == f"- the answer: {error} (got {json.dumps(bad)}; criterion valid-range)"


def test_nested_constraints(call: Call) -> None:
    schema = "{title: str {max: 5}, 'tags': [str]{max: 2}, score: float {min: 0}}"
    bad = {"title": "too long", "tags": ["a", "b", "c"], "score": -1}
    good = {"title": "ok", "tags": ["a"], "score": 1}
    value, model = run(schema, call, json.dumps(bad), json.dumps(good))
    assert value == good
    assert reask(model) == (
        '- title: must have at most 5 characters, but it has 8 characters (got "too long"; criterion length)\n'
        '- tags: must have at most 2 items, but it has 3 items (got ["a", "b", "c"]; criterion length)\n'
        "- score: must be at least 0 (got -1.0; criterion valid-range)"
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("", "it is empty"),
        ("[str", "expected ']'"),
        ("{name str}", "expected ':'"),
        ("{a: int b: int}", "expected ',' or '}' after 'a'"),
        ("str {min: 5, min: 6}", "constraint 'min' appears more than once"),
        ("int {min: low}", "constraint 'min' needs a number"),
        ("int {min: 5, max: 1}", r"min \(5\) is greater than max \(1\)"),
        ("str {min: 1.5}", "A length min must be a whole number"),
        ("{a: yesno}", "yesno cannot be mixed with JSON"),
        ("[code]", "code cannot be mixed with JSON"),
        ("yesno {min: 1}", "yesno takes no min/max constraint"),
        ("int int", "unexpected 'int' after the schema"),
        ("str @", "unexpected character '@'"),
        ("{}", "an object needs at least one key"),
        ("date", "Unsupported PDL type 'date'"),
        ("[]", "PDL array without an item type"),
        ("int {step: 2}", "Unknown PDL constraint 'step'"),
    ],
)
def test_bad_schemas(schema: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        load_pdl(schema)


def test_lenient_unknowns_become_strings_with_a_warning() -> None:
    with pytest.warns(SpecWarning, match="Unsupported PDL type 'date'; treated as str"):
        output = load_pdl("{when: date}", strict=False)
    assert output.schema["properties"]["when"] == {"type": "string"}  # type: ignore[index]
    with pytest.warns(SpecWarning, match=r"treated as \[str\]"):
        output = load_pdl("[]", strict=False)
    assert output.parse('{"value": ["a"]}') == ["a"]
    with pytest.warns(SpecWarning, match="Unknown PDL constraint 'step'"):
        load_pdl("int {step: 2}", strict=False)


def test_bounds_reach_the_schema_for_native_enforcement() -> None:
    schema = load_pdl("[{name: str {min: 2}, age: int {min: -3, max: 120}}]{min: 2, max: 2}").schema
    assert schema is not None
    items = schema["properties"]["value"]
    assert (items["minItems"], items["maxItems"]) == (2, 2)
    person = schema["$defs"]["PdlObject"]["properties"]
    assert person["name"]["minLength"] == 2
    assert (person["age"]["minimum"], person["age"]["maximum"]) == (-3, 120)
