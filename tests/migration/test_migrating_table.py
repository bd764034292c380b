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
        lambda: import_names("alloy.errors", "create_tool_loop_exception")
    ),
    "`error.max_turns`, `error.turns_taken`, `error.partial_text` on `ToolLoopLimitExceeded`": Probe(
        tool_loop_attributes
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
    "`model=`, `temperature=`, `max_tokens=` and `system=`": Probe(
        lambda: text_command(model="gpt-5-mini", temperature=0.2, max_tokens=100, system="S")("x")
    ),
    "`retry=N`": Probe(lambda: text_command(retry=3)("x"), named="retries=N-1"),
    "`retry_on=SomeError`": Probe(lambda: text_command(retry_on=ValueError), named="max_reasks="),
    "a prompt function that returns `None`, such as one with only a docstring": Probe(
        lambda: command(lambda: None)(), named="return the prompt text"
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
    "`alloy.config.DEFAULT_PARALLEL_TOOLS_MAX`": Probe(
        lambda: expect(legacy_config("DEFAULT_PARALLEL_TOOLS_MAX") == 8),
        named="alloy.Config().parallel_tools_max",
    ),
    # Other modules
    "`from alloy.tool import ToolSpec, ToolCallable, Contract`": Probe(
        lambda: import_names("alloy.tool", "ToolSpec", "ToolCallable", "Contract")
    ),
    "`my_tool.spec` and `my_tool.spec.as_schema()`": Probe(lambda: sqrt_floor.spec),  # type: ignore[attr-defined]
    "`from alloy.command import Command`": Probe(lambda: import_names("alloy.command", "Command")),
    "`from alloy.types import to_json_schema, parse_output`": Probe(
        lambda: import_names("alloy.types", "to_json_schema", "parse_output")
    ),
    "`from alloy.models.base import ModelBackend, get_backend`": Probe(
        lambda: import_names("alloy.models.base", "ModelBackend", "get_backend")
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
    "bare model names: `gpt-5-mini`, `claude-sonnet-4-20250514`, `gemini-2.5-flash`": Probe(
        lambda: [
            text_command(model=name)("x")
            for name in ("gpt-5-mini", "claude-sonnet-4-20250514", "gemini-2.5-flash")
        ]
    ),
    "`ollama:<model>`": Probe(lambda: text_command(model="ollama:llama3.2")("x")),
}


def _enter(use_config: Any) -> None:
    with pytest.warns(DeprecationWarning):  # this row is about use_config, not Config
        config = legacy_config("Config")(temperature=0.0, default_system="S")
    with use_config(config):
        text_command()("x")


def test_the_table_and_the_probes_cover_the_same_rows() -> None:
    rows = table()
    assert len(rows) >= 70
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
    if probe.named is not None:
        assert probe.named in ours, f"{row}: the table does not name {probe.named!r}"
        said = str(error) if error is not None else " ".join(deprecations)
        assert probe.named in said, f"{row}: the message does not name {probe.named!r}: {said}"
    elif status == "refused":
        assert isinstance(error, (ImportError, AttributeError)), error
