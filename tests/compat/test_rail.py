"""RAIL ``<output>`` specs from the Guardrails documentation, loaded and behaving as documented."""

from __future__ import annotations

import datetime
import json
import re
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
        <string name="pick" validators="valid-choices: {['yes', 'no']}"
            on-fail-valid-choices="fix_reask"/>
    </output>"""
    with pytest.raises(CriterionFailed) as info:
        run(load_rail(spec), '{"code": "def (", "word": "a b", "pick": "no"}', call=call)
    assert (info.value.field, info.value.criterion) == ("code", "bug-free-python")
    # two-words has a fix (no re-ask); valid-choices has none in Guardrails, so it is re-asked.
    value, model = run(
        load_rail(spec),
        '{"code": "x = 1", "word": "a b c", "pick": "Yes"}',
        '{"code": "x = 1", "word": "a b c", "pick": "yes"}',
        call=call,
    )
    assert value == {"code": "x = 1", "word": "a b", "pick": "yes"}
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
    assert schema["properties"]["notes"] == {
        "type": "string",
        "contentMediaType": "application/json",
        "description": "A JSON array, written as a JSON-encoded string.",
    }
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
        (
            '<string name="a" format="bias-free"/>',
            "RAIL validators alloy does not implement: bias-free (at a)",
        ),
        ('<string name="a" colour="red"/>', "Unsupported attribute 'colour' on <string> at a"),
        (
            '<integer name="a" format="two-words"/>',
            "Criterion two-words does not apply to integer at a",
        ),
        ('<string name="a" on-fail-two-words="fix"/>', "on-fail-two-words at a names no validator"),
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


# -- RAIL as Guardrails reads it --------------------------------------------------------------

# From Guardrails' RAIL docs (docs/how_to_guides/rail.md, "Supported attributes"): the
# `validators` attribute, hub names, and on-fail attributes spelled after them.
HUB_NAMES = """
<rail version="0.1">
    <output>
        <string
            name="some_key"
            description="Detailed description of what the value of the key should be"
            required="true"
            validators="guardrails/uppercase; guardrails/two_words"
            on-fail-guardrails_two_words="reask"
            on-fail-guardrails_uppercase="noop"
        />
    </output>
</rail>
"""


def test_validators_attribute_with_hub_names(run_result: Call) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        output = load_rail(HUB_NAMES)

    @command(output=output)
    def gen() -> str:
        return "x"

    with override_model(script('{"some_key": "some string here"}', '{"some_key": "SOME STRING"}')):
        result = run_result(gen)
    assert result.value == {"some_key": "SOME STRING"}
    first = result.reports[0]
    assert [(r.criterion, r.outcome) for r in first.failures] == [
        ("upper-case", "recorded"),
        ("two-words", "reasked"),
    ]


def test_validators_alloy_lacks_are_named_in_one_warning() -> None:
    spec = """<output>
        <string name="a" validators="hub://guardrails/toxic_language: 0.5; two-words"
            on-fail-guardrails_toxic_language="reask"/>
        <string name="b" validators="guardrails/detect_pii" format="1-indexed"/>
    </output>"""
    with pytest.warns(SpecWarning) as record:
        output = load_rail(spec)
    assert [str(w.message) for w in record] == [
        "RAIL validators alloy does not implement: hub://guardrails/toxic_language (at a), "
        "guardrails/detect_pii (at b), 1-indexed (at b); they are not checked"
    ]
    assert [name for _, name in _criteria(output)] == ["two-words"]
    with pytest.raises(ConfigurationError, match=r"toxic_language .*strict spec"):
        load_rail(spec, strict=True)


def _criteria(output: Any) -> list[tuple[str, str]]:
    return [(where, c.name) for where, c in output.criteria]


def test_format_and_validators_are_both_read() -> None:
    spec = """<output>
        <string name="a" format="two-words" validators="upper-case" on-fail-two-words="fix"/>
    </output>"""
    output = load_rail(spec)
    assert _criteria(output) == [("a", "upper-case"), ("a", "two-words")]
    assert output.parse('{"a": "three words here"}').value == {"a": "three words"}


# `<object>` and `<list>` without children (docs/how_to_guides/rail.md: "The object element
# doesn't *need* to have children ... the LLM will automatically generate keys and values").
OPEN = """<output>
    <object name="interest_rates" description="The interest rates offered"/>
    <list name="tags"/>
