"""Hostile specs: whatever text reaches ``load_rail``, ``load_pdl`` or a ``format="..."`` string,
the only error is a ConfigurationError that says where the spec is wrong. Never a raw
OverflowError, RecursionError, MemoryError or XML error, never a hang, never an entity bomb."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alloy._output import InvalidOutput, OutputType
from alloy.checks import SpecWarning, parse_criteria
from alloy.checks._spec import parse_format
from alloy.compat import load_pdl, load_rail, read_pdl
from alloy.compat._shared import TypeNames
from alloy.errors import CommandError, ConfigurationError
from alloy.formats import BoundedText

LAUGHS = "".join(
    f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' if i else '<!ENTITY lol0 "lol">' for i in range(10)
)


def nested(open_tag: str, close_tag: str, depth: int) -> str:
    return f"<output>{open_tag * depth}<string name='s'/>{close_tag * depth}</output>"


# (spec, what the message must say)
HOSTILE_RAIL = {
    "billion laughs": (
        f'<?xml version="1.0"?><!DOCTYPE lolz [{LAUGHS}]>'
        "<output><string name='a' description='&lol9;'/></output>",
        "line 1: DOCTYPE declarations are not allowed",
    ),
    "external entity": (
        '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><output><string name="&x;"/></output>',
        "DOCTYPE declarations are not allowed",
    ),
    "doctype on line 3": ('<?xml version="1.0"?>\n\n<!DOCTYPE output>\n<output/>', "line 3"),
    "lone surrogate": ('<output>\n<string name="\ud800"/></output>', "line 2, column 15"),
    "lists nested 2,000 deep": (
        nested('<list name="l">', "</list>", 2000),
        "<list> at l[][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][][]: nested more "
        "than 32 levels deep",
    ),
    "objects nested 100 deep": (
        nested('<object name="o">', "</object>", 100),
        "<object> at o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o: nested",
    ),
    "huge length": (
        '<output><string name="a" format="length: 1 1e999"/></output>',
        "<string> at a, format='length: 1 1e999': Bad arguments for criterion length: max must "
        "be a whole number, got inf",
    ),
    "reading time overflows": (
        '<output><string name="a" format="reading-time: 1e308 1e308"/></output>',
        "Bad arguments for criterion reading-time: cannot convert float infinity to integer",
    ),
    "not a number": (
        '<output><string name="a" format="reading-time: nan"/></output>',
        "<string> at a, format='reading-time: nan': Bad arguments for criterion reading-time: "
        "max_minutes must be a finite number, got nan",
    ),
    "length of words": (
        "<output><string name='a' format=\"length: 'a' 'b'\"/></output>",
        "min must be a whole number, got 'a'",
    ),
    "deep literal argument": (
        f'<output><string name="a" format="ends-with: {{{"-" * 100_000}1}}"/></output>',
        None,  # too deep for a literal: taken as the text it is
    ),
    "deep arithmetic argument": (
        f'<output><string name="a" format="ends-with: {{{"1+" * 50_000}1}}"/></output>',
        None,
    ),
    "regex that does not compile": (
        "<output><string name='a' format=\"regex-match: {'('}\"/></output>",
        "regex-match: invalid pattern",
    ),
}


@pytest.mark.parametrize(("spec", "message"), HOSTILE_RAIL.values(), ids=list(HOSTILE_RAIL))
def test_hostile_rail(spec: str, message: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpecWarning)
        if message is None:
            load_rail(spec)
            return
        with pytest.raises(ConfigurationError) as info:
            load_rail(spec)
    assert message in str(info.value)


def test_rail_nesting_up_to_the_limit_loads() -> None:
    output = load_rail(nested('<list name="l">', "</list>", 31))
    assert output.schema is not None


def test_rail_type_names_that_collide_stay_unique_and_cheap() -> None:
    # Field names that differ only in separators give the same class name; numbering them must
    # not try every taken number again for each new field.
    fields = "".join(
        f'<object name="x{chr(0x4E00 + i)}y"><string name="s"/></object>' for i in range(300)
    )
    output = load_rail(f"<output>{fields}</output>")
    assert output.schema is not None
    assert {"XY", "XY2", "XY300"} <= set(output.schema["$defs"])


def test_type_names_number_many_alike_in_linear_time() -> None:
    # Trying every taken number again for each new name would take minutes here: a regression
    # shows up as pytest-timeout, not as a timing assertion.
    names = TypeNames()
    assert [names.unique("Person") for _ in range(50_000)][-1] == "Person50000"
    assert (names.unique("Pet"), names.unique("Pet")) == ("Pet", "Pet2")


HOSTILE_PDL = {
    "lists nested 1,000 deep": ("[" * 1000 + "str" + "]" * 1000, "nested more than 32 levels"),
    "objects nested 500 deep": ("{a: " * 500 + "int" + "}" * 500, "(at character 129)"),
    "infinite length": ("str {min: 1e999}", "constraint 'min' must be a finite number, got 1e999"),
    "infinite array bound": ("[str]{max: 1e999}", "must be a finite number"),
    "infinite code bound": ("code {min: -1e999}", "must be a finite number"),
    "number too long to read": (
        "str {min: " + "9" * 5000 + "}",
        "constraint 'min' has too many digits",
    ),
    "lone surrogate key": (
        '{"\ud800": int}',
        "a lone surrogate '\\ud800' is not valid text (at character 3)",
    ),
    "a media path with a NUL": ("<|user|>\n<|media(a\x00.png)|>", "Cannot read image file"),
    "a template that reaches for os": (
        "<|user|>\n{{ cycler.__init__.__globals__.os.getcwd() }}",
        "line 2: the template cannot be rendered",
    ),
    "error in a long schema is shown short": (
        "{" + ", ".join(f"k{i}: int" for i in range(1000)) + " @}",
        "...",
    ),
}


@pytest.mark.parametrize(("schema", "message"), HOSTILE_PDL.values(), ids=list(HOSTILE_PDL))
def test_hostile_pdl(schema: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_pdl(schema, context={} if "{{" in schema else None)
    assert message in str(info.value)
    assert len(str(info.value)) < 300


def test_pdl_errors_say_where() -> None:
    with pytest.raises(ConfigurationError, match=r"expected ':', got 'str' \(at character 7\)"):
        load_pdl("{name str}")
    with pytest.raises(ConfigurationError, match=r"unexpected end; expected '\]' \(at the end\)"):
        load_pdl("[str")


def test_pdl_huge_whole_numbers_are_fine() -> None:
    assert load_pdl("int {max: 99999999999999999999}").schema is not None
    assert load_pdl("str {min: 99999999999999999999}") == BoundedText(min=10**20 - 1)


HOSTILE_FORMATS = {
    "huge minutes": ("reading-time: 1e400", "reading-time: max_minutes must be a finite number"),
    "minutes times words overflow": ("reading-time: 1e308 1e308", "reading-time: cannot convert"),
    "range of words": ("valid-range: min=a", "valid-range: min must be a number, got 'a'"),
    "a bool is not a length": ("min-len: {True}", "min-len: min must be a whole number, got True"),
    "nan range": ("valid-range: nan", "valid-range: min must be a finite number, got nan"),
    "too many numbers": ("length: 1 2 3", "length: takes at most 2 arguments, got 3"),
}


@pytest.mark.parametrize(("spec", "message"), HOSTILE_FORMATS.values(), ids=list(HOSTILE_FORMATS))
def test_hostile_format_strings(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_criteria(spec)
    assert message in str(info.value)


def test_whole_floats_are_lengths() -> None:
    (criterion,) = parse_criteria("length: 1.0 1e3")
    assert (criterion.min, criterion.max) == (1, 1000)  # type: ignore[attr-defined]
    assert isinstance(criterion.max, int)  # type: ignore[attr-defined]


# -- hypothesis: only ConfigurationError, whatever the text ------------------------------------

RAIL_PIECES = [
    "<output>", "</output>", "<rail>", "</rail>", "<output strict='true'>", '<string name="a"',
    '<integer name="b"', '<float name="c"', '<date name="d"', '<object name="o">', "</object>",
    '<list name="l">', "</list>", '<enum name="e"', ' values="a, b"', ' values=""', ' format="',
    "length: 1 1e999", "valid-range: 99999999999999999999", "reading-time: 1e999", "two-words",
    "regex-match: {'('}", "ends-with: {[1, {2: 3}]}", "valid-choices: {{1, 2}}", "min-len: -1",
    '"', ' on-fail-length="', ' on-fail-two-words="', "fix", "filter", "refrain", ' required="',
    "false", "/>", ">", ' type="', "string", ' name="', "x", ' description="d"', "&amp;", "&#0;",
    "&#x1F600;", "<!--", "-->", "<![CDATA[", "]]>", "<?xml version='1.0'?>", "<!DOCTYPE x>",
    "\ud800", "\x00", " ", "\n", "é",
]  # fmt: skip
PDL_PIECES = [
    "{", "}", "[", "]", ":", ",", " ", "str", "int", "float", "bool", "yesno", "code", "tasklist",
    "date", "a", "b", "'k'", '"k k"', "min", "max", "len_min", "len_max", "step", "1", "-1", "0.5",
    "1e999", "-1e999", "1e308", "99999999999999999999", "9" * 4400, "@", "\ud800", "\x00", "\n",
    # a whole document: turn lines (which make the text one), media, escapes, template syntax
    "\n<|user|>\n", "\n<|system|>\n", "\n<|assistant|>\n", "\n<|schema|>\n", "\n<|reasoning|>\n",
    "\n<|USER|>\n", "\n<|usr|>\n", "<|", "|>", "&lt;|", "<|media(", "<|raw_media(", "png:",
    "iVBORw0KGgo=", ")|>", "\x00)|>", "{{", "}}", "{%", "%}", "{#", "#}",
]  # fmt: skip
#: Template pieces: what a document rendered with context= is made of.
TEMPLATE_PIECES = [
    *PDL_PIECES, "{{ x }}", "{{ x", "{{ y }}", "{% for i in x %}", "{% endfor %}", "{% if x %}",
    "{% endif %}", "{% set x = 1 %}", "x", "|length", "|safe", "|join(", "/ 0", "* 9", "** 99", "+",
    "~", "(", ")", "cycler.__init__.__globals__", ".os", ".getcwd()", "''.__class__", ".append(1)",
    "range(", "lipsum", "namespace(", "joiner()", "10 ** 5000", '"a" * 99999999',
]  # fmt: skip
FORMAT_PIECES = [
    "length", "min-len", "max-len", "valid-range", "min-val", "reading-time", "regex-match",
    "valid-choices", "ends-with", "two-words", "upper-case", "bug-free-sql", "is-json", "bias-free",
    ":", ";", " ", "{", "}", "[", "]", "(", ")", "'", '"', "=", "min=", "max=", "max_minutes=",
    "dialect=", "match_type=", "on_fail=", "1", "-1", "0", "1.5", "1e999", "nan", "True", "None",
    "99999999999999999999", "9" * 4400, "-" * 300, "1+" * 200, "\\", "*", "x",
]  # fmt: skip

# Well-formed specs, so the loaders get past the syntax into types, criteria and actions.
FORMATS = [
    "length: 1 10", "length: 5 1", "length: 1e999", "two-words", "valid-choices: {['a', 'b']}",
    "regex-match: {'^a'}", "regex-match: {'('}", "min-val: 0", "max-val: 1e999", "reading-time: 0",
    "reading-time: 1e308 1e308", "bug-free-sql", "bug-free-python", "ends-with: {[1]}", "is-json",
    "valid-range: 1 0", "valid-range: nan", "one-line; upper-case", "valid-url", "bias-free",
    "length: 'a'", "min-len: -1", ";;", "two-words: 1",
]  # fmt: skip
ATTRIBUTE_VALUES = [
    *FORMATS, "true", "false", "maybe", "fix", "reask", "filter", "refrain", "noop", "exception",
    "retry", "a, b", "", "%Y",
]  # fmt: skip
ATTRIBUTES = [
    "format", "description", "required", "on-fail-length", "on-fail-two-words", "on-fail-min-val",
    "on-fail-regex-match", "on-fail-x", "values", "type", "strict", "date-format",
]  # fmt: skip
TAGS = [
    "string", "integer", "float", "bool", "date", "time", "url", "enum", "object", "list", "sql",
    "unknown",
]  # fmt: skip


def _element(tag: str, attributes: dict[str, str], children: list[str]) -> str:
    from xml.sax.saxutils import quoteattr

    written = "".join(f" {key}={quoteattr(value)}" for key, value in attributes.items())
    return f"<{tag}{written}>{''.join(children)}</{tag}>"


_ATTRIBUTES = st.builds(
    lambda name, rest: {"name": name, **rest},
    st.text(alphabet="ab _-é", min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(ATTRIBUTES), st.sampled_from(ATTRIBUTE_VALUES), max_size=3),
)
_FIELDS = st.recursive(
    st.builds(_element, st.sampled_from(TAGS), _ATTRIBUTES, st.just([])),
    lambda inner: st.builds(
        _element, st.sampled_from(TAGS), _ATTRIBUTES, st.lists(inner, max_size=3)
    ),
    max_leaves=10,
)
RAIL_SPECS = st.builds(
    _element,
    st.just("output"),
    st.dictionaries(st.sampled_from(["format", "strict"]), st.sampled_from(FORMATS), max_size=1),
    st.lists(_FIELDS, max_size=4),
)

_NUMBER = st.sampled_from(["0", "3", "-1", "2.5", "1e3", "1e999", "99999999999999999999", "1e308"])
_CONSTRAINT = st.lists(
    st.tuples(st.sampled_from(["min", "max", "len_min", "len_max", "step"]), _NUMBER), max_size=3
).map(lambda pairs: " {" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}" if pairs else "")
_SCALAR = st.tuples(
    st.sampled_from(["str", "int", "float", "bool", "yesno", "code", "tasklist", "date"]),
    _CONSTRAINT,
).map("".join)
_KEY = st.sampled_from(["a", "b", "'a b'", '"a.b"', "x_y", "x-y", "'é'", "''"])


def _containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    array = st.tuples(inner, _CONSTRAINT).map(lambda t: f"[{t[0]}]{t[1]}")
    fields = st.lists(st.tuples(_KEY, inner), max_size=3)
    mapping = st.tuples(fields, _CONSTRAINT).map(
        lambda t: "{" + ", ".join(f"{k}: {v}" for k, v in t[0]) + "}" + t[1]
    )
    return array | mapping


PDL_SCHEMAS = st.recursive(_SCALAR, _containers, max_leaves=8)
FORMAT_SPECS = st.lists(st.sampled_from(FORMATS), max_size=4).map("; ".join)
_TURN = st.tuples(
    st.sampled_from(["user", "system", "assistant", "schema", "reasoning", "USER", "media"]),
    st.sampled_from(["hi", "{{ x }}", "{{ x | length }}", "&lt;|user|>", "", "<|media(a.png)|>"])
    | PDL_SCHEMAS,
).map(lambda turn: f"<|{turn[0]}|>\n{turn[1]}\n")
PDL_DOCUMENTS = st.lists(_TURN, min_size=1, max_size=5).map("".join)

REPLIES = [
    '{"value": "x"}', '{"value": [1]}', '{"a": "x", "b": 1}', '{"a": {"a": "X Y"}, "b": ["a"]}',
    '"text"', "plain text", "yes", "```\ncode\n```", "- [ ] a", "{}",
]  # fmt: skip


def _text(pieces: list[str], structured: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    joined = st.lists(st.sampled_from(pieces), max_size=24).map("".join)
    return st.one_of(structured, joined, st.text(max_size=200))


Load = Callable[[str], object]

LOADERS: dict[str, tuple[Load, st.SearchStrategy[str]]] = {
    "rail": (load_rail, _text(RAIL_PIECES, RAIL_SPECS)),
    "rail-strict": (lambda spec: load_rail(spec, strict=True), _text(RAIL_PIECES, RAIL_SPECS)),
    "pdl": (load_pdl, _text(PDL_PIECES, PDL_SCHEMAS)),
    "pdl-lenient": (lambda schema: load_pdl(schema, strict=False), _text(PDL_PIECES, PDL_SCHEMAS)),
    "pdl-template": (
        lambda text: load_pdl(text, context={"x": [1, 2]}),
        _text(TEMPLATE_PIECES, PDL_DOCUMENTS),
    ),
    "pdl-template-lenient": (
        lambda text: read_pdl(text, {"x": "<|user|>"}, strict=False).output,
        _text(TEMPLATE_PIECES, PDL_DOCUMENTS),
    ),
    "parse-format": (parse_format, _text(FORMAT_PIECES, FORMAT_SPECS)),
    "parse-criteria": (
        lambda spec: parse_criteria(spec, strict=False),
        _text(FORMAT_PIECES, FORMAT_SPECS),
    ),
}


def _use(output: object, reply: str) -> None:
    """What a call does with a loaded output type: its schema, instructions, and a reply parsed
    (which may fail only as model output fails: InvalidOutput, or a CommandError from a check)."""
    if not isinstance(output, OutputType):
        return
    _ = output.schema, output.instructions
    with contextlib.suppress(InvalidOutput, CommandError):
        output.parse(reply)


@pytest.mark.fuzz
@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_spec_loaders_raise_only_configuration_errors(loader: str, fuzz_scale: int) -> None:
    load, specs = LOADERS[loader]

    @settings(
        max_examples=100 * fuzz_scale,
        deadline=None,
        database=None,
        derandomize=fuzz_scale == 1,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(spec=specs, reply=st.sampled_from(REPLIES))
    def check(spec: str, reply: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SpecWarning)
            try:
                output = load(spec)
            except ConfigurationError:
                return
        _use(output, reply)

    check()
