"""Dependencies: ``deps=`` reaches the tools, checks and rails that declare a Context, and
nothing else: not the model, not the logs, not the events; each call sees its own."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

import alloy
from alloy import ConfigurationError, Context, command, tool
from alloy.checks import check
from alloy.rails import input_rail, output_rail, tool_rail
from alloy.testing import FunctionModel, script, tool_call, tool_results
from alloy.testing.emulator import Emulator

from ..conftest import Call
from ..hardening.conftest import PROVIDERS


@dataclass
class Tenant:
    name: str
    secret: str = "s3cr3t-tenant-token"


@tool
def lookup(city: str, ctx: Context[Tenant]) -> str:
    """The weather in a city, for the calling tenant."""
    return f"{ctx.deps.name}: sunny in {city}"


def weather(model: Any) -> Any:
    @command(model=model, tools=[lookup])
    def ask(city: str) -> str:
        return f"Weather in {city}?"

    return ask


def test_a_test_can_call_a_tool_with_a_context_it_makes() -> None:
    """As a user tests a tool of their own: a Context made through its generic alias too."""
    tenant = Tenant("acme")
    assert lookup.fn("Oslo", Context[Tenant](tenant)) == "acme: sunny in Oslo"
    assert Context(tenant) == Context[Tenant](tenant)
    assert "s3cr3t" not in repr(Context[Tenant](tenant))


def test_a_context_parameter_is_left_out_of_the_tools_schema() -> None:
    schema = lookup.definition.parameters
    assert set(schema["properties"]) == {"city"}
    assert schema["required"] == ["city"]


def test_deps_reach_a_tool_that_declares_a_context(run_result: Call) -> None:
    model = script(tool_call("lookup", {"city": "Paris"}), "done")
    result = run_result(weather(model), "Paris", deps=Tenant("acme"))
    tool_turn = result.transcript.messages[2]
    assert tool_turn.parts[0].content == "acme: sunny in Paris"


def test_a_tool_that_needs_deps_without_them_is_a_configuration_error(call: Call) -> None:
    model = script(tool_call("lookup", {"city": "Paris"}), "done")
    with pytest.raises(ConfigurationError, match="Tool 'lookup' takes a Context parameter"):
        call(weather(model), "Paris")


def test_deps_reach_checks_and_rails(call: Call) -> None:
    seen: list[tuple[str, str]] = []

    def allowed(value: int, ctx: Context[Tenant]) -> bool:
        seen.append(("check", ctx.deps.name))
        return value < 10

    def screen(text: str, ctx: Context[Tenant]) -> None:
        seen.append(("input", ctx.deps.name))

    def audit(value: Any, ctx: Context[Tenant]) -> None:
        seen.append(("output", ctx.deps.name))

    def guard(call_: Any, result: Any, ctx: Context[Tenant]) -> None:
        seen.append(("tool", ctx.deps.name))

    @tool
    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    model = script(tool_call("double", {"x": 2}), '{"value": 4}')

    @command(
        output=Annotated[int, check(allowed)],
        model=model,
        tools=[double],
        rails=[input_rail(screen), output_rail(audit), tool_rail(guard)],
    )
    def compute() -> str:
        return "Double 2"

    assert call(compute, deps=Tenant("acme")) == 4
    assert ("input", "acme") in seen and ("output", "acme") in seen
    assert ("check", "acme") in seen and ("tool", "acme") in seen


def test_each_thread_sees_its_own_deps() -> None:
    @tool
    def whoami(ctx: Context[Tenant]) -> str:
        """The tenant."""
        return ctx.deps.name

    def answer(request: Any) -> Any:
        results = tool_results(request)
        if results:
            return results[-1].content
        return tool_call("whoami")

    @command(model=FunctionModel(answer), tools=[whoami])
    def ask() -> str:
        return "who?"

    names = [f"tenant-{i}" for i in range(16)]
    got: dict[str, str] = {}

    def run(name: str) -> None:
        got[name] = ask(deps=Tenant(name))  # type: ignore[call-arg]

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == {name: name for name in names}


def test_each_task_sees_its_own_deps() -> None:
    @tool
    async def whoami(ctx: Context[Tenant]) -> str:
        """The tenant."""
        await asyncio.sleep(0)
        return ctx.deps.name

    def answer(request: Any) -> Any:
        results = tool_results(request)
        return results[-1].content if results else tool_call("whoami")

    @command(model=FunctionModel(answer), tools=[whoami])
    def ask() -> str:
        return "who?"

    async def main() -> list[str]:
        calls = [ask.acall(deps=Tenant(f"t{i}")) for i in range(16)]  # type: ignore[call-arg]
        return list(await asyncio.gather(*calls))

    assert asyncio.run(main()) == [f"t{i}" for i in range(16)]


def test_two_streams_read_in_turn_keep_their_own_deps() -> None:
    @tool
    def whoami(ctx: Context[Tenant]) -> str:
        """The tenant."""
        return ctx.deps.name

    def answer(request: Any) -> Any:
        results = tool_results(request)
        return results[-1].content if results else tool_call("whoami")

    @command(model=FunctionModel(answer), tools=[whoami])
    def ask() -> str:
        return "who?"

    first = ask.stream(deps=Tenant("one"))  # type: ignore[call-arg]
    second = ask.stream(deps=Tenant("two"))  # type: ignore[call-arg]
    assert (next(second), next(first)) == ("two", "one")
    assert alloy._deps._CURRENT.get() is None  # nothing is left set between chunks


def test_deps_never_reach_the_model_the_logs_or_the_events(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    model = PROVIDERS["openai"][0]
    events: list[Any] = []
    unsubscribe = alloy.events.subscribe(events.append)
    caplog.set_level(logging.DEBUG, logger="alloy")
    tenant = Tenant("acme")
    try:
        weather(model).run("Paris", deps=tenant)
    finally:
        unsubscribe()
    bodies = json.dumps([r.body for r in emu.requests])
    assert tenant.secret not in bodies
    assert tenant.secret not in caplog.text
    assert all(tenant.secret not in repr(event) for event in events)
    assert repr(Context(tenant)) == "Context(deps=<Tenant>)"


def test_a_prompt_function_with_its_own_deps_parameter_is_given_it() -> None:
    model = script('"ok"')

    @command(model=model)
    def ask(deps: str) -> str:
        return f"about {deps}"

    assert ask(deps="cats") == '"ok"'
