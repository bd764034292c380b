"""The provider descriptors: registration, routing, keys from the environment, prices."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import alloy.pricing
from alloy import Usage, register_provider
from alloy.pricing import Price, cost, price_for, set_price
from alloy.providers import Provider, env_prefixes, get_model, providers, split_model
from alloy.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[2]


def recording_factory(built: list[dict[str, Any]], name: str | None = None) -> Any:
    def factory(model_id: str, *, api_key: str | None = None, base_url: str | None = None) -> Any:
        built.append({"model_id": model_id, "api_key": api_key, "base_url": base_url})
        return FunctionModel(lambda request: "hi", name=name or f"made:{model_id}")

    return factory


def test_every_builtin_provider_is_described() -> None:
    described = providers()
    assert list(described) == [
        "openai",
        "openai-chat",
        "azure",
        "azure-chat",
        "anthropic",
        "gemini",
        "vertex",
        "anthropic-foundry",
        "anthropic-vertex",
        "anthropic-bedrock",
        "bedrock",
        "ollama",
        "offline",
        "fake",
        # the OpenAI-compatible presets (alloy.providers._presets)
        "vllm",
        "llamacpp",
        "lmstudio",
        "sglang",
        "groq",
        "openrouter",
        "deepseek",
        "mistral",
        "xai",
        "together",
        "fireworks",
    ]
    for provider in described.values():
        assert isinstance(provider, Provider)
        if provider.sdk_module is not None:
            assert (
                provider.extra
                and provider.key_env
                and provider.base_url_env
                and provider.api_family
            )
            assert provider.dialect and provider.example_models
            # An Azure deployment has no fixed model, so no price until set_price names it.
            assert provider.prices or provider.name.startswith("azure")
    # In the order the SDK reads them: google-genai prefers GOOGLE_API_KEY.
    assert described["gemini"].key_env == ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    assert env_prefixes() == (
        "OPENAI_",
        "AZURE_",
        "ANTHROPIC_",
        "GOOGLE_",
        "GEMINI_",
        "AWS_",
        "OLLAMA_",
        "VLLM_",
        "LLAMACPP_",
        "LMSTUDIO_",
        "SGLANG_",
        "GROQ_",
        "OPENROUTER_",
        "DEEPSEEK_",
        "MISTRAL_",
        "XAI_",
        "TOGETHER_",
        "FIREWORKS_",
    )


def test_the_keyword_form_and_the_descriptor_form_register_the_same() -> None:
    built: list[dict[str, Any]] = []
    by_keywords = register_provider("kw", recording_factory(built), prefixes=("kw-",))
    assert (
        providers()["kw"] == by_keywords == Provider("kw", by_keywords.factory, prefixes=("kw-",))
    )
    described = register_provider(
        Provider("desc", recording_factory(built), key_env="DESC_KEY")  # type: ignore[arg-type]
    )
    assert described.key_env == ("DESC_KEY",)  # a lone string is one variable, not its letters
    with pytest.raises(TypeError):
        register_provider(described, "x:y")
    with pytest.raises(TypeError):
        register_provider("no-factory")


def test_the_longest_prefix_routes_a_bare_name() -> None:
    register_provider("oss-host", recording_factory([]), prefixes=("gpt-oss-",))
    assert split_model("gpt-oss-20b") == ("oss-host", "gpt-oss-20b")
    assert split_model("gpt-4o") == ("openai", "gpt-4o")


def test_a_replaced_provider_keeps_only_its_new_prefixes() -> None:
    register_provider("swap", recording_factory([]), prefixes=("old-",))
    register_provider("swap", recording_factory([]), prefixes=("new-",))
    assert split_model("new-1") == ("swap", "new-1")
    with pytest.raises(Exception, match="Cannot tell the provider"):
        split_model("old-1")


def test_key_and_endpoint_come_from_the_descriptors_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[dict[str, Any]] = []
    register_provider(
        "envy",
        recording_factory(built),
        key_env=("ENVY_KEY", "ENVY_OLD_KEY"),
        base_url_env=("ENVY_URL",),
    )
    monkeypatch.setenv("ENVY_OLD_KEY", "old")
    monkeypatch.setenv("ENVY_KEY", "new")
    monkeypatch.setenv("ENVY_URL", "http://127.0.0.1:9/v1")
    get_model("envy:m")
    get_model("envy:m", api_key="option", base_url="http://127.0.0.1:8")
    assert built == [
        {"model_id": "m", "api_key": "new", "base_url": "http://127.0.0.1:9/v1"},
        {"model_id": "m", "api_key": "option", "base_url": "http://127.0.0.1:8"},
    ]


def test_a_borrowed_adapters_models_are_named_after_the_provider_asked() -> None:
    register_provider("lender", recording_factory([]))
    register_provider("borrower", recording_factory([], name="lender:m"))
    assert get_model("borrower:m").name == "borrower:m"
    register_provider("own-name", recording_factory([], name="script"))
    assert get_model("own-name:m").name == "script"


def test_prices_come_from_the_descriptors() -> None:
    assert price_for("openai:gpt-4o-2024-08-06") == Price(2.50, 10.0, 1.25)
    assert price_for("openai:gpt-4o-mini") == Price(0.15, 0.60, 0.075)
    assert price_for("openai-chat:gpt-4o-mini") == Price(0.15, 0.60, 0.075)
    assert price_for("ollama:llama3.2") == price_for("offline") == Price(0.0, 0.0, 0.0)
    assert price_for("openai-chat:my-local-model") is None
    assert price_for("unknown") is None
    register_provider("priced", recording_factory([]), prices={"p-": Price(1.0, 2.0)})
    assert price_for("priced:p-1") == Price(1.0, 2.0)


def test_set_price_overrides_the_descriptor_and_the_longest_prefix_still_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(alloy.pricing, "_BOOK", alloy.pricing._PriceBook())
    set_price("openai:gpt-4o", Price(9.0, 9.0))
    set_price("pricing-test-model", Price(3.0, 4.0))
    assert price_for("openai:gpt-4o-2024-08-06") == Price(9.0, 9.0)
    assert price_for("openai:gpt-4o-mini") == Price(0.15, 0.60, 0.075)
    assert price_for("pricing-test-model") == Price(3.0, 4.0)


def test_a_price_looked_up_before_is_looked_up_again_once_prices_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(alloy.pricing, "_BOOK", alloy.pricing._PriceBook())
    assert price_for("repriced:m-1") is None
    register_provider("repriced", recording_factory([]), prices={"m-": Price(1.0, 1.0)})
    assert price_for("repriced:m-1") == Price(1.0, 1.0)
    set_price("repriced:m-1", Price(2.0, 2.0))
    assert price_for("repriced:m-1") == Price(2.0, 2.0)
    assert cost(Usage(1_000_000, 0), "repriced:m-1") == pytest.approx(2.0)
    register_provider("repriced", recording_factory([]), prices={"m-1-long": Price(5.0, 5.0)})
    assert price_for("repriced:m-1-long") == Price(5.0, 5.0)  # the descriptor's prefix is longer


def test_cost_reads_any_object_with_token_counts() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cached_tokens=500_000)
    assert cost(usage, "openai:gpt-4o") == pytest.approx(0.5 * 2.50 + 0.5 * 1.25 + 10.0)

    class Counts:
        input_tokens, output_tokens, cached_tokens, cache_write_tokens = 2_000_000, 0, 0, 0

    assert cost(Counts(), "anthropic:claude-sonnet-4-5") == pytest.approx(6.0)
    assert cost(usage, "nobody:knows") is None


def test_cache_reads_and_writes_are_priced_at_their_own_rates() -> None:
    # Anthropic: reads at a tenth of the input rate, writes (five minutes) at 1.25 times it.
    usage = Usage(
        input_tokens=1_000_000, cached_tokens=500_000, cache_write_tokens=250_000, requests=1
    )
    sonnet = "anthropic:claude-sonnet-4-5"
    assert cost(usage, sonnet) == pytest.approx(0.25 * 3.0 + 0.5 * 0.3 + 0.25 * 3.75)
    assert cost(Usage(input_tokens=1_000_000), sonnet) == pytest.approx(3.0)
    # Without a write rate, writes cost what input costs; counts above the input are capped.
    assert Price(1.0, 0.0).cost(usage) == pytest.approx(1.0)
    overcounted = Usage(input_tokens=100, cached_tokens=80, cache_write_tokens=80)
    assert Price(1_000_000.0, 0.0, 0.0, 0.0).cost(overcounted) == pytest.approx(0.0)


def test_pricing_does_not_import_the_core_types() -> None:
    tree = ast.parse((ROOT / "alloy" / "pricing.py").read_text(encoding="utf-8"))
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not any(name.endswith("_types") for name in imported), imported
