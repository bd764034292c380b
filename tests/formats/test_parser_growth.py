"""Every text parser runs in time linear (or n log n) in the length of its input.

This is a complexity check, not a speed target. A parser gets the same short unit repeated to
about n characters, then to 2n, 4n, 8n and 16n, and fails when the time at 16n is more than 64
times the time at n (linear growth is about 16x, quadratic 256x); the steps on the way allow the
same slack in proportion, so a cubic parser fails after one step instead of hanging the run.

What is timed is the CPU time of the test's own thread (``time.thread_time``), not the wall
clock: on a busy machine a process waits for a core, and that wait, which once made a 2 ms
measurement read as 20 ms, is not CPU time. Each timing repeats the parse until it has spent at
least a few milliseconds (so a timer tick or one cache miss is noise inside it) and is the best
of three such runs, with the garbage collector off; a failure counts only when it repeats. A
parse that takes under a millisecond even at 16n is too fast to be super-linear and passes.

Hypothesis builds the units from pieces each parser's grammar gives meaning to; the inputs that
were once super-linear are listed as data below. ``make fuzz`` (``--fuzz-scale=50``) tries many
more units, at twice the size.
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from alloy._extract import extract_json
from alloy._output import InvalidOutput
from alloy._partial_json import JsonStream, Shape
from alloy.checks._spec import parse_format
from alloy.compat import load_pdl, load_rail, read_pdl
from alloy.errors import ConfigurationError
from alloy.formats import BoundedText, Code, KeyValues, TaskList, YesNo

pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings("ignore::alloy.checks.SpecWarning")]

Parse = Callable[[str], object]
Build = Callable[[int], str]

FLOOR = 0.001  # seconds of CPU per parse at the largest size: below this, nothing to tell
LIMIT = 64.0  # allowed time ratio at 16 times the size (linear: 16, quadratic: 256)
STEPS = (2, 4, 8, 16)
MIN_RUN = 0.004  # seconds of CPU: one timing repeats the parse at least this long
SLOW_RUN = 0.5  # seconds of CPU: one parse this slow needs no repeats to be trusted


def stream_json(text: str, chunk: int = 1) -> None:
    """The incremental JSON parser behind stream_partial() and stream_items(), fed ``text`` in
    chunks of ``chunk`` characters (one: the finest a stream could send it)."""
    parser = JsonStream(Shape(grow=True), bare_list=True)
    for start in range(0, len(text), chunk):
        parser.feed(text[start : start + chunk])


PARSERS: dict[str, Parse] = {
    "yesno": YesNo().parse,
    "code": Code().parse,
    "code-python": Code("python").parse,
    "tasklist": TaskList().parse,
    "keyvalues": KeyValues(["Thought", "Answer", "Final Answer"]).parse,
    "bounded-text": BoundedText(min=1, max=100).parse,
    "extract-json": extract_json,
    "json-stream": stream_json,
    "parse-format": parse_format,
    "pdl": load_pdl,
    "pdl-document": lambda text: read_pdl(text, strict=False),
    "pdl-template": lambda text: read_pdl(text, {"x": "<|user|>", "n": [1, 2]}, strict=False),
    "rail": load_rail,
}

# The pieces each parser's units are made of: what its grammar gives meaning to.
ALPHABETS: dict[str, list[str]] = {
    "yesno": [
        "yes", "no", "Yes", "NO", "answer", "is", "I don't know", "not sure", "do", "n't",
        " ", "  ", "\t", "\n", ".", "!", "?", ":", ";", ",", "*", "_", "`", '"', "(", "#", ">", "a",
    ],
    "code": ["`", "```", "~", "~~~", " ", "   ", "\t", "\n", "\r", "python", "py", "x", "{"],
    "code-python": ["`", "```", "~~~", " ", "\n", "python", "js", "x"],
    "tasklist": [
        "-", "*", "+", "1.", "2)", " ", "  ", "\t", "\n", "[", "]", "[ ]", "[x]", "X", "a", "- [ ] ",
    ],
    "keyvalues": [
        "Thought", "Answer", "Final Answer", "answer", ":", " ", "  ", "\t", "\n", "*", "**", "_",
        "__", "-", "#", ">", "1.", "x",
    ],
    "bounded-text": [" ", "\n", "x", "\t"],
    "extract-json": [
        "{", "}", "[", "]", '"', "'", "\\", ":", ",", " ", "\n", "a", "1", "true", "None", "<think>",
        "</think>", "```", "```json", "~~~", '{"a": ', "{'a': ", "x ", "[1, ",
    ],
    "json-stream": [
        "{", "}", "[", "]", '"', "\\", "\\u00e9", "\\ud83d", ":", ",", " ", "\n", "a", "1", "-", ".",
        "e", "E", "+", "0", "true", "nul", "false", '{"a": ', '"a": ', "[1, ", "9" * 50, "x",
    ],
    "parse-format": [
        ";", ":", " ", "{", "}", "[", "]", "'", '"', "=", "length", "1", "-", "two-words", "(",
        "a=b", "\\",
    ],
    "pdl": ["{", "}", "[", "]", ":", ",", " ", "str", "int", "a", "min", "1", "-1.5e3", '"', "'", "\n"],
    "pdl-document": [
        "<|user|>", "<|assistant|>", "<|system|>", "<|schema|>", "<|reasoning|>", "<|USER|>",
        "<|usr|>", "<|", "|>", "\n", " ", "\t", "a", "&lt;|", "&amp;", "<|media(", "<|raw_media(",
        "png:", "AAAA", ")|>", "{#", "#}", "{", "}", "str",
    ],
    "pdl-template": [
        "<|user|>", "\n", " ", "a", "{{ x }}", "{{ n | length }}", "{{ n[0] }}", "{#", "#}",
        "{% if n %}", "{% endif %}", "{% for i in n %}", "{% endfor %}", "{{", "}}", "{%", "%}",
        "&lt;|", "|",
    ],
    "rail": [
        "<output>", "</output>", '<string name="a"/>', '<object name="o">', "</object>",
        '<list name="l">', "</list>", " ", "\n", '<string format="two-words" name="b"/>', "<", ">",
        "&amp;", "<!--", "-->",
    ],
}  # fmt: skip

# Inputs that once took super-linear time, kept as regressions. Two more were slow without
# growing faster than linear: prose braces nested deep were parsed once per level (80 µs each),
# and a task's continuation lines were each copied with all the text before them.
WORST_CASES: dict[str, tuple[str, Build]] = {
    "a line of tildes ending in a backtick": ("code", lambda k: "~" * k + "`"),
    "blanks, a key, blanks and no colon": ("keyvalues", lambda k: " " * k + "Answer" + " " * k),
    "a run of newlines between words": ("yesno", lambda k: "a" + "\n " * k + "a"),
    "a task with a long gap of blanks": ("tasklist", lambda k: "- [ ] a" + " " * k + "b"),
    "a task with many continuation lines": ("tasklist", lambda k: "- [ ] a\n" + "  more\n" * k),
    "many unclosed reasoning tags": ("extract-json", lambda k: "<think>" * k),
    "one fence line that never ends": ("extract-json", lambda k: "```" + "a" * k),
    "an unclosed string of escaped quotes": ("extract-json", lambda k: '{"' + '\\"' * k),
    "single quotes after a bracket": ("extract-json", lambda k: "[" + "a '" * k),
    "prose braces nested deep": ("extract-json", lambda k: "{a" * k + "}" * k),
    "a Python set nested deep": ("extract-json", lambda k: "{x," * k + "x" + "}" * k),
    "a schema of many tokens": ("pdl", lambda k: "str" + " ," * k),
    "a whole number too long to read": ("json-stream", lambda k: '{"a": 1' + "0" * k + "}"),
    "a document of many turns": ("pdl-document", lambda k: "<|user|>\na\n<|assistant|>\nb\n" * k),
    "many unclosed comments": ("pdl-document", lambda k: "<|user|>\n" + "{# a " * k),
    "many unclosed media tokens": ("pdl-document", lambda k: "<|user|>\n" + "<|media(" * k),
    "a template of many values": ("pdl-template", lambda k: "<|user|>\n" + "{{ x }} " * k),
}


def _size(fuzz_scale: int) -> int:
    return 2048 if fuzz_scale == 1 else 4096


def _run(parse: Parse, text: str) -> None:
    with contextlib.suppress(InvalidOutput, ConfigurationError):
        parse(text)


def _cpu_time(parse: Parse, text: str, runs: int = 3) -> float:
    """CPU seconds one parse of ``text`` takes: the best of ``runs`` timings, each repeating the
    parse for at least MIN_RUN, all counted on this thread's clock (waits for a core excluded)."""
    gc.disable()
    try:
        start = time.thread_time()
        _run(parse, text)
        once = time.thread_time() - start
        if once > SLOW_RUN:
            return once
        repeats = max(1, math.ceil(MIN_RUN / once)) if once > 0 else 1000
        best = math.inf
        for _ in range(runs):
            start = time.thread_time()
            for _ in range(repeats):
                _run(parse, text)
            best = min(best, (time.thread_time() - start) / repeats)
    finally:
        gc.enable()
    return best


