"""Package-level promises: a curated __all__, a light import, and the provider registry."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import alloy
from alloy import ConfigurationError, command, register_provider
from alloy.providers import Provider, get_model, split_model
from alloy.testing import FunctionModel


def test_all_is_sorted_and_complete() -> None:
    assert alloy.__all__ == sorted(alloy.__all__)
    import types

    public = {
        name
        for name, value in vars(alloy).items()
        if not name.startswith(("_", "@")) and not isinstance(value, types.ModuleType)
    }
    assert set(alloy.__all__) == public - {"annotations"}
    for name in alloy.__all__:
        assert getattr(alloy, name) is not None


def test_import_alloy_is_light() -> None:
    code = (
        "import sys, alloy; "
        "heavy = [m for m in ('openai', 'anthropic', 'google.genai', 'ollama', 'asyncio', 'httpx', 'ray', 'pyarrow', 'cloudpickle') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("model", "provider", "model_id"),
    [
        ("openai:gpt-5-mini", "openai", "gpt-5-mini"),
        ("gpt-4o", "openai", "gpt-4o"),
        ("o3-mini", "openai", "o3-mini"),
        ("o4-mini", "openai", "o4-mini"),
        ("o1", "openai", "o1"),
        ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("anthropic:claude-opus-4-1", "anthropic", "claude-opus-4-1"),
        ("gemini-2.5-flash", "gemini", "gemini-2.5-flash"),
        ("ollama:llama3.2", "ollama", "llama3.2"),
        ("ollama:qwen3:8b", "ollama", "qwen3:8b"),
        ("openai-chat:my-vllm-model", "openai-chat", "my-vllm-model"),
        ("offline", "offline", ""),
        ("fake", "fake", ""),
    ],
)
def test_provider_from_model_string(model: str, provider: str, model_id: str) -> None:
    assert split_model(model) == (provider, model_id)


def test_unknown_provider_and_unknown_bare_name() -> None:
    with pytest.raises(ConfigurationError, match="Unknown provider 'acme'"):
        split_model("acme:model")
    with pytest.raises(ConfigurationError, match="Cannot tell the provider of model 'mystery'"):
        split_model("mystery")


def test_missing_sdk_names_the_extra_to_install() -> None:
    register_provider(
        "needs-sdk", "nowhere:create", extra="needs-sdk", sdk_module="surely_not_installed_sdk"
    )
    with pytest.raises(ConfigurationError, match=r"pip install 'alloy\[needs-sdk\]'"):
        get_model("needs-sdk:model")


def test_third_party_provider_registration() -> None:
    built: list[tuple[str, Any]] = []

    def factory(
        model_id: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> FunctionModel:
        built.append((model_id, base_url))
        return FunctionModel(lambda request: '{"value": 7}', name=f"acme:{model_id}")

    register_provider("acme", factory, prefixes=("acme-",))

    @command(output=int, model="acme:m1", base_url="http://localhost:1")
    def seven() -> str:
        return "7?"

    assert seven() == 7
    assert seven() == 7
    assert built == [("m1", "http://localhost:1")]  # built once, then reused
    assert split_model("acme-large") == ("acme", "acme-large")
    assert isinstance(alloy.providers.providers()["acme"], Provider)


def test_offline_model_says_what_it_is() -> None:
    reply = alloy.ask("Who are you?", model="offline")
    assert "offline model" in reply
