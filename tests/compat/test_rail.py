"""RAIL ``<output>`` specs from the Guardrails documentation, loaded and behaving as documented."""

from __future__ import annotations

import datetime
import json
import warnings
from typing import Any

import pytest

from alloy import ConfigurationError, CriterionFailed, command
from alloy._types import RetryPrompt
from alloy.compat import RailText, SpecWarning, load_rail
from alloy.testing import override_model, script

from ..conftest import Call

# The first example of the document (the "..." placeholder in <object> kept as it is written).
EXAMPLE = """
<rail version="0.1">
    <output>
        <string name="text" description="The generated text" format="two-words" on-fail-two-words="reask"/>
        <float name="score" description="The score of the generated text" format="min-val: 0" on-fail-min-val="fix"/>
        <object name="metadata" description="The metadata associated with the generated text">
            <string name="key_1" description="description of key_1" />
            ...
        </object>
    </output>
</rail>
"""


def run(spec: Any, *replies: str, call: Call | None = None) -> tuple[Any, Any]:
    """Run a command with this output through a scripted model; (value, model)."""

    @command(output=spec)
    def generate(topic: str) -> str:
        return f"Write about {topic}"

    with override_model(script(*replies)) as model:
        value = call(generate, "x") if call else generate("x")
    return value, model


def reply(text: str = "Good title", score: float = 0.5, key: str = "v") -> str:
    return json.dumps({"text": text, "score": score, "metadata": {"key_1": key}})


def test_example_schema_carries_the_descriptions() -> None:
    output = load_rail(EXAMPLE)
    assert output.schema == {
        "$defs": {
            "Metadata": {
                "description": "The metadata associated with the generated text",
                "properties": {"key_1": {"description": "description of key_1", "type": "string"}},
                "required": ["key_1"],
                "type": "object",
                "additionalProperties": False,
            }
        },
        "properties": {
            "text": {"description": "The generated text", "type": "string"},
            "score": {"description": "The score of the generated text", "type": "number"},
            "metadata": {"$ref": "#/$defs/Metadata"},
        },
        "required": ["text", "score", "metadata"],
        "type": "object",
        "additionalProperties": False,
    }
    assert output.instructions == (
        "The answer must also meet these criteria:\n"
        "- text: must be exactly two words\n"
        "- score: must be at least 0"
    )


def test_example_reasks_text_and_fixes_score(call: Call) -> None:
    value, model = run(
        load_rail(EXAMPLE), reply("A much too long title", -3), reply("Short title", -3), call=call
    )
    assert value == {"text": "Short title", "score": 0.0, "metadata": {"key_1": "v"}}
    assert model.requests[1].messages[-1].parts == (
        RetryPrompt(
            "- text: must be exactly two words, but it has 5 "
            '(got "A much too long title"; criterion two-words)'
        ),
    )


def test_string_output_is_plain_text(call: Call) -> None:
    spec = """<rail version="0.1">
        <output type="string" description="The generated text" format="two-words" on-fail-two-words="reask"/>
    </rail>"""
    output = load_rail(spec)
    assert output.schema is None
    assert output.instructions == (
        "Answer with plain text: The generated text\n\n"
        "The answer must also meet these criteria:\n- the answer: must be exactly two words"
    )
    value, model = run(output, "string output here", "string output\n", call=call)
    assert value == "string output"
    assert model.requests[0].output is None
    assert model.requests[1].messages[-1].parts == (
        RetryPrompt(
            "- the answer: must be exactly two words, but it has 3 "
            '(got "string output here"; criterion two-words)'
        ),
    )


OBJECT = """
<rail version="0.1">
    <output>
        <object name="some_object">
            <string name="some_str_key" description="What should the value for this key represent?" format="two-words; upper-case" />
            <integer name="some_other_key" description="What should this integer represent?" format="min-val: 0"/>
        </object>
    </output>
</rail>
"""


def test_criteria_without_on_fail_record_only(run_result: Call) -> None:
    bad = json.dumps({"some_object": {"some_str_key": "some string here", "some_other_key": -1}})
    output = load_rail(OBJECT)

    @command(output=output)
    def gen(x: str) -> str:
        return x

    with override_model(script(bad)):
        result = run_result(gen, "x")
    assert result.value == json.loads(bad)
    report = result.reports[0]
    assert [(r.path, r.criterion, r.outcome) for r in report.failures] == [
        ("some_object.some_str_key", "two-words", "recorded"),
        ("some_object.some_str_key", "upper-case", "recorded"),
        ("some_object.some_other_key", "valid-range", "recorded"),
    ]


