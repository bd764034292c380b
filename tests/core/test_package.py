"""Package-level promises: a curated __all__, a light import, and the provider registry."""

from __future__ import annotations

import os
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

    # dir(), not vars(): the exports a plain call does not need are imported on first use.
    public = {
        name
        for name in dir(alloy)
        if not name.startswith(("_", "@"))
        and not isinstance(getattr(alloy, name), types.ModuleType)
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


#: alloy's own modules ``import alloy`` loads: what a plain ``@command(output=T)`` call needs.
#: The checks, the cache, the stream plan, media, formats, rows, batch, serve and the rest load
#: on first use, the event classes with the first event a listener gets; a change that makes this list longer makes import slower for every user.
IMPORT_ALLOY = [
    "alloy",
    "alloy._alloy_ai_modules",
    "alloy._blocking",
    "alloy._call",
    "alloy._command",
    "alloy._config",
    "alloy._conversation",
    "alloy._cost_cap",
    "alloy._deps",
    "alloy._drivers",
    "alloy._engine",
    "alloy._examples",
    "alloy._extract",
    "alloy._fallback",
    "alloy._legacy",
    "alloy._model",
    "alloy._nesting",
    "alloy._observers",  # who listens; the event classes load with the first event built
    "alloy._output",
    "alloy._partial_json",
    "alloy._pickling",
    "alloy._profile",
    "alloy._rail_types",
    "alloy._schema",
    "alloy._stream_accumulator",
    "alloy._stream_readers",
    "alloy._text",
    "alloy._tool_runner",
    "alloy._tools",
    "alloy._typeddict",
    "alloy._types",
    "alloy._wrapper",
    "alloy.ask",  # alloy-ai's module names, placed in sys.modules (see _alloy_ai_modules)
    "alloy.command",
    "alloy.errors",
    "alloy.pricing",
    "alloy.providers",
    "alloy.providers._builtin",
    "alloy.providers._descriptor",
    "alloy.providers._presets",
    "alloy.providers._price",
    "alloy.providers._profiles",
    "alloy.providers._profiles_cloud",
    "alloy.streaming",
    "alloy.tool",
]

#: What a first typed call adds: the provider's adapter, here the offline model's.
FIRST_OFFLINE_CALL = [
    "alloy.providers.offline",
    "alloy.providers.offline._draws",
    "alloy.providers.offline._pattern",
    "alloy.providers.offline._sample",
]

_LOADED = "print(*sorted(m for m in sys.modules if m.split('.')[0] == 'alloy'))"


def _fresh(code: str) -> list[str]:
    """alloy's modules loaded after ``code`` runs in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\n{_LOADED}"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return out.stdout.split()


def test_import_alloy_loads_only_what_a_plain_call_needs() -> None:
    assert _fresh("import alloy") == IMPORT_ALLOY


def test_a_first_offline_typed_call_loads_only_its_provider() -> None:
    code = (
        "from dataclasses import dataclass\n"
        "from alloy import command\n"
        "@dataclass\n"
        "class Person:\n"
        "    name: str\n"
        "@command(output=Person, model='offline')\n"
        "def person(text: str) -> str:\n"
        "    return text\n"
        "assert isinstance(person('Ada'), Person)"
    )
    assert _fresh(code) == sorted(IMPORT_ALLOY + FIRST_OFFLINE_CALL)


def test_lazy_exports_are_the_modules_own_objects() -> None:
    from alloy import checks, formats, media, providers

    assert alloy.Criterion is checks.Criterion
    assert alloy.YesNo is formats.YesNo
    assert alloy.Image is media.Image
    assert alloy.register_provider is providers.register_provider
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        alloy.nothing_here


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