</output>"""


def test_open_object_and_list_are_json_encoded_in_the_schema() -> None:
    output = load_rail(OPEN)
    assert output.schema is not None
    assert output.schema["properties"] == {
        "interest_rates": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": "The interest rates offered (A JSON object, written as a "
            "JSON-encoded string.)",
        },
        "tags": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": "A JSON array, written as a JSON-encoded string.",
        },
    }


@pytest.mark.parametrize(
    "reply",
    [
        '{"interest_rates": {"purchase": {"apr": 0}}, "tags": ["a", 1, null]}',  # as Guardrails
        json.dumps({"interest_rates": '{"purchase": {"apr": 0}}', "tags": '["a", 1, null]'}),
    ],
)
def test_open_values_read_as_objects_or_json_strings(reply: str, call: Call) -> None:
    value, _ = run(load_rail(OPEN), reply, call=call)
    assert value == {"interest_rates": {"purchase": {"apr": 0}}, "tags": ["a", 1, None]}


def test_open_values_refuse_what_is_not_their_shape(call: Call) -> None:
    replies = ('{"interest_rates": "not json", "tags": []}', '{"interest_rates": {}, "tags": []}')
    value, model = run(load_rail(OPEN), *replies, call=call)
    assert value == {"interest_rates": {}, "tags": []}
    assert model.requests[1].messages[-1].parts == (
        RetryPrompt(
            "- interest_rates: Value error, expected a JSON object (as a JSON-encoded string) "
            '(got "not json")'
        ),
    )


def test_open_values_render_as_the_schema_asks() -> None:
    output = load_rail(OPEN)
    value = {"interest_rates": {"a": 1}, "tags": [1]}
    text = output.render(value)
    assert json.loads(text) == {"interest_rates": '{"a": 1}', "tags": "[1]"}
    assert output.parse(text).value == value


def test_empty_output_is_an_open_object(call: Call) -> None:
    value, _ = run(load_rail("<output></output>"), '{"anything": [1, 2]}', call=call)
    assert value == {"anything": [1, 2]}


# Guardrails' tests/unit_tests/test_rail.py (test_rail_outermost_list) and lists_object.py.
def test_output_type_list(call: Call) -> None:
    spec = """<output type="list" format="length: 1 2" on-fail-length="fix">
        <object>
            <string name="name"/>
            <float name="price"/>
        </object>
    </output>"""
    output = load_rail(spec)
    items = [{"name": "apple", "price": 1.0}, {"name": "pear", "price": 2.0}]
    value, _ = run(output, json.dumps([*items, {"name": "fig", "price": 3.0}]), call=call)
    assert value == items
    value, _ = run(output, json.dumps({"value": items}), call=call)
    assert value == items


@pytest.mark.parametrize(
    ("element", "reply", "expected"),
    [
        (
            '<output type="integer" validators="valid-range: 0 10" on-fail-valid-range="fix"/>',
            "42",
            10,
        ),
        ('<output type="bool"/>', "true", True),
        ('<output type="date"/>', '"2024-05-31T10:00:00Z"', datetime.date(2024, 5, 31)),
        ('<output type="enum" values="red, green"/>', '{"value": "green"}', "green"),
    ],
)
def test_other_root_types(element: str, reply: str, expected: Any, call: Call) -> None:
    value, _ = run(load_rail(element), reply, call=call)
    assert value == expected


# Guardrails' choice/case (tests/integration_tests/test_assets/rail_specs/choice_case.rail).
CHOICE = """<output>
    <choice name="action" discriminator="chosen_action">
        <case name="fight">
            <string name="weapon" validators="valid-choices: {['crossbow', 'machine gun']}"
                on-fail-valid-choices="reask" />
        </case>
        <case name="flight">
            <string name="flight_direction" required="false"
                validators="valid-choices: {['north','south','east','west']}"
                on-fail-valid-choices="exception" />
            <integer name="distance" validators="valid-choices: {[1,2,3,4]}"
                on-fail-valid-choices="exception" />
        </case>
    </choice>
