"""Bad configuration values: each one is a ConfigurationError naming where it came from.

The table holds several bad values for every ``ALLOY_*`` variable; a test checks that it covers
every name in ``ENV_VARS``, so a new variable cannot ship without its rows. Values that are not
valid UTF-8 in the environment are written as surrogate escapes (``"\\udcff"``), which is how
Python shows such bytes in ``os.environ``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from alloy import ConfigurationError, command, configure, use_config
from alloy._config import ENV_VARS, OPTION_NAMES, _env_layer

NOT_UTF8 = "\udcff"  # the byte 0xFF in an environment decoded with surrogateescape


def fullwidth(text: str) -> str:
    """``text`` in fullwidth forms: digits and letters that look like ASCII but are not."""
    return "".join(chr(ord(char) + 0xFEE0) for char in text)


NON_FINITE = ("nan", "NaN", "inf", "-inf", "Infinity", "1e400")
HUGE = ("99999999999999999999999", "9" * 5000)

SECONDS = (
    "soon",
    "true",
    "0",
    "-0",
    "-1",
    "-0.5",
    "1,5",
    "5 s",
    fullwidth("5"),
    NOT_UTF8,
    *NON_FINITE,
    *HUGE,
)
AT_LEAST_ONE = (
    "lots",
    "true",
    "0",
    "-1",
    "3.5",
    "1e3",
    "1 000",
    fullwidth("12"),
    "0x10",
    NOT_UTF8,
    *NON_FINITE,
    *HUGE,
)
NOT_NEGATIVE = ("two", "true", "-1", "3.5", "1e3", fullwidth("1"), NOT_UTF8, *NON_FINITE, *HUGE)
BOOLEAN = ("maybe", "2", "-1", "truee", "t rue", fullwidth("true"), "nan", "yes please", NOT_UTF8)
SYSTEM = (NOT_UTF8, "Be terse.\udce9", "caf\udcc3\udca9 \udce9")

BAD_VALUES: dict[str, tuple[str, ...]] = {
    "ALLOY_MODEL": (
        "nosuch:model",
        "gpt5",
        "openai:",
        "ollama:",
        "anthropic:",
        "openai-chat:",
        "openai",
        "ollama",
        ":gpt-5",
        "gpt-5 mini",
        "open ai:gpt-5",
        "openai:gpt-5\x1b",
        fullwidth("openai") + ":gpt-5",
        "gpt-" + fullwidth("5"),
        "true",
        "0.5",
        NOT_UTF8,
    ),
    "ALLOY_TEMPERATURE": (
        ("warm", "true", "-0.1", "2.5", "0,5", fullwidth("0.5"), NOT_UTF8, *NON_FINITE, *HUGE)
    ),
    "ALLOY_MAX_TOKENS": AT_LEAST_ONE,
    "ALLOY_SYSTEM": SYSTEM,
    "ALLOY_DEFAULT_SYSTEM": SYSTEM,
    "ALLOY_RETRY": NOT_NEGATIVE,
    "ALLOY_RETRIES": NOT_NEGATIVE,
    "ALLOY_MAX_TOOL_TURNS": AT_LEAST_ONE,
    "ALLOY_PARALLEL_TOOLS_MAX": AT_LEAST_ONE,
    "ALLOY_AUTO_FINALIZE_MISSING_OUTPUT": BOOLEAN,
    "ALLOY_TIMEOUT": SECONDS,
    "ALLOY_EXTRA_JSON": (
        "{",
        "{'top_p': 0.9}",
        '{"top_p": 0.9} trailing',
        "[1]",
        '"text"',
        "null",
        "42",
        "true",
        '{"x": NaN}',
        '{"x": Infinity}',
        '{"x": -Infinity}',
        '{"a": {"b": [1, NaN]}}',
        '{"x": 1e400}',
        '{"x": 1' + "0" * 5000 + "}",
        "[" * 100_000,
        '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"x": "\\ud800"}',
        NOT_UTF8,
    ),
    "ALLOY_MAX_REASKS": NOT_NEGATIVE,
    "ALLOY_OUTPUT_MODE": (
        "telepathy",
        "NATIVE",
        "native,tool",
        "nat ive",
        fullwidth("native"),
        "0",
        "true",
        NOT_UTF8,
    ),
    "ALLOY_REQUIRE_ENFORCEMENT": (
        "strict",
        "NATIVE-STRICT",
        "native_strict",
        "native,tool",
        fullwidth("native"),
        "0",
        NOT_UTF8,
    ),
    "ALLOY_TOOL_ERRORS": (
        "ignore",
        "RAISE",
        "report,raise",
        fullwidth("raise"),
        "0",
        "true",
        NOT_UTF8,
    ),
    "ALLOY_SKIP_RAILS": (
        "bogus",
        "input,bogus",
        "input;output",
        "in put",
        fullwidth("input"),
        "true",
        NOT_UTF8,
    ),
    "ALLOY_TOKEN_BUDGET": AT_LEAST_ONE,
    "ALLOY_COST_BUDGET": (
        "lots",
        "true",
        "0",
        "-1",
        "-0.5",
        "1,5",
        "5 USD",
        "$",
        "1_0",
        fullwidth("5"),
        NOT_UTF8,
        *NON_FINITE,
    ),
    "ALLOY_FALLBACK_MODELS": (
        "nosuch:model",
        "gpt5",
        "openai:",
        "anthropic",
        "anthropic:claude-sonnet-4-5,nosuch:model",
        "openai:gpt-5-mini ollama:llama3.2",
        "openai:gpt-5\x1b",
        fullwidth("openai") + ":gpt-5",
        "true",
        NOT_UTF8,
    ),
    "ALLOY_LOG_CONTENT": BOOLEAN,
    "ALLOY_REASONING_EFFORT": (
        "extreme",
        "HIGH",
        "high,low",
        "-1",
        "3.5",
        "true",
        fullwidth("1024"),
        NOT_UTF8,
        *NON_FINITE,
        *HUGE,
    ),
    "ALLOY_PROMPT_CACHE": BOOLEAN,
    "ALLOY_PROMPT_CACHE_KEY": ("k" * 65, "tenant\x1b1", "line\nbreak", NOT_UTF8),
    "ALLOY_CACHED_CONTENT": ("cached Contents/abc", "cachedContents/é", "tab\tname", NOT_UTF8),
    "ALLOY_CACHE": ("http://localhost/cache", "s3://bucket/key", "mysql://db", NOT_UTF8),
    "ALLOY_CACHE_MODE": ("replays", "REPLAY", "on", "read-write", NOT_UTF8),
    "ALLOY_CACHE_TTL": ("forever", "true", "0", "-1", "1e12", *NON_FINITE, NOT_UTF8),
    "ALLOY_CACHE_MAX_ENTRIES": AT_LEAST_ONE,
    "ALLOY_CACHE_ALL": BOOLEAN,
    # Options on their way in: their rows run once the variables exist.
    "ALLOY_DEADLINE": SECONDS,
    "ALLOY_TOOL_TIMEOUT": SECONDS,
}


@command(output=int)
def number() -> str:
    return "a number"


def alloy_variables() -> set[str]:
    return {name for names in ENV_VARS.values() for name in names}


def short_id(value: str) -> str:
    shown = ascii(value)
    return shown if len(shown) <= 40 else f"{shown[:30]}...({len(value)} chars)"


def test_the_table_covers_every_alloy_variable() -> None:
    assert alloy_variables() - set(BAD_VALUES) == set()


def test_there_are_several_bad_values_per_variable() -> None:
    assert min(len(values) for values in BAD_VALUES.values()) >= 3


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        pytest.param(variable, value, id=f"{variable}={short_id(value)}")
        for variable, values in BAD_VALUES.items()
        for value in values
    ],
)
def test_a_bad_value_fails_the_first_call_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    if variable not in alloy_variables():
        pytest.skip(f"{variable} is not read by alloy yet")
    if variable != "ALLOY_MODEL":
        monkeypatch.setenv("ALLOY_MODEL", "offline")
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as info:
        number()
    assert variable in str(info.value)


def test_a_bad_value_is_refused_on_every_call_not_only_the_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    monkeypatch.setenv("ALLOY_TIMEOUT", "nan")
    for _ in range(2):
        with pytest.raises(ConfigurationError, match="ALLOY_TIMEOUT"):
            number()


def test_an_error_never_repeats_a_value_that_is_not_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    monkeypatch.setenv("ALLOY_SYSTEM", "sk-secret\udcff")
    with pytest.raises(ConfigurationError) as info:
        number()
    assert "sk-secret" not in str(info.value)


@pytest.mark.parametrize("blank", ["", "   ", "\t", "\n"])
@pytest.mark.parametrize("variable", sorted(alloy_variables()))
def test_an_empty_or_blank_variable_counts_as_unset(
    monkeypatch: pytest.MonkeyPatch, variable: str, blank: str
) -> None:
    monkeypatch.setenv(variable, blank)
    assert _env_layer() == {}
    if variable != "ALLOY_MODEL":
        monkeypatch.setenv("ALLOY_MODEL", "offline")
        assert isinstance(number(), int)


@pytest.mark.parametrize(
    ("variable", "value", "option", "expected"),
    [
        ("ALLOY_MODEL", "offline", "model", "offline"),
        ("ALLOY_MODEL", "offline:", "model", "offline:"),
        ("ALLOY_MODEL", " openai:gpt-5-mini ", "model", "openai:gpt-5-mini"),
        ("ALLOY_MODEL", "gemini:", "model", "gemini:"),
        ("ALLOY_MODEL", "ollama:llama3.2:latest", "model", "ollama:llama3.2:latest"),
        ("ALLOY_MODEL", "openai-chat:meta-llama/llama-3.1-8b", "model", None),
        ("ALLOY_TIMEOUT", " 7.5 ", "timeout", 7.5),
        ("ALLOY_TIMEOUT", "86400", "timeout", 86400.0),
        ("ALLOY_TEMPERATURE", "0", "temperature", 0.0),
        ("ALLOY_TEMPERATURE", "2", "temperature", 2.0),
        ("ALLOY_MAX_TOKENS", "2147483647", "max_tokens", 2147483647),
        ("ALLOY_RETRY", "0", "retries", 0),
        ("ALLOY_COST_BUDGET", " 2.50 ", "cost_budget", 2.5),
        ("ALLOY_COST_BUDGET", "$0.01", "cost_budget", 0.01),
        ("ALLOY_SKIP_RAILS", "input, output,", "skip_rails", ("input", "output")),
        (
            "ALLOY_FALLBACK_MODELS",
            " anthropic:claude-sonnet-4-5 ,, ollama:llama3.2:latest,",
            "fallback",
            ("anthropic:claude-sonnet-4-5", "ollama:llama3.2:latest"),
        ),
        ("ALLOY_LOG_CONTENT", " YES ", "log_content", True),
        ("ALLOY_REASONING_EFFORT", " high ", "reasoning_effort", "high"),
        ("ALLOY_REASONING_EFFORT", "2048", "reasoning_effort", 2048),
        ("ALLOY_REASONING_EFFORT", "0", "reasoning_effort", 0),
        ("ALLOY_PROMPT_CACHE", "on", "prompt_cache", True),
        ("ALLOY_PROMPT_CACHE_KEY", "k" * 64, "prompt_cache_key", "k" * 64),
        ("ALLOY_CACHED_CONTENT", "cachedContents/abc-123", "cached_content", None),
        ("ALLOY_SYSTEM", "Réponds en français. 日本語も。", "system", None),
        ("ALLOY_EXTRA_JSON", '{"top_p": 0.9, "n": [1, 2.5e3]}', "extra_json", None),
    ],
)
def test_good_values_near_the_edges_are_accepted(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, option: str, expected: Any
) -> None:
    monkeypatch.setenv(variable, value)
    layer = _env_layer()
    assert option in layer
    if expected is not None:
        assert layer[option] == expected


def test_a_provider_registered_after_a_refused_call_is_used_by_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from alloy.providers import register_provider
    from alloy.testing import FunctionModel, json_reply

    monkeypatch.setenv("ALLOY_MODEL", "acme:m1")
    with pytest.raises(ConfigurationError, match="ALLOY_MODEL"):
        number()
    register_provider(
        "acme", lambda model_id, **_: FunctionModel(lambda r: json_reply(3, wrap=True))
    )
    assert number() == 3


# -- non-finite and out-of-range numbers from Python, named by where they came from --

Apply = Callable[[dict[str, Any]], None]


def through_configure(options: dict[str, Any]) -> None:
    configure(**options)


def through_use_config(options: dict[str, Any]) -> None:
    with use_config(**options):
        pass


def through_the_decorator(options: dict[str, Any]) -> None:
    command(output=int, **options)(lambda: "x")


def through_with_options(options: dict[str, Any]) -> None:
    number.with_options(**options)


SOURCES: dict[str, tuple[Apply, str]] = {
    "configure": (through_configure, "configure()"),
    "use_config": (through_use_config, "use_config()"),
    "decorator": (through_the_decorator, "@command"),
    "with_options": (through_with_options, "with_options()"),
}

NAN, INF = math.nan, math.inf
BAD_PYTHON_VALUES: list[tuple[str, Any]] = [
    ("timeout", NAN),
    ("timeout", INF),
    ("timeout", -INF),
    ("timeout", 1e23),
    ("timeout", True),
    ("temperature", NAN),
    ("temperature", -INF),
    ("temperature", True),
    ("max_tokens", 10**30),
    ("max_tokens", True),
    ("retries", 10**30),
    ("token_budget", False),
    ("cost_budget", 0),
    ("cost_budget", -1.5),
    ("cost_budget", NAN),
    ("cost_budget", INF),
    ("cost_budget", True),
    ("cost_budget", "five dollars"),
    ("reasoning_effort", True),
    ("reasoning_effort", -1),
    ("reasoning_effort", "HIGH"),
    ("prompt_cache_key", ""),
    ("prompt_cache_key", "k" * 65),
    ("cached_content", ""),
    ("extra_json", {"x": INF}),
    ("extra_json", {"x": NAN}),
    ("extra_json", {"a": {"b": [1, {"c": -INF}]}}),
    ("extra_json", {"a": (1.0, NAN)}),
    ("extra_json", {"text": "\ud800"}),
    ("system", "\udcff"),
    ("deadline", NAN),
    ("deadline", INF),
    ("tool_timeout", NAN),
    ("tool_timeout", -INF),
]


@pytest.fixture(params=sorted(SOURCES))
def source(request: pytest.FixtureRequest) -> Iterator[tuple[Apply, str]]:
    yield SOURCES[request.param]


@pytest.mark.parametrize(
    ("option", "value"),
    [pytest.param(o, v, id=f"{o}={v!r}") for o, v in BAD_PYTHON_VALUES],
)
def test_a_bad_python_value_is_refused_where_it_is_written(
    source: tuple[Apply, str], option: str, value: Any
) -> None:
    if option not in OPTION_NAMES:
        pytest.skip(f"{option} is not an alloy option yet")
    apply, where = source
    with pytest.raises(ConfigurationError) as info:
        apply({option: value})
    message = str(info.value)
    assert repr(option) in message and where in message


def test_a_self_referencing_extra_json_is_checked_without_looping() -> None:
    extra: dict[str, Any] = {"x": 1.0}
    extra["self"] = extra
    configure(extra_json=extra)
    extra["y"] = NAN
    with pytest.raises(ConfigurationError, match="extra_json"):
        configure(extra_json=dict(extra))
