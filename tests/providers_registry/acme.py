"""A third-party provider made only through the public registration: "Acme", an
OpenAI-compatible server (vLLM, LM Studio, a Together-style endpoint) with its own model names,
key and endpoint variables and prices, spoken to through the Chat Completions adapter.
"""

from __future__ import annotations

from alloy import register_provider
from alloy.providers import Price, Provider, providers


def register_acme() -> Provider:
    """Register Acme; what ``docs/adding-a-provider.md`` shows."""
    return register_provider(
        "acme",
        "alloy.providers.openai_chat:create",
        extra="openai",
        sdk_module="openai",
        needs_model_id=True,
        prefixes=("acme-",),
        key_env=("ACME_API_KEY",),
        base_url_env=("ACME_BASE_URL",),
        dialect=providers()["openai-chat"].dialect,
        example_models=("acme-llama-3-70b",),
        prices={"acme-llama-3": Price(input=0.60, output=0.60)},
        api_family="openai",
    )