LIST = """
<rail version="0.1">
    <output>
        <list name="some_list" format="min-len: 2" on-fail-min-len="reask">
            <string format="two-words; upper-case" on-fail-two-words="filter" on-fail-upper-case="fix" />
        </list>
    </output>
</rail>
"""


def test_list_items_are_filtered_and_fixed_then_the_list_checked(call: Call) -> None:
    first = json.dumps({"some_list": ["string one", "not two words here", "x"]})
    second = json.dumps({"some_list": ["string one", "STRING 2"]})
    value, model = run(load_rail(LIST), first, second, call=call)
    assert value == {"some_list": ["STRING ONE", "STRING 2"]}
    assert model.requests[1].messages[-1].parts == (
        RetryPrompt(
            '- some_list: must have at least 2 items, but it has 1 item (got ["STRING ONE"]; '
            "criterion length)"
        ),
    )


REQUIRED = """
<rail version="0.1">
    <output>
        <string
            name="some_key"
            description="Detailed description of what the value of the key should be"
            required="true"
            format="two-words; upper-case"
            on-fail-two-words="reask"
            on-fail-upper-case="noop"
        />
    </output>
</rail>
"""


def test_several_actions_on_one_field(call: Call) -> None:
    value, model = run(load_rail(REQUIRED), '{"some_key": "some string"}', call=call)
    assert value == {"some_key": "some string"}  # upper-case is noop
    assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("refrain", None),
        ("filter", {"title": "ok", "n": 1}),
        ("fix", {"title": "ok", "n": 1, "tag": "ALPHA"}),
        ("noop", {"title": "ok", "n": 1, "tag": "alpha"}),
    ],
)
def test_each_action_from_on_fail(call: Call, action: str, expected: Any) -> None:
    spec = f"""<output>
        <string name="title"/>
        <integer name="n"/>
        <string name="tag" format="upper-case" on-fail-upper-case="{action}"/>
    </output>"""
    value, _ = run(load_rail(spec), '{"title": "ok", "n": 1, "tag": "alpha"}', call=call)
    assert value == expected


def test_exception_and_fix_reask_from_on_fail(call: Call) -> None:
    spec = """<output>
        <string name="code" format="bug-free-python" on-fail-bug-free-python="exception"/>
        <string name="word" format="two-words" on-fail-two-words="fix_reask"/>
    </output>"""
    with pytest.raises(CriterionFailed) as info:
        run(load_rail(spec), '{"code": "def (", "word": "a b"}', call=call)
    assert (info.value.field, info.value.criterion) == ("code", "bug-free-python")
    value, model = run(
        load_rail(spec),
        '{"code": "x = 1", "word": "a"}',
        '{"code": "x = 1", "word": "a b c"}',
        call=call,
    )
    assert value == {"code": "x = 1", "word": "a b"}
    assert len(model.requests) == 2


