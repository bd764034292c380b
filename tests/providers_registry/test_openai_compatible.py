"""An OpenAI-compatible provider added through the public registration alone (see ``acme.py``).

Its calls go through the real ``openai`` SDK to the emulator's Chat Completions route, with the
key and endpoint read from its own variables, not OpenAI's; the CLI and pricing know it from its
descriptor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest

from alloy import command, register_provider, tool
from alloy.cli import capability_matrix, main
from alloy.pricing import price_for
from alloy.providers import Provider, env_prefixes, providers
from alloy.testing.emulator import Emulator, ReplyJson, ReplyText, ReplyToolCalls

from .acme import register_acme

pytest.importorskip("openai")

MODEL = "acme-llama-3-70b"
ACME_KEY = "acme-key-0123456789"


@dataclass
class Weather:
    city: str
    temp_c: float


@tool
def get_weather(city: str) -> float:
    """The temperature in a city, in Celsius."""
    return 21.5


@command(output=Weather, model=MODEL)
def weather(city: str) -> str:
    return f"Weather in {city}?"


#: Acme's own key, and an OpenAI key Acme must never send.
KEYS = pytest.mark.parametrize(
    "emu",
    [{"ACME_API_KEY": ACME_KEY, "OPENAI_API_KEY": "sk-openai-not-for-acme"}],
    indirect=True,
    ids=["keys"],
)


@pytest.fixture(autouse=True)
def acme() -> Provider:
    """Registered before ``emu`` sets the variables of every provider (autouse comes first)."""
    return register_acme()


def test_the_emulator_environment_comes_from_the_descriptor(acme: Provider, emu: Emulator) -> None:
    env = emu.env(api_key="k")
    assert env["ACME_BASE_URL"] == f"{emu.url}/v1"
    assert env["ACME_API_KEY"] == "k"
    assert "ACME_" in env_prefixes()


@KEYS
def test_a_typed_call(emu: Emulator, run_result: Any) -> None:
    emu.push("openai", ReplyJson({"city": "Paris", "temp_c": 21.5}))
    result = run_result(weather, "Paris")
    assert result.value == Weather("Paris", 21.5)
    request = emu.last_request("openai")
    assert request.path == "/v1/chat/completions"
    assert request.header("authorization") == f"Bearer {ACME_KEY}"
    assert request.body["model"] == MODEL
    assert request.body["response_format"]["json_schema"]["strict"] is True
    assert result.model == f"acme:{MODEL}"
    assert result.cost == pytest.approx(result.usage.total_tokens * 0.60 / 1_000_000)


@KEYS
def test_a_tool_call(emu: Emulator, call: Any) -> None:
    emu.push(
        "openai", ReplyToolCalls(("get_weather", {"city": "Paris"})), ReplyJson({"value": 21.5})
    )

    @command(output=float, model=f"acme:{MODEL}", tools=[get_weather])
    def temperature(city: str) -> str:
        return f"How warm is {city}?"

    assert call(temperature, "Paris") == 21.5
    first, second = emu.requests_for("openai")
    assert first.body["tools"][0]["function"]["name"] == "get_weather"
    assert json.loads(second.body["messages"][-1]["content"]) == 21.5


@KEYS
def test_a_stream(emu: Emulator, stream: Any) -> None:
    emu.push("openai", ReplyText("Sunny in Paris, 21 degrees."))

    @command(model=MODEL)
    def forecast(city: str) -> str:
        return f"Forecast for {city}?"

    assert "".join(stream(forecast, "Paris")) == "Sunny in Paris, 21 degrees."
    assert emu.last_request("openai").body["stream"] is True


@KEYS
def test_calls_send_the_schema_in_the_descriptors_dialect(
    acme: Provider, emu: Emulator, call: Any
) -> None:
    made: list[str] = []

    def marked(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
        made.append(model_id)
        return {**schema, "description": f"for {model_id}"}

    register_provider(replace(acme, dialect=marked))
    emu.push("openai", *[ReplyJson({"city": c, "temp_c": 20.0}) for c in ("Paris", "Rome")])
    assert call(weather, "Paris") == Weather("Paris", 20.0)
    assert call(weather, "Rome") == Weather("Rome", 20.0)
    sent = [r.body["response_format"]["json_schema"]["schema"] for r in emu.requests_for("openai")]
    assert sent == [{**weather.output_type.schema, "description": f"for {MODEL}"}] * 2
    assert made == [MODEL]  # once, when the command planned its calls; not per call


@KEYS
def test_a_provider_without_a_dialect_is_sent_the_schema_as_it_is(
    acme: Provider, emu: Emulator
) -> None:
    register_provider(replace(acme, dialect=None))
    emu.push("openai", ReplyJson({"city": "Paris", "temp_c": 20.0}))
    weather("Paris")
    schema = emu.last_request("openai").body["response_format"]["json_schema"]["schema"]
    assert schema == weather.output_type.schema


def test_alloy_providers_lists_it(
    acme: Provider, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", ACME_KEY)
    assert main(["providers"]) == 0
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if row.startswith("acme "))
    assert "ACME_API_KEY set, ACME_BASE_URL not set" in line
    assert ACME_KEY not in out
    assert f"| `acme` | `acme:{MODEL}` | native | yes | yes | yes | `openai` |" in (
        capability_matrix()
    )


def test_alloy_schema_uses_its_dialect(acme: Provider, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "tests.cli.commands_for_cli:summarize", "--provider", "acme"]) == 0
    acme_schema = json.loads(capsys.readouterr().out)
    main(["schema", "tests.cli.commands_for_cli:summarize", "--provider", "openai-chat"])
    assert acme_schema == json.loads(capsys.readouterr().out)


def test_its_prices(acme: Provider) -> None:
    assert price_for(f"acme:{MODEL}") == acme.prices["acme-llama-3"]
    assert price_for("acme:acme-mistral-7b") is None
    assert providers()["acme"] is acme


@KEYS
def test_without_its_own_key_it_sends_a_placeholder_not_openais(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACME_API_KEY")
    emu.push("openai", ReplyJson({"city": "Paris", "temp_c": 21.5}))
    weather("Paris")
    assert emu.last_request("openai").header("authorization") == "Bearer alloy-no-key"


@KEYS
def test_without_its_own_endpoint_it_refuses_to_reach_openais(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from alloy import ConfigurationError

    monkeypatch.delenv("ACME_BASE_URL")
    with pytest.raises(ConfigurationError, match="ACME_BASE_URL"):
        weather("Paris")
    assert not emu.requests
