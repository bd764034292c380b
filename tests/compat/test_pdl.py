"""PDL schema strings (ragit) loaded as output types with the same constraints, re-asked as ragit
re-prompts; the non-JSON schemas behave as the PDL document describes."""

from __future__ import annotations

import json
import re
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


# -- whole documents (ragit's docs/pdl_format.md) --------------------------------------------

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_a_document_gives_its_schema_and_its_turns() -> None:
    from alloy import Assistant, System, User
    from alloy.compat import read_pdl

    doc = read_pdl(
        "<|schema|>\n\n{ name: str, age: int }\n\n<|SYSTEM|>\n\nExtract a person.\n\n"
        "<|reasoning|>\n\nnot sent\n\n<|user|>\n\nHi, I'm &lt;|user|&gt;.\n\n"
        '<|assistant|>\n\n{"name": "a", "age": 1}\n\n<|user|>\n\n'
        f"What is this?\n<|raw_media(png:{PIXEL})|>\n"
    )
    assert doc.output.expected == "PdlObject"
    system, user, assistant, last = doc.messages
    assert system == System("Extract a person.")
    assert user == User("Hi, I'm <|user|>.")
    assert assistant == Assistant('{"name": "a", "age": 1}')
    assert [type(p).__name__ for p in last.parts] == ["Text", "Media"]


def test_a_document_renders_its_template_with_values_escaped() -> None:
    from alloy import User
    from alloy.compat import read_pdl

    text = "<|user|>\n\n{# a comment #}{{ query }} ({{ n | length }})\n"
    doc = read_pdl(text, {"query": "<|system|>", "n": [1, 2]})
    assert doc.messages == (User("<|system|> (2)"),)  # the value cannot open a turn
    assert (doc.output.expected, doc.output.schema) == ("str", None)  # no schema: plain text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Hello\n<|user|>\nhi", "text comes before the first turn"),
        ("<|schema|>\nint\n<|schema|>\nstr\n<|user|>\nhi", "<|schema|> appears more than once"),
        ("<|usr|>\nhi", "<|usr|> is not a turn"),
        ("<|user|>\nhi\n<|system|>\nbe kind", "<|system|> must be the first turn"),
        ("<|user|>\nhi\n<|user|>\nagain", "<|user|> appears twice in a row"),
        ("<|user|>\nhi\n<|assistant|>\nhello", "it ends with <|assistant|>"),
        ("{# only a comment #}", "it has no turns"),
        ("<|user|>\n{{ query }}", "it is a template"),
        ("<|schema|>\n{ a: date }\n<|user|>\nhi", "Unsupported PDL type 'date'"),
    ],
)
def test_strict_documents_are_checked_as_ragit_checks_them(text: str, problem: str) -> None:
    from alloy.compat import read_pdl

    with pytest.raises(ConfigurationError, match=re.escape(problem)):
        read_pdl(text)


def test_lenient_documents() -> None:
    from alloy import System, User
    from alloy.compat import read_pdl

    doc = read_pdl("Be brief.\n<|user|>\n{{ query }}\n<|usr|>", strict=False)
    assert doc.messages == (System("Be brief."), User("{{ query }}\n<|usr|>"))
    with pytest.raises(ConfigurationError, match="query"):
        read_pdl("<|user|>\n{{ query }}", {})


# A template is code from the document's author: it renders in jinja2's sandbox, and whatever
# goes wrong is a ConfigurationError naming the line, never the template's own exception.
TEMPLATE_FAILURES = {
    "python internals": ("{{ cycler.__init__.__globals__.os.getcwd() }}", "'__init__'"),
    "a class's subclasses": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "unsafe"),
    "a method that changes a value": ("{{ items.append(4) }}", "'append' of 'list'"),
    "division by zero": ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
    "wrong types": ('{{ "a" + 1 }}', "TypeError: can only concatenate str"),
    "undefined": ("{{ nothing }}", "'nothing' is undefined"),
    "a huge range": ("{{ range(10 ** 9) | list }}", "OverflowError: Range too big"),
    "a huge repetition": ('{{ "ab" * 10 ** 10 }}', "a repetition longer than 1,000,000"),
    "a huge power": ("{{ 7 ** 1000000 }}", "a power of more than 100,000 bits"),
    "endless recursion": (
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        "RecursionError",
    ),
    "a syntax error": ("{% for %}", "Expected an expression"),
    "a number too long to show": ("{{ 10 ** 5000 }}", "ValueError: Exceeds the limit"),
}


@pytest.mark.parametrize(
    ("template", "problem"), TEMPLATE_FAILURES.values(), ids=list(TEMPLATE_FAILURES)
)
@pytest.mark.parametrize("reader", ["read_pdl", "load_pdl"])
def test_a_template_that_fails_is_a_configuration_error_naming_its_line(
    template: str, problem: str, reader: str
) -> None:
    from alloy.compat import read_pdl

    text = f"<|schema|>\nstr\n<|user|>\nHello\n{template}\n"
    read = read_pdl if reader == "read_pdl" else load_pdl
    with pytest.raises(ConfigurationError) as info:
        read(text, context={"items": [1, 2, 3]})
    message = str(info.value)
    assert message.startswith("PDL document line 5: the template cannot be rendered: ")
    assert problem in message
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_a_template_reads_its_values_and_bounded_operators_still_work() -> None:
    from alloy import User
    from alloy.compat import read_pdl

    text = '<|user|>\n{{ n ** 3 }} {{ "ab" * n }} {{ items | sum }} {{ items[1:] }} {{ d.k }}'
    doc = read_pdl(text, {"n": 2, "items": [1, 2, 3], "d": {"k": "v"}})
    assert doc.messages == (User("8 abab 6 [2, 3] v"),)


def test_an_empty_array_schema_takes_any_items(call: Call) -> None:
    value, model = run(
        "[] { max: 2 }", call, '{"value": [1, "a", 3]}', '{"value": [1, {"b": null}]}'
    )
    assert value == [1, {"b": None}]
    assert reask(model).startswith("- the answer: must have at most 2 items, but it has 3 items")