def test_types_and_attributes(call: Call) -> None:
    spec = """<output description="A person">
        <string name="name" description="Full name" format="length: 1 20" on-fail-length="fix"/>
        <integer name="age" format="valid-range: 0 150" on-fail-valid-range="reask"/>
        <bool name="active"/>
        <date name="born"/>
        <time name="wakes"/>
        <url name="site" format="valid-url" on-fail-valid-url="filter"/>
        <email name="mail" format="valid-email" on-fail-valid-email="filter"/>
        <enum name="color" values="red, green"/>
        <string name="nickname" required="false"/>
        <list name="friends" description="Their friends">
            <object description="A friend"><string name="name"/></object>
        </list>
        <list name="notes"/>
    </output>"""
    output = load_rail(spec)
    schema = output.schema
    assert schema["description"] == "A person"
    assert schema["properties"]["age"] == {"type": "integer"}
    assert schema["properties"]["born"] == {"format": "date", "type": "string"}
    assert schema["properties"]["color"] == {"enum": ["red", "green"], "type": "string"}
    assert schema["properties"]["nickname"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert schema["properties"]["friends"]["description"] == "Their friends"
    assert schema["$defs"]["Friends"]["description"] == "A friend"
    assert schema["properties"]["notes"] == {"items": {"type": "string"}, "type": "array"}
    assert schema["required"] == list(schema["properties"])
    good = {
        "name": "Augusta Ada King, Countess of Lovelace",
        "age": 36,
        "active": False,
        "born": "1815-12-10",
        "wakes": "07:30:00",
        "site": "not a url",
        "mail": "ada@example.org",
        "color": "green",
        "nickname": None,
        "friends": [{"name": "Charles"}],
        "notes": [],
    }
    value, _ = run(output, json.dumps(good), call=call)
    assert value["name"] == "Augusta Ada King, Co"
    assert value["born"] == datetime.date(1815, 12, 10)
    assert value["wakes"] == datetime.time(7, 30)
    assert "site" not in value and value["mail"] == "ada@example.org"


# -- strict and lenient -------------------------------------------------------------------


def test_strict_unsupported_type_is_an_error() -> None:
    spec = """<rail version="0.1">
        <output strict="true">
            <unsupported-type name="x" />
        </output>
    </rail>"""
    with pytest.raises(ConfigurationError, match="Unsupported type: unsupported-type"):
        load_rail(spec)


def test_lenient_unsupported_type_is_a_string_without_checks(call: Call) -> None:
    spec = """<output>
        <unsupported-type name="x" format="two-words" on-fail-two-words="exception"/>
    </output>"""
    with pytest.warns(SpecWarning, match="Unsupported type: unsupported-type .*treated as string"):
        output = load_rail(spec)
    assert output.schema["properties"]["x"] == {"type": "string"}
    value, _ = run(output, '{"x": "three words here"}', call=call)
    assert value == {"x": "three words here"}


@pytest.mark.parametrize(
    ("element", "problem"),
    [
        ('<string name="a" format="bias-free"/>', "Unsupported criterion 'bias-free' at a"),
        ('<string name="a" colour="red"/>', "Unsupported attribute 'colour' on <string> at a"),
        (
            '<integer name="a" format="two-words"/>',
            "Criterion two-words does not apply to integer at a",
        ),
        ('<string name="a" on-fail-two-words="fix"/>', "on-fail-two-words at a names no criterion"),
        ('<object name="a"/>', "<object> at a has no child elements"),
        ('<list name="a"><string/><string/></list>', "<list> at a has 2 child elements"),
    ],
)
def test_strict_and_lenient(element: str, problem: str) -> None:
    spec = f"<output>{element}<string name='b'/></output>"
    with pytest.warns(SpecWarning) as record:
        load_rail(spec)
    assert problem in str(record[0].message)
    with pytest.raises(ConfigurationError) as info:
        load_rail(spec, strict=True)
    assert problem in str(info.value)
    with pytest.raises(ConfigurationError):
        load_rail(spec.replace("<output>", '<output strict="true">'))


def test_lenient_by_default_silent_when_all_is_known() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_rail(EXAMPLE.replace("...", ""))
        load_rail(LIST)
        load_rail(OBJECT)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("<rail><output>", "not well-formed XML"),
        ("<rail><prompt/></rail>", "has no <output> element"),
        ("<output/>", "neither child elements nor a type"),
        ('<output type="string"><string name="a"/></output>', "cannot also have child elements"),
        ("<output><string/></output>", "<string> inside <output> needs a name"),
        ('<output><string name="a"/><string name="a"/></output>', "Duplicate field name 'a'"),
        (
            '<output><string name="a" format="two-words" on-fail-two-words="retry"/></output>',
            "on-fail-two-words='retry'",
        ),
        ('<output strict="maybe"><string name="a"/></output>', "strict must be true or false"),
        ('<output><enum name="a"/></output>', 'needs values="a, b, c"'),
        (
            '<output><string name="a" format="two-words" on-fail-two-words="filter" required="true"/></output>',
            None,
        ),
    ],
)
def test_malformed_specs(spec: str, message: str | None) -> None:
    if message is None:
        load_rail(spec)  # a filtered field becomes optional
        return
    with pytest.raises(ConfigurationError, match=message):
        load_rail(spec)


def test_element_tree_input_and_rail_text() -> None:
    import xml.etree.ElementTree as ET

    output = load_rail(ET.fromstring('<output type="string"/>'))
    assert output.parse("  hi  ").value == "hi"  # type: ignore[attr-defined]
    assert RailText().instructions is None
