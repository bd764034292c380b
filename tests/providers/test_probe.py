"""``alloy providers --probe``: each emulator persona is probed as the profile it declares, in at
most eight requests counted in the emulator's request log; probes are stored and found again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alloy.cli import main
from alloy.errors import ConfigurationError
from alloy.providers import clear_model_cache, load_probe, profile_for
from alloy.providers.probing import MAX_REQUESTS, PROBED, probe, save_probe
from alloy.testing.emulator import PERSONAS, Emulator, Persona

KEY = "probe-test-key"
#: The server a persona's preset asks about itself, as the presets do (public APIs: none).
SERVER = {"vllm-bare": "vllm", "llamacpp": "llamacpp"}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Probes are stored in a file of the test's own."""
    path = tmp_path / "profiles.json"
    monkeypatch.setenv("ALLOY_PROFILE_STORE", str(path))
    return path


def persona_model(emu: Emulator, persona: type[Persona], monkeypatch: pytest.MonkeyPatch) -> str:
    """The model string reaching ``persona``'s endpoint on the emulator, with its variables."""
    if persona.api == "bedrock.converse":
        return f"bedrock:{persona.model}"
    if persona.api == "anthropic.vertex":
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", emu.url + "/v1")
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "alloy-probe")
        monkeypatch.setenv("ANTHROPIC_VERTEX_ACCESS_TOKEN", KEY)
        return f"anthropic-vertex:{persona.model}"
    if persona.name == "azure-old-api":
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url)
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")
        return f"azure-chat:{persona.model}"
    monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return f"openai-chat:{persona.model}"


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_the_probe_learns_each_personas_declared_profile_in_at_most_8_requests(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path, name: str
) -> None:
    persona = PERSONAS[name]
    model = persona_model(emu, persona, monkeypatch)
    clear_model_cache()
    emu.persona(name)

    result = probe(model, server=SERVER.get(name, "none"))

    assert len(emu.requests) == result.requests <= MAX_REQUESTS
    chat = model.startswith(("openai-chat:", "azure-chat:"))
    expected = set(PROBED) - ({"json_object"} if not chat else set())
    assert result.learned >= expected, result.findings
    learned = {field: getattr(result.profile, field) for field in expected}
    assert learned == {field: getattr(persona().profile, field) for field in expected}, (
        result.findings
    )
    assert result.profile.source == "probed"


def test_a_bare_base_url_is_asked_whether_it_is_llama_server_or_vllm(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    model = persona_model(emu, PERSONAS["vllm-bare"], monkeypatch)
    emu.persona("vllm-bare")

    result = probe(model)

    assert (result.server, result.server_version) == ("vLLM", "0.8.5")
    assert [r.path for r in emu.requests[:2]] == ["/props", "/version"]
    assert len(emu.requests) == result.requests <= MAX_REQUESTS
    assert result.profile.tool_choice == PERSONAS["vllm-bare"]().profile.tool_choice


def test_the_plain_emulator_probes_as_everything_on(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    model = persona_model(emu, Persona, monkeypatch)

    result = probe(model)

    assert result.server is None
    assert result.requests <= MAX_REQUESTS
    assert result.profile.json_schema == "strict"
    assert result.profile.tool_choice >= {"auto", "required", "named"}
    assert result.profile.schema_with_tools and result.profile.schema_with_streaming
    assert result.profile.stream_usage


def test_the_policy_once_allowed_gives_claude_on_vertex_its_schema(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    persona = PERSONAS["vertex-claude-policy"]
    model = persona_model(emu, persona, monkeypatch)
    emu.persona("vertex-claude-policy", allowed=True)

    assert probe(model).profile.json_schema == "strict"


def test_a_saved_probe_is_what_calls_to_that_endpoint_and_model_run_by(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    persona = PERSONAS["lmstudio"]
    model = persona_model(emu, persona, monkeypatch)
    emu.persona("lmstudio")
    result = probe(model, server="none")

    assert save_probe(result) == store
    stored = load_probe(emu.openai_base_url, persona.model)
    assert stored == result.profile
    clear_model_cache()
    from alloy.providers import get_model

    assert profile_for(get_model(model)).json_object is False


def test_alloy_providers_probe_prints_the_row_and_saves_it(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path, capsys: Any
) -> None:
    persona = PERSONAS["llamacpp"]
    model = persona_model(emu, persona, monkeypatch)
    emu.persona("llamacpp")

    status = main(["providers", "--probe", model, "--base-url", emu.openai_base_url, "--save"])
    out = capsys.readouterr().out

    assert status == 0
    assert "(llama.cpp b5890-6efcd659)" in out
    assert "tool_choice" in out and "auto, none, required" in out
    assert f"saved to {store}" in out
    entries = json.loads(store.read_text())
    versions = entries[f"{emu.openai_base_url} {persona.model}"]
    assert versions["latest"] == "b5890-6efcd659"


def test_alloy_providers_probe_json(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, store: Path, capsys: Any
) -> None:
    model = persona_model(emu, PERSONAS["deepseek"], monkeypatch)
    emu.persona("deepseek")

    status = main(["providers", "--probe", model, "--server", "none", "--json"])
    data = json.loads(capsys.readouterr().out)

    assert status == 0
    assert data["profile"]["json_schema"] == "no"
    assert data["profile"]["tool_choice"] == ["auto", "named", "none", "required"]
    assert "json_schema" in data["learned"] and "batch" not in data["learned"]
    assert data["requests"] == len(emu.requests)
    assert data["saved"] is None and not store.exists()


def test_probe_options_without_probe_are_a_usage_error(capsys: Any) -> None:
    assert main(["providers", "--save"]) == 2
    assert "go with --probe MODEL" in capsys.readouterr().err


def test_an_unknown_server_kind_is_refused_before_any_request(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = persona_model(emu, Persona, monkeypatch)
    with pytest.raises(ConfigurationError, match="Unknown server 'sglang' to probe"):
        probe(model, server="sglang")
    assert emu.requests == []
