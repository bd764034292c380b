"""Nothing degrades silently against quirky endpoints (issue 30, Targets): for each emulator
persona x {plain, tools, stream}, a typed command returns a valid value with the right
``result.enforcement``, and every ``ProfileDowngraded`` event has its WARNING record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy._profile import forget_observed
from alloy.events import ProfileDowngraded, subscribe
from alloy.providers import clear_model_cache, get_model, profile_for
from alloy.testing.emulator import (
    PERSONAS,
    Emulator,
    Persona,
    ReplyAuto,
    ReplyToolCalls,
)

from .test_probe import persona_model

VARIANTS = ("plain", "tools", "stream")
#: The emulator queue each persona's wire API reads.
QUEUE = {"openai.chat": "openai", "bedrock.converse": "bedrock", "anthropic.vertex": "anthropic"}


@dataclass
class Capital:
    city: str
    country: str


def lookup(country: str) -> str:
    """Facts about a country, for the model to use if it wants."""
    return f"{country} is a country."


@pytest.fixture
def downgrades(caplog: pytest.LogCaptureFixture) -> Iterator[tuple[list[Any], Any]]:
    """The ProfileDowngraded events and the WARNING records of the test; what this process
    observed of endpoints is forgotten before and after."""
    forget_observed()
    events: list[Any] = []
    unsubscribe = subscribe(events.append, ProfileDowngraded)
    caplog.set_level(logging.WARNING, logger="alloy")
    try:
        yield events, caplog
    finally:
        unsubscribe()
        forget_observed()


def capital_command(model: str, variant: str) -> Any:
    tools = [lookup] if variant == "tools" else []

    @command(output=Capital, model=model, tools=tools)
    def capital(country: str) -> str:
        return f"What is the capital of {country}? Answer in JSON."

    return capital


def call(model: str, variant: str) -> Any:
    capital = capital_command(model, variant)
    if variant != "stream":
        return capital.run("France")
    stream = capital.stream_partial("France")
    for _ in stream:
        pass
    return stream.result


def expected_enforcement(persona: Persona, model: str, variant: str) -> str:
    """The strongest level the persona's endpoint keeps: its schema when enforced (and, with
    tools the model may call, when it takes ``tool_choice: auto`` beside a schema), else a
    forced tool call (strict where the endpoint declares strict tools)."""
    profile = persona.profile
    native = profile.json_schema == "strict"
    if variant == "tools":
        native = native and profile.schema_with_tools and "auto" in profile.tool_choice
    if variant == "stream":
        native = native and profile.schema_with_streaming
    if native:
        return "native-strict"
    return "tool-strict" if profile_for(get_model(model)).strict_tools else "tool"


def script_a_tool_round(emu: Emulator, persona: Persona, enforcement: str) -> None:
    """The model looks the country up first, then answers: with the schema's JSON (native
    mode), or by calling the output's tool (tool mode: ``required`` would otherwise make the
    emulator call the first tool offered, the lookup, again). A persona that drops the schema
    answers prose first, which is what steps the call down."""
    lookup_call = ReplyToolCalls(("lookup", {"country": "France"}))
    if enforcement.startswith("native"):
        answers: tuple[Any, ...] = (ReplyAuto(),)
    else:
        answer = ReplyToolCalls(("Capital", {"city": "Paris", "country": "France"}))
        dropped = persona.profile.json_schema == "best-effort"
        answers = (ReplyAuto(), answer) if dropped else (answer,)
    emu.push(QUEUE[persona.api], lookup_call, *answers)  # type: ignore[arg-type]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "alloy"]


def _cases() -> list[Any]:
    return [
        pytest.param(name, variant, id=f"{name}-{variant}")
        for name in sorted(PERSONAS)
        for variant in VARIANTS
    ]


@pytest.mark.parametrize(("name", "variant"), _cases())
def test_a_typed_command_gets_a_valid_value_and_every_downgrade_is_announced(
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    downgrades: tuple[list[Any], pytest.LogCaptureFixture],
    name: str,
    variant: str,
) -> None:
    events, caplog = downgrades
    persona = PERSONAS[name]()
    model = persona_model(emu, type(persona), monkeypatch)
    clear_model_cache()
    emu.persona(name)
    expected = expected_enforcement(persona, model, variant)
    declared = profile_for(get_model(model))
    if variant == "tools":
        script_a_tool_round(emu, persona, expected)

    result = call(model, variant)

    assert isinstance(result.value, Capital)
    assert result.enforcement == expected
    assert len(events) == len(warnings_of(caplog))
    stepped = result.enforcement != declared.enforcement(declared.default_output_mode())
    assert len(events) == (1 if stepped else 0)


def test_bedrock_silent_is_asked_again_in_tool_mode_once_then_goes_straight_to_it(
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    downgrades: tuple[list[Any], pytest.LogCaptureFixture],
) -> None:
    events, caplog = downgrades
    model = persona_model(emu, PERSONAS["bedrock-silent"], monkeypatch)
    clear_model_cache()
    emu.persona("bedrock-silent")

    first = call(model, "plain")

    assert isinstance(first.value, Capital)
    assert first.enforcement in ("tool-strict", "tool")
    sent = emu.requests
    assert len(sent) == 2
    assert sent[0].body.get("outputConfig") and not sent[0].body.get("toolConfig")
    assert sent[1].body.get("toolConfig")
    assert len(events) == len(warnings_of(caplog)) == 1

    emu.reset()
    emu.persona("bedrock-silent")
    second = call(model, "plain")

    assert isinstance(second.value, Capital)
    assert second.enforcement == first.enforcement
    assert len(emu.requests) == 1
    assert emu.requests[0].body.get("toolConfig")
    assert len(events) == len(warnings_of(caplog)) == 1