def _units_for(build: Build, size: int) -> int:
    """How many repetitions make the input about ``size`` characters long."""
    per_unit = max(1.0, (len(build(101)) - len(build(1))) / 100)
    return max(1, round(size / per_unit))


def _too_slow(base: float, elapsed: float, factor: int) -> bool:
    return elapsed > FLOOR and elapsed > base * LIMIT * factor / STEPS[-1]


def _growth_failure(parse: Parse, build: Build, size: int) -> tuple[str, bool] | None:
    """Why the time grows too fast from ``size`` to 16 times it, and whether one parse took so
    long that no repeat is needed to trust it; None when it does not grow too fast."""
    units = _units_for(build, size)
    small = build(units)
    base = _cpu_time(parse, small)
    for factor in STEPS:
        large = build(units * factor)
        elapsed = _cpu_time(parse, large)
        if _too_slow(base, elapsed, factor):
            return (
                f"{factor}x the input ({len(small)} -> {len(large)} characters) took "
                f"{elapsed / base:.0f}x the CPU time ({base * 1e3:.2f} -> {elapsed * 1e3:.1f} "
                f"ms); linear growth is about {factor}x. Input starts: {large[:60]!r}"
            ), elapsed > SLOW_RUN
    return None


def assert_linear(parse: Parse, build: Build, size: int, attempts: int = 3) -> None:
    """Fails when every attempt finds super-linear growth (a quadratic parser fails every time;
    what is left of a busy machine's noise comes and goes), or at once when the parse of the
    larger input was slow beyond doubt."""
    for attempt in range(attempts):
        failure = _growth_failure(parse, build, size)
        if failure is None:
            return
        message, certain = failure
        if certain or attempt == attempts - 1:
            pytest.fail(message)


