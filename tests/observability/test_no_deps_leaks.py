"""A canary ``deps=`` value never shows up in a request body, a span, an event or a log record.

The deps reach a tool, a check and an input rail that declare a ``Context`` (so they are used on
every path a call takes), on every wire API through its real SDK against the emulator, in each
call form (call, acall, stream, astream), with DEBUG logging and content logging on and spans
exported to memory. The value's ``repr`` and ``str`` both hold the canary, so any place that
formats it would show it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from alloy import Context, command, tool
from alloy.checks import check
from alloy.rails import input_rail
from alloy.testing.emulator import Emulator, ReplyJson, ReplyText, ReplyToolCalls

from ..hardening.conftest import FORMS, PROVIDERS, STREAMED
from ..hardening.test_key_leaks import observations, observed  # noqa: F401  (fixture)

CANARY = "deps-canary-4b7e1f9a2c6d8e0b"


@dataclass
class Tenant:
    """The call's dependencies: a name the tools use, and a secret nothing may show."""

    name: str
    token: str = CANARY

    def __str__(self) -> str:
        return f"Tenant {self.name} ({self.token})"


@dataclass
class Weather:
    city: str
    temp_c: float


used: list[str] = []


@tool
def lookup(city: str, ctx: Context[Tenant]) -> str:
    """Today's weather in a city, for the calling tenant."""
    used.append(f"tool:{ctx.deps.name}")
    return f"sunny in {city}, 21 C"


def allowed(value: Any, ctx: Context[Tenant]) -> bool:
    used.append(f"check:{ctx.deps.name}")
    return True


def screen(text: str, ctx: Context[Tenant]) -> None:
    used.append(f"rail:{ctx.deps.name}")


def asker(form: str, model: str) -> Any:
    options: dict[str, Any] = {
        "model": model,
        "tools": [lookup],
        "rails": [input_rail(screen)],
        "log_content": True,
    }
    if form in STREAMED:

        @command(**options)
        def text(city: str) -> str:
            return f"Weather in {city}?"

        return text

    @command(output=Annotated[Weather, check(allowed)], **options)
    def typed(city: str) -> str:
        return f"Weather in {city}?"

    return typed


def run(form: str, cmd: Any, deps: Tenant) -> Any:
    bound = cmd.using(deps=deps)
    if form == "call":
        return bound("Paris")
    if form == "stream":
        return "".join(bound.stream("Paris"))

    async def in_loop() -> Any:
        if form == "acall":
            return await bound.acall("Paris")
        return "".join([chunk async for chunk in bound.astream("Paris")])

    return asyncio.run(in_loop())


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_deps_value_is_never_sent_logged_traced_or_put_in_an_event(
    provider: str,
    form: str,
    emu: Emulator,
    observed: dict[str, Any],  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    model, queue, _ = PROVIDERS[provider]
    answer = (
        ReplyText("Sunny, 21 C.")
        if form in STREAMED
        else ReplyJson({"city": "Paris", "temp_c": 21.0})
    )
    emu.push(queue, ReplyToolCalls(("lookup", {"city": "Paris"})), answer)
    used.clear()

    got = run(form, asker(form, model), Tenant("acme"))

    assert got == ("Sunny, 21 C." if form in STREAMED else Weather("Paris", 21.0))
    expected = {"rail:acme", "tool:acme"} | (set() if form in STREAMED else {"check:acme"})
    assert set(used) == expected  # the deps were there, for everything that declared them
    assert observed["events"], "events were emitted"
    if observed["spans"] is not None:
        assert observed["spans"].get_finished_spans(), "spans were exported"
    assert any("Weather in Paris?" in r.getMessage() for r in caplog.records), "content logged"
    bodies = [json.dumps(r.body) for r in emu.requests] + [
        r.raw_body.decode("utf-8", "replace") for r in emu.requests
    ]
    assert len(emu.requests) == 2
    for text in [*bodies, *observations(observed, caplog), caplog.text]:
        assert CANARY not in text
        assert "acme" not in text  # nor the rest of the value
