"""The OpenAI-compatible presets (issue 30 item 1) and their profiles at work (items 2 and 3),
through the real ``openai`` SDK and the emulator: each preset's endpoint, key and declared
profile, the enforcement its calls report, a 400 refusing the schema stepped down once and
announced, and a schema answered with prose re-asked in tool mode."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import ConfigurationError, command
from alloy.events import ProfileDowngraded, subscribe
from alloy.pricing import price_for
from alloy.providers import get_model, profile_for, providers
from alloy.providers._presets import PRESETS
from alloy.testing.emulator import Emulator, HttpError, ReplyText

pytest.importorskip("openai")

NAMES = [preset.name for preset in PRESETS]
#: What a typed call on each preset's first example model is enforced as, from its declaration.
EXPECTED = {
    "vllm": "native-strict",
    "llamacpp": "native-strict",
    "lmstudio": "native-strict",
    "sglang": "native-strict",
    "groq": "tool",
    "openrouter": "tool",
    "deepseek": "tool",
    "mistral": "native-strict",
    "xai": "native-strict",
    "together": "tool",
    "fireworks": "native-strict",
}


@dataclass
class City:
    name: str
    population: int


def typed(model: str) -> Any:
    @command(output=City, model=model)
    def city(text: str) -> str:
        return f"Which city? {text}"

    return city


@pytest.mark.parametrize("name", NAMES)
def test_a_preset_has_its_endpoint_key_variable_profile_and_prices(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = providers()[name]
    assert preset.default_base_url and preset.key_env and preset.profiles
    assert preset.base_url_env == (f"{name.upper()}_BASE_URL",)
    model_id = preset.example_models[0]
    model = get_model(f"{name}:{model_id}")
    assert model.name == f"{name}:{model_id}"
    assert getattr(model, "base_url", None) == preset.default_base_url
    assert profile_for(model).source == "declared"
    monkeypatch.setenv(preset.base_url_env[0], "http://127.0.0.1:9/v1")
    assert getattr(get_model(f"{name}:{model_id}"), "base_url", None) == "http://127.0.0.1:9/v1"
    for example in preset.example_models:
        assert price_for(f"{name}:{example}") is not None, f"{name}:{example} has no price"


def test_deepseek_declares_json_object_only_and_groq_strict_only_on_listed_models() -> None:
    deepseek = profile_for(get_model("deepseek:deepseek-chat"))
    assert (deepseek.json_schema, deepseek.json_object) == ("no", True)
    assert not profile_for(get_model("lmstudio:any")).json_object
    assert profile_for(get_model("groq:llama-3.3-70b-versatile")).json_schema == "best-effort"
    assert profile_for(get_model("groq:openai/gpt-oss-120b")).json_schema == "strict"


@pytest.mark.parametrize("name", NAMES)
def test_a_typed_call_on_each_preset_reports_its_enforcement(name: str, emu: Emulator) -> None:
    model_id = providers()[name].example_models[0]
    result = typed(f"{name}:{model_id}").run("Bern")
    assert isinstance(result.value, City)
    assert result.enforcement == EXPECTED[name]
    assert result.cost is not None
    sent = emu.last_request("openai")
    assert sent.body["model"] == model_id
    if EXPECTED[name].startswith("native"):
        assert sent.body["response_format"]["type"] == "json_schema"
    else:
        assert "response_format" not in sent.body and sent.body["tool_choice"]


def test_a_400_refusing_the_schema_steps_down_once_announced_and_remembered(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    emu.push("openai", HttpError(400, "response_format json_schema is not supported"))
    events: list[ProfileDowngraded] = []
    unsubscribe = subscribe(events.append, ProfileDowngraded)
    try:
        with caplog.at_level(logging.WARNING, logger="alloy"):
            first = typed("vllm:Qwen/Qwen3-8B").run("Bern")
            before = len(emu.requests)
            second = typed("vllm:Qwen/Qwen3-8B").run("Bern")
    finally:
        unsubscribe()
    assert isinstance(first.value, City) and isinstance(second.value, City)
    assert first.enforcement == second.enforcement == "tool"
    assert len(emu.requests) - before == 1  # straight to tool mode
    assert "tool_choice" in emu.last_request("openai").body
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "alloy"]
    assert len(events) == len(warnings) == 1
    assert events[0].endpoint.endswith("/v1") and events[0].to_enforcement == "tool"


def test_prose_under_a_schema_is_re_asked_in_tool_mode_then_goes_straight_there(
    emu: Emulator,
) -> None:
    emu.push("openai", ReplyText("Bern, with about 134000 people."))
    first = typed("sglang:Qwen/Qwen3-8B").run("Bern")
    assert first.enforcement == "tool" and first.transcript.attempts == 2
    before = len(emu.requests)
    second = typed("sglang:Qwen/Qwen3-8B").run("Bern")
    assert second.enforcement == "tool" and len(emu.requests) - before == 1
    assert profile_for(get_model("sglang:Qwen/Qwen3-8B")).json_schema == "best-effort"


#: The presets over a hosted service, which need their vendor's key; the others are local servers.
HOSTED = ["groq", "openrouter", "deepseek", "mistral", "xai", "together", "fireworks"]
LOCAL = ["vllm", "llamacpp", "lmstudio", "sglang"]


def test_the_presets_are_hosted_or_local() -> None:
    assert sorted(HOSTED + LOCAL) == sorted(NAMES)


@pytest.mark.parametrize("name", HOSTED)
def test_a_hosted_preset_without_its_key_fails_before_any_request(
    name: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = providers()[name]
    monkeypatch.delenv(preset.key_env[0])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key-not-for-groq-0123456789")
    model = f"{name}:{preset.example_models[0]}"
    assert get_model(model).name == model  # named and inspected without its key
    with pytest.raises(ConfigurationError) as raised:
        typed(model).run("Bern")
    message = str(raised.value)
    assert preset.key_env[0] in message and "api_key=" in message
    assert "OPENAI_API_KEY" not in message
    assert emu.requests == []
    result = typed(model).with_options(api_key="a-key-given-as-an-option").run("Bern")
    assert isinstance(result.value, City)
    assert "a-key-given-as-an-option" in emu.last_request("openai").headers["authorization"]


def test_a_key_set_after_the_missing_key_error_is_taken_by_the_same_command(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GROQ_API_KEY")
    command = typed("groq:openai/gpt-oss-120b")
    with pytest.raises(ConfigurationError, match="GROQ_API_KEY"):
        command.run("Bern")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-set-after-the-error-0123456789")
    assert isinstance(command.run("Bern").value, City)
    assert "gsk-set-after-the-error" in emu.last_request("openai").headers["authorization"]


@pytest.mark.parametrize("name", LOCAL)
def test_a_local_server_preset_works_without_a_key(
    name: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = providers()[name]
    monkeypatch.delenv(preset.key_env[0])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key-not-for-vllm-0123456789")
    result = typed(f"{name}:{preset.example_models[0]}").run("Bern")
    assert isinstance(result.value, City)
    assert "sk-openai" not in emu.last_request("openai").headers["authorization"]