@pytest.mark.parametrize(("parser", "build"), WORST_CASES.values(), ids=list(WORST_CASES))
def test_known_worst_cases_grow_linearly(parser: str, build: Build, fuzz_scale: int) -> None:
    assert_linear(PARSERS[parser], build, _size(fuzz_scale))


def test_a_long_token_streamed_in_small_chunks_grows_linearly() -> None:
    # A number's chunks were added to a string, copying every digit so far each time: quadratic,
    # though it shows only past some 100,000 characters (160K -> 640K digits took 14x the time).
    assert_linear(lambda text: stream_json(text, 4), lambda k: '{"a": 0.' + "1" * k + "}", 32768)


def _units(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), min_size=1, max_size=8).map("".join)


@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_parsers_grow_linearly_on_adversarial_units(parser: str, fuzz_scale: int) -> None:
    @settings(
        max_examples=10 * fuzz_scale,
        deadline=None,
        database=None,
        derandomize=fuzz_scale == 1,  # the suite always runs the same units
        phases=[Phase.explicit, Phase.generate],  # shrinking a timing failure is slow and noisy
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(unit=_units(ALPHABETS[parser]))
    def check(unit: str) -> None:
        assert_linear(PARSERS[parser], lambda k: unit * k, _size(fuzz_scale))

    check()