</output>"""


def test_choice_is_a_union_told_apart_by_its_discriminator() -> None:
    output = load_rail(CHOICE)
    assert output.schema is not None
    action = output.schema["properties"]["action"]
    assert action["discriminator"]["propertyName"] == "chosen_action"
    cases = [output.schema["$defs"][ref["$ref"].split("/")[-1]] for ref in action["oneOf"]]
    assert [c["properties"]["chosen_action"] for c in cases] == [
        {"const": "fight", "type": "string"},
        {"const": "flight", "type": "string"},
    ]
    assert [sorted(c["properties"]) for c in cases] == [
        ["chosen_action", "weapon"],
        ["chosen_action", "distance", "flight_direction"],
    ]
    assert _criteria(output) == [
        ("action.weapon", "valid-choices"),
        ("action.flight_direction", "valid-choices"),
        ("action.distance", "valid-choices"),
    ]


def test_choice_cases_carry_their_validators(call: Call) -> None:
    sword = '{"action": {"chosen_action": "fight", "weapon": "sword"}}'
    bow = '{"action": {"chosen_action": "fight", "weapon": "crossbow"}}'
    value, model = run(load_rail(CHOICE), sword, bow, call=call)
    assert value == {"action": {"chosen_action": "fight", "weapon": "crossbow"}}
    assert "action.weapon: must be one of" in model.requests[1].messages[-1].parts[0].errors
    with pytest.raises(CriterionFailed) as info:
        run(load_rail(CHOICE), '{"action": {"chosen_action": "flight", "distance": 9}}', call=call)
    assert (info.value.field, info.value.criterion) == ("action.distance", "valid-choices")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('<output><choice name="c"><case name="a"/></choice></output>', "needs a discriminator"),
        (
            '<output><choice name="c" discriminator="d"><string name="s"/></choice></output>',
            'holds only <case name="..."> elements',
        ),
        ('<output><choice name="c" discriminator="d"/></output>', "has no <case> elements"),
        (
            '<output><choice name="c" discriminator="d"><case name="a"><string name="d"/>'
            "</case></choice></output>",
            "Duplicate field name 'd'",
        ),
    ],
)
def test_malformed_choices(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        load_rail(spec)


# Dates and times as Guardrails' parsers read them (tests/integration_tests/test_datatypes.py,
# guardrails/datatypes.py in 0.4: dateutil for dates, strptime with the element's format).
@pytest.mark.parametrize(
    ("element", "text", "expected"),
    [
        ("<date name='d'/>", "2021-01-01", datetime.date(2021, 1, 1)),
        ("<date name='d'/>", "2021-01-01T11:10:00+01:00", datetime.date(2021, 1, 1)),
        ("<date name='d'/>", "2023-10-03T14:18:38.476Z", datetime.date(2023, 10, 3)),
        ("<date name='d'/>", "2023-10-03 14:18", datetime.date(2023, 10, 3)),
        ("<date name='d' date-format='%d/%m/%Y'/>", "31/05/2024", datetime.date(2024, 5, 31)),
        ("<date name='d' date-format='%d/%m/%Y'/>", "2024-05-31", datetime.date(2024, 5, 31)),
        ("<time name='d'/>", "14:30:00", datetime.time(14, 30)),
        ("<time name='d'/>", "14:30", datetime.time(14, 30)),
        ("<time name='d' time-format='%I:%M %p'/>", "02:30 PM", datetime.time(14, 30)),
        (
            "<date-time name='d'/>",
            "2024-05-31T14:30:00Z",
            datetime.datetime(2024, 5, 31, 14, 30, tzinfo=datetime.timezone.utc),
        ),
        ("<date-time name='d'/>", "2024-05-31", datetime.datetime(2024, 5, 31)),
        (
            "<date-time name='d' datetime-format='%d.%m.%Y %H:%M'/>",
            "31.05.2024 14:30",
            datetime.datetime(2024, 5, 31, 14, 30),
        ),
    ],
)
def test_dates_and_times(element: str, text: str, expected: Any) -> None:
    output = load_rail(f"<output>{element}</output>")
    assert output.parse(json.dumps({"d": text})).value == {"d": expected}


@pytest.mark.parametrize(
    ("element", "text", "problem"),
    [
        ("<date name='d'/>", "March 3rd", "expected a date like 2024-05-31"),
        ("<date name='d' date-format='%d/%m/%Y'/>", "31.05.2024", "or in the format %d/%m/%Y"),
        ("<time name='d'/>", "half past two", "expected a time like 14:30:00"),
        ("<date-time name='d'/>", "yesterday", "expected a date-time like 2024-05-31T14:30:00"),
    ],
)
def test_unreadable_dates_are_reasked_with_the_expected_form(
    element: str, text: str, problem: str, call: Call
) -> None:
    fine = {"date": "2024-01-01", "time": "10:00:00", "date-time": "2024-01-01T10:00:00"}
    tag = element[1:].split(" ")[0]
    _, model = run(
        load_rail(f"<output>{element}</output>"),
        json.dumps({"d": text}),
        json.dumps({"d": fine[tag]}),
        call=call,
    )
    assert problem in model.requests[1].messages[-1].parts[0].errors


# What `fix` does, validator by validator, as Guardrails' validators fix (their
# "Programmatic fix" in each validator's docs; none means the value becomes null).
@pytest.mark.parametrize(
    ("validator", "value", "fixed"),
    [
        ("two-words", "my chase plan", "my chase"),
        ("two-words", "over-the-credit-limit", "over the"),
        ("two-words", "myChasePlan", "my Chase"),
        ("two-words", "hello", "hello hello"),
        ("one-line", "first line\nsecond line", "first line"),
        ("upper-case", "loud", "LOUD"),
        ("lower-case", "QUIET", "quiet"),
        ("length: 2 4", "abcdef", "abcd"),
        ("length: 4 8", "ab", "abbb"),
        ("length: 4 8", "", None),
        ("valid-choices: {['a', 'b']}", "A", None),
        ("regex-match: ^x+$", "y", None),
        ("valid-url", "not a url", None),
        ("reading-time: 0.01", "many words " * 5, None),
        ("bug-free-python", "def (", None),
    ],
)
def test_fix_follows_guardrails(validator: str, value: str, fixed: Any) -> None:
    name = validator.split(":")[0]
    spec = f'<output><string name="s" validators="{validator}" on-fail-{name}="fix"/></output>'
    output = load_rail(spec)
    parsed = output.parse(json.dumps({"s": value}))
    assert parsed.value == {"s": fixed}
    assert [r.outcome for r in parsed.report.failures] == ["fixed"]


@pytest.mark.parametrize(
    ("validator", "value", "fixed"),
    [("valid-range: 0 10", 42, 10), ("valid-range: 0 10", -1, 0)],
)
def test_fix_clamps_numbers(validator: str, value: int, fixed: int) -> None:
    spec = (
        f'<output><integer name="n" validators="{validator}" on-fail-valid-range="fix"/></output>'
    )
    assert load_rail(spec).parse(json.dumps({"n": value})).value == {"n": fixed}


def test_fix_on_lists_pads_cuts_and_appends() -> None:
    spec = """<output>
        <list name="short" validators="length: 3 3" on-fail-length="fix"><string/></list>
        <list name="ends" validators="ends-with: {'end'}" on-fail-ends-with="fix"><string/></list>
    </output>"""
    parsed = load_rail(spec).parse('{"short": ["a"], "ends": ["a"]}')
    assert parsed.value == {"short": ["a", "a", "a"], "ends": ["a", "end"]}
