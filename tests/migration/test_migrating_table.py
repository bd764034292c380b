"""docs/migrating.md's table of alloy-ai names and options, checked row by row against the code.

Every row of the table has a probe here that does what its first column says, written as
alloy-ai code would; the test runs it and checks the status the table gives: ``runs unchanged``
(no error, no warning), ``warns`` (a DeprecationWarning) or ``refused`` (an error). Where a row
names a replacement, ``named`` is that text: it must be in the row's middle column and in the
warning or error message, so the page and the code say the same thing. The rows and the probes
must be the same set, so the table cannot lose a row, or gain one that nothing checks.

The list of names comes from alloy-ai 0.3.1's API reference (``docs/api``), its configuration
guide and its package ``__all__``.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import alloy
from alloy import command, configure, ensure, require, tool
from alloy.testing import override_model, script, tool_call

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
ROW = re.compile(r"^\| (.+?) \| (.+?) \| (runs unchanged|warns|refused) \|$", re.MULTILINE)


def table() -> dict[str, tuple[str, str]]:
    rows: dict[str, tuple[str, str]] = {}
    for alloy_ai, ours, status in ROW.findall(PAGE.read_text(encoding="utf-8")):
        assert alloy_ai not in rows, f"two rows for {alloy_ai}"
        rows[alloy_ai] = (ours, status)
    return rows


@dataclass(frozen=True)
class Probe:
    run: Callable[[], Any]
    #: The replacement the row names, which the warning or error must name too.
    named: str | None = None


# -- helpers the probes share -------------------------------------------------------------------


def text_command(**options: Any) -> Any:
    @command(**options)
    def summarize(text: str) -> str:
        return f"Summarize: {text}"

    return summarize


@dataclass
class Article:
    title: str
    points: list[str]


@tool
@require(lambda ba: ba.arguments.get("x", 0) >= 0, "x must be non-negative")
@ensure(lambda r: r >= 0, "result must be non-negative")
def sqrt_floor(x: int) -> int:
    """Integer square root."""
    return int(x**0.5)


def expect(condition: bool) -> None:
    assert condition


def import_names(module: str, *names: str) -> None:
    loaded = importlib.import_module(module)
    for name in names:
        getattr(loaded, name)


def typed_dict_output() -> None:
    from typing import TypedDict

    class Product(TypedDict):
        name: str
        price: float

    expect(isinstance(command(output=Product)(lambda: "Make a product")(), dict))


def with_env(name: str, value: str, run: Callable[[], Any] | None = None) -> Callable[[], Any]:
    def probe() -> Any:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(name, value)
            return (run or (lambda: text_command()("x")))()

    return probe


def unforced(run: Callable[[], Any]) -> Callable[[], Any]:
    """``run`` without the forced offline model, for rows about choosing a model."""

    def probe() -> Any:
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("ALLOY_FORCE_MODEL")
            return run()

    return probe


def tool_loop_attributes() -> None:
    @command(tools=[sqrt_floor], max_tool_turns=1)
    def loop() -> str:
        return "Keep going"

    calls = script(tool_call("sqrt_floor", {"x": 4}), tool_call("sqrt_floor", {"x": 9}))
    with override_model(calls):
        try:
            loop()
        except alloy.ToolLoopLimitExceeded as error:
            assert (error.max_turns, error.turns_taken, error.partial_text) == (1, 1, None)
        else:
            raise AssertionError("the loop did not stop")


async def async_prompt(text: str) -> str:
    return f"Title for {text}"


def drain(chunks: Any) -> str:
    async def collect() -> str:
        return "".join([chunk async for chunk in chunks])

    return asyncio.run(collect())


def imported(module: str, name: str) -> Any:
    """``from module import name``, as alloy-ai code writes it."""
    return getattr(importlib.import_module(module), name)


def created_tool_loop_error() -> None:
    from alloy.errors import create_tool_loop_exception  # type: ignore[attr-defined]

    error = create_tool_loop_exception(max_turns=3, turns_taken=3, partial_text="so far")
    assert isinstance(error, alloy.ToolLoopLimitExceeded)
    assert (error.max_turns, error.turns_taken, error.partial_text) == (3, 3, "so far")
    assert str(error).startswith("Exceeded tool-call turn limit (max_tool_turns=3, turns_taken=3)")


def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def plain_function_tool() -> None:
    for run in (command(tools=[word_count])(lambda text: text), alloy.ask):
        with override_model(script(tool_call("word_count", {"text": "a b c"}), "3 words")):
            expect(run("Count") == "3 words")


def int_annotated_prompt() -> None:
    @command(output=int)
    def count(text: str) -> int:  # type: ignore[return-value]
        return f"How many words in: {text}"  # type: ignore[return-value]

    expect(isinstance(count("a b"), int))


def direct_tool_call() -> None:
    expect(sqrt_floor(50) == 7)
    try:
        sqrt_floor(-1)
    except alloy.ToolError as error:
        assert "x must be non-negative" in str(error)
    else:
        raise AssertionError("the require contract did not hold")


def merged_config() -> None:
    config = legacy_config("Config")
    both = config(temperature=0.1, extra={"a": 1}).merged(
        config(default_system="S", extra={"b": 2})
    )
    assert (both.temperature, both.default_system, both.extra) == (0.1, "S", {"a": 1, "b": 2})


def legacy_config(name: str) -> Any:
    return getattr(importlib.import_module("alloy.config"), name)


def extra_key(key: str, value: Any) -> Callable[[], Any]:
    return lambda: configure(extra={key: value})


PROBES: dict[str, Probe] = {
    # The package
    "`from alloy import command, tool, require, ensure, ask, configure`": Probe(
        lambda: import_names("alloy", "command", "tool", "require", "ensure", "ask", "configure")
    ),
    "`from alloy import CommandError, ToolError, ConfigurationError, ToolLoopLimitExceeded`": Probe(
        lambda: (
            import_names(
                "alloy", "CommandError", "ToolError", "ConfigurationError", "ToolLoopLimitExceeded"
            ),
            expect(issubclass(alloy.ToolError, alloy.CommandError)),
        )
    ),
    "`from alloy.errors import AlloyError`": Probe(
        lambda: import_names("alloy.errors", "AlloyError")
    ),
    "`alloy.errors.create_tool_loop_exception(...)`": Probe(
        created_tool_loop_error, named="ToolLoopLimitExceeded(message, max_turns=..., turns_taken="
    ),
    "`error.max_turns`, `error.turns_taken`, `error.partial_text` on `ToolLoopLimitExceeded`": Probe(
        tool_loop_attributes
    ),
    "`ToolLoopLimitExceeded(message, max_turns=..., turns_taken=..., partial_text=...)`": Probe(
        lambda: expect(
            alloy.ToolLoopLimitExceeded("m", max_turns=2, turns_taken=2, partial_text="p").output
            == "p"
        )
    ),
    # @command
    "`@command` and `@command(...)` on a function that returns the prompt": Probe(
        lambda: (command(lambda: "Say hi")(), text_command(temperature=0.1)("x"))
    ),
    "`output=T` for a dataclass, a primitive or `list[T]`": Probe(
        lambda: [command(output=t)(lambda: "Make one")() for t in (Article, float, list[int])]
    ),
    "`output=None`": Probe(lambda: expect(command(output=None)(lambda: "Do it")() is None)),
    "`output=dict`, `output=list[dict]` or `output=Any`": Probe(
        lambda: command(output=list[dict])(lambda: "Map it"), named="@dataclass"
    ),
    "`output=` a `typing.TypedDict` on Python 3.10 or 3.11": Probe(typed_dict_output),
    "`tools=[...]`": Probe(lambda: command(output=int, tools=[sqrt_floor])(lambda: "Use it")()),
    "`tools=[...]` with plain functions, not decorated with `@tool`": Probe(plain_function_tool),
    "`model=`, `temperature=`, `max_tokens=` and `system=`": Probe(
        lambda: text_command(model="gpt-5-mini", temperature=0.2, max_tokens=100, system="S")("x")
    ),
    "`retry=N`": Probe(lambda: text_command(retry=3)("x"), named="retries=N-1"),
    "`retry_on=SomeError`": Probe(lambda: text_command(retry_on=ValueError), named="max_reasks="),
    "a prompt function that returns `None`, such as one with only a docstring": Probe(
        lambda: command(lambda: None)(), named="return the prompt text"
    ),
    "a prompt function annotated with a return type other than `str`, such as `-> int` (alloy-ai refused it)": Probe(
        int_annotated_prompt
    ),
    # Commands
    "`cmd(...)`": Probe(lambda: text_command()("x")),
    "`await cmd.async_(...)`": Probe(lambda: asyncio.run(text_command().async_("x"))),
    "`await cmd(...)` on an `async def` prompt function": Probe(
        lambda: asyncio.run(command(async_prompt)("x"))
    ),
    "`cmd.stream(...)` on a text command: no `output=`, or `output=str`": Probe(
        lambda: (list(text_command().stream("x")), list(text_command(output=str).stream("x")))
    ),
    "`cmd.stream(...)` on an `async def` prompt function": Probe(
        lambda: drain(command(async_prompt).stream("x"))
    ),
    "`cmd.stream(...)` on a command with `tools=`": Probe(
        lambda: list(command(tools=[sqrt_floor])(lambda: "Use it").stream())
    ),
    "`cmd.stream(...)` on a command with a typed `output=`": Probe(
        lambda: command(output=float)(lambda: "Price").stream(),
        named="stream_partial()",
    ),
    # Tools
    "`@tool`, with `@require(...)` and `@ensure(...)` contracts": Probe(
        lambda: expect(len(sqrt_floor.contracts) == 2)
    ),
    "calling a `@tool` function directly from Python": Probe(direct_tool_call),
    "`my_tool.spec` and `my_tool.spec.as_schema()`": Probe(
        lambda: sqrt_floor.spec.as_schema(),  # type: ignore[attr-defined]
        named=".definition",
    ),
    # ask
    "`ask(prompt)`": Probe(lambda: alloy.ask("Say hi")),
    "`ask(prompt, context={...})`": Probe(lambda: alloy.ask("Outline", context={"text": "t"})),
    "`ask(prompt, tools=[...])`": Probe(lambda: alloy.ask("Use it", tools=[sqrt_floor])),
    "`ask(prompt, model=..., temperature=...)` and the other options": Probe(
        lambda: alloy.ask("x", model="gpt-5-mini", temperature=0.2, max_tool_turns=3)
    ),
    "`ask(prompt, default_system=...)`": Probe(
        lambda: alloy.ask("x", default_system="S"), named="system="
    ),
    "`ask.stream(prompt, ...)`": Probe(
        lambda: list(alloy.ask.stream("x", context={"a": 1}, tools=[sqrt_floor]))
    ),
    "`ask.stream_async(prompt, ...)`": Probe(
        lambda: drain(alloy.ask.stream_async("x")), named="ask.astream("
    ),
    # Options of configure(), Config and ask()
    "`model=`": Probe(lambda: configure(model="gpt-5-mini")),
    "`temperature=`": Probe(lambda: configure(temperature=0.7)),
    "`max_tokens=`": Probe(lambda: configure(max_tokens=512)),
    "`default_system=`": Probe(lambda: configure(default_system="S"), named="system="),
    "`retry=N` in `configure()`, `Config` or `ask()`": Probe(
        lambda: configure(retry=2), named="retries=N-1"
    ),
    "`retry_on=SomeError` in `configure()`, `Config` or `ask()`": Probe(
        lambda: configure(retry_on=TimeoutError), named="max_reasks="
    ),
    "`max_tool_turns=`": Probe(lambda: configure(max_tool_turns=3)),
    "`auto_finalize_missing_output=`": Probe(lambda: configure(auto_finalize_missing_output=False)),
    "`parallel_tools_max=`": Probe(lambda: configure(parallel_tools_max=2)),
    "`extra={...}`": Probe(lambda: configure(extra={"top_p": 0.9}), named="extra_json="),
    '`extra={"openai_tool_choice": ...}`': Probe(
        extra_key("openai_tool_choice", "auto"), named='extra_json={"tool_choice": ...}'
    ),
    '`extra={"anthropic_tool_choice": ...}`': Probe(
        extra_key("anthropic_tool_choice", {"type": "any"}),
        named='extra_json={"tool_choice": {"type": "auto"}}',
    ),
    '`extra={"anthropic_disable_parallel_tool_use": True}`': Probe(
        extra_key("anthropic_disable_parallel_tool_use", True),
        named='"disable_parallel_tool_use": true',
    ),
    '`extra={"gemini_tool_choice": ...}`': Probe(
        extra_key("gemini_tool_choice", "ANY"), named='"functionCallingConfig": {"mode": "ANY"}'
    ),
    '`extra={"gemini_allowed_tools": [...]}`': Probe(
        extra_key("gemini_allowed_tools", ["f"]), named='"allowedFunctionNames"'
    ),
    '`extra={"ollama_api": ...}`': Probe(
        extra_key("ollama_api", "openai_chat"), named="openai-chat:<model>"
    ),
    '`extra={"ollama_tool_choice": ...}`': Probe(
        extra_key("ollama_tool_choice", "auto"), named='extra_json={"tool_choice": ...}'
    ),
    # The alloy.config module
    "`from alloy.config import Config`": Probe(
        lambda: legacy_config("Config"), named="use_config(temperature=0.0)"
    ),
    "`with alloy.config.use_config(Config(...)):`": Probe(
        lambda: _enter(legacy_config("use_config")), named="alloy.use_config"
    ),
    "`alloy.config.configure(...)`": Probe(
        lambda: legacy_config("configure")(temperature=0.1), named="from alloy import configure"
    ),
    "`alloy.config.get_config()`": Probe(
        lambda: legacy_config("get_config")().system, named="alloy.Config"
    ),
    "`alloy.config.get_config(overrides={...})`": Probe(
        lambda: expect(
            legacy_config("get_config")(overrides={"temperature": 0.3}).temperature == 0.3
        ),
        named="alloy.Config",
    ),
    "`Config(...).merged(other)`": Probe(merged_config, named="use_config(temperature=0.0)"),
    "`alloy.config.log`, its logger": Probe(
        lambda: expect(legacy_config("log").name == "alloy"), named='logging.getLogger("alloy")'
    ),
    "`alloy.config.DEFAULT_PARALLEL_TOOLS_MAX`": Probe(
        lambda: expect(legacy_config("DEFAULT_PARALLEL_TOOLS_MAX") == 8),
        named="alloy.Config().parallel_tools_max",
    ),
    # alloy-ai's other modules
    "`from alloy.command import command`": Probe(
        lambda: expect(imported("alloy.command", "command") is alloy.command),
        named="from alloy import command",
    ),
    "`from alloy.command import Command`": Probe(
        lambda: expect(isinstance(text_command(), imported("alloy.command", "Command"))),
        named="alloy.Command",
    ),
    "`from alloy.ask import ask`": Probe(
        lambda: expect(imported("alloy.ask", "ask")("Say hi") != ""), named="from alloy import ask"
    ),
    "`from alloy.tool import tool, require, ensure`": Probe(
        lambda: import_names("alloy.tool", "tool", "require", "ensure"), named="from alloy import"
    ),
    "`from alloy.tool import ToolCallable`": Probe(
        lambda: expect(isinstance(sqrt_floor, imported("alloy.tool", "ToolCallable"))),
        named="alloy.Tool",
    ),
    "`from alloy.tool import Contract`": Probe(
        lambda: expect(isinstance(sqrt_floor.contracts[0], imported("alloy.tool", "Contract"))),
        named="my_tool.contracts",
    ),
    "`from alloy.tool import Predicate`": Probe(
        lambda: import_names("alloy.tool", "Predicate"), named="Callable[[Any], bool]"
    ),
    "`from alloy.tool import ToolSpec`": Probe(
        lambda: import_names("alloy.tool", "ToolSpec"), named="my_tool.definition"
    ),
    "`from alloy.types import to_json_schema`": Probe(
        lambda: import_names("alloy.types", "to_json_schema"), named="cmd.schema"
    ),
    "`from alloy.types import parse_output`": Probe(
        lambda: import_names("alloy.types", "parse_output"),
        named="pydantic.TypeAdapter(T).validate_json(text)",
    ),
    "`from alloy.types import is_dataclass_type`": Probe(
        lambda: expect(imported("alloy.types", "is_dataclass_type")(Article)),
        named="dataclasses.is_dataclass",
    ),
    "`from alloy.types import is_typeddict_type`": Probe(
        lambda: expect(not imported("alloy.types", "is_typeddict_type")(Article)),
        named="typing_extensions.is_typeddict",
    ),
    "`from alloy.types import to_jsonable`": Probe(
        lambda: import_names("alloy.types", "to_jsonable"),
        named="pydantic_core.to_jsonable_python(value)",
    ),
    "`from alloy.types import flatten_property_paths`": Probe(
        lambda: import_names("alloy.types", "flatten_property_paths"), named="cmd.schema"
    ),
    "`from alloy.models.base import ModelBackend, BaseLoopState, ToolCall, ToolResult, get_backend`, and its helpers `should_finalize_structured_output`, `serialize_tool_payload`, `ensure_object_schema`, `build_tools_common`, `STRICT_JSON_ONLY_MSG`": Probe(
        lambda: import_names("alloy.models.base", "ModelBackend"), named="alloy.register_provider"
    ),
    "`from alloy.models.openai import OpenAIBackend, OpenAILoopState`": Probe(
        lambda: import_names("alloy.models.openai", "OpenAIBackend"), named='"openai:<model>"'
    ),
    "`from alloy.models.anthropic import AnthropicBackend, AnthropicLoopState`": Probe(
        lambda: import_names("alloy.models.anthropic", "AnthropicBackend"),
        named='"anthropic:<model>"',
    ),
    "`from alloy.models.gemini import GeminiBackend, GeminiLoopState`": Probe(
        lambda: import_names("alloy.models.gemini", "GeminiBackend"), named='"gemini:<model>"'
    ),
    "`from alloy.models.ollama import OllamaBackend, OllamaLoopState, OllamaOpenAIChatLoopState`": Probe(
        lambda: import_names("alloy.models.ollama", "OllamaBackend"), named='"ollama:<model>"'
    ),
    "`from alloy.react import react_complete, react_stream` (stubs that raised `NotImplementedError`)": Probe(
        lambda: import_names("alloy.react", "react_complete"), named="tools=[...]"
    ),
    # Environment variables and model names
    "`ALLOY_MODEL`": Probe(unforced(with_env("ALLOY_MODEL", "offline"))),
    "no model set anywhere (alloy-ai used `gpt-5-mini`)": Probe(
        unforced(lambda: text_command()("x")), named="ALLOY_MODEL"
    ),
    "`ALLOY_TEMPERATURE`": Probe(with_env("ALLOY_TEMPERATURE", "0.3")),
    "`ALLOY_MAX_TOKENS`": Probe(with_env("ALLOY_MAX_TOKENS", "256")),
    "`ALLOY_DEFAULT_SYSTEM`": Probe(with_env("ALLOY_DEFAULT_SYSTEM", "Be brief.")),
    "`ALLOY_SYSTEM`": Probe(with_env("ALLOY_SYSTEM", "Be brief.")),
    "`ALLOY_RETRY`": Probe(with_env("ALLOY_RETRY", "3")),
    "`ALLOY_MAX_TOOL_TURNS`": Probe(with_env("ALLOY_MAX_TOOL_TURNS", "4")),
    "`ALLOY_PARALLEL_TOOLS_MAX`": Probe(with_env("ALLOY_PARALLEL_TOOLS_MAX", "2")),
    "`ALLOY_AUTO_FINALIZE_MISSING_OUTPUT`": Probe(
        with_env("ALLOY_AUTO_FINALIZE_MISSING_OUTPUT", "false")
    ),
    "`ALLOY_EXTRA_JSON`": Probe(with_env("ALLOY_EXTRA_JSON", '{"top_p": 0.9}')),
    "an `ALLOY_*` value that doesn't parse, such as `ALLOY_TEMPERATURE=warm`": Probe(
        with_env("ALLOY_TEMPERATURE", "warm"), named="ALLOY_TEMPERATURE"
    ),
    "`ALLOY_BACKEND=fake`": Probe(
        unforced(with_env("ALLOY_BACKEND", "fake")), named="ALLOY_FORCE_MODEL=offline"
    ),
    "`ALLOY_BACKEND` set to anything else": Probe(
        unforced(with_env("ALLOY_BACKEND", "openai")), named="ALLOY_MODEL"
    ),
    "`ALLOY_OLLAMA_API` (its testing guide's switch; alloy-ai's library didn't read it)": Probe(
        with_env("ALLOY_OLLAMA_API", "openai_chat"), named='"openai-chat:<model>"'
    ),
    "`ALLOY_EXPERIMENTAL_STREAMING=1` (the flag of a preview its streaming guide described)": Probe(
        with_env("ALLOY_EXPERIMENTAL_STREAMING", "1"), named="cmd.stream_items()"
    ),
    "bare model names: `gpt-5-mini`, `claude-sonnet-4-20250514`, `gemini-2.5-flash`": Probe(
        lambda: [
            text_command(model=name)("x")
            for name in ("gpt-5-mini", "claude-sonnet-4-20250514", "gemini-2.5-flash")
        ]
    ),
    "other names alloy-ai routed by their start alone: `gpt5…`, `openai…`, `anthropic…`, `google…`": Probe(
        unforced(lambda: [text_command(model=name)("x") for name in ("gpt5-mini", "google-pro")]),
        named="provider:model",
    ),
    "`ollama:<model>`": Probe(lambda: text_command(model="ollama:llama3.2")("x")),
    "`local:<model>`": Probe(
        unforced(lambda: text_command(model="local:llama3.2")("x")), named="ollama:"
    ),
}


def _enter(use_config: Any) -> None:
    with pytest.warns(DeprecationWarning):  # this row is about use_config, not Config
        config = legacy_config("Config")(temperature=0.0, default_system="S")
    with use_config(config):
        text_command()("x")


def test_the_table_and_the_probes_cover_the_same_rows() -> None:
    rows = table()
    assert len(rows) >= 95
    assert set(rows) == set(PROBES)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command on the offline model, as alloy-ai's examples ran on its fake backend."""
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline")


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("row", sorted(PROBES))
def test_the_row_says_what_the_code_does(row: str) -> None:
    ours, status = table()[row]
    if "TypedDict" in row and sys.version_info >= (3, 12):
        pytest.skip("pydantic takes typing.TypedDict from Python 3.12 on")
    probe = PROBES[row]
    error: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            probe.run()
        except (alloy.ConfigurationError, ImportError, AttributeError) as exc:
            error = exc
    deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    found = "refused" if error is not None else "warns" if deprecations else "runs unchanged"
    assert found == status, (
        f"{row}: the table says {status}, the code {found}: {error or deprecations}"
    )
    assert (probe.named is None) == (status == "runs unchanged"), (
        f"{row}: a row that warns or refuses names the replacement, and only such a row"
    )
    if probe.named is not None:
        assert probe.named in ours, f"{row}: the table does not name {probe.named!r}"
        said = str(error) if error is not None else " ".join(deprecations)
        assert probe.named in said, f"{row}: the message does not name {probe.named!r}: {said}"
