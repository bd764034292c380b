"""The providers alloy ships, described once (see :class:`~alloy.providers.Provider`).

Prices are list prices in USD per million tokens at the time of writing; they change, so
:func:`alloy.pricing.set_price` overrides them. Anthropic charges writes to its prompt cache
(five-minute lifetime, what ``prompt_cache=True`` asks for) at 1.25 times the input rate; OpenAI
and Gemini charge no more than input for implicit cache writes. Key and endpoint variables are listed in the
order each SDK reads them (google-genai prefers ``GOOGLE_API_KEY`` over ``GEMINI_API_KEY``).
"""

from __future__ import annotations

from dataclasses import astuple
from functools import partial

from . import _profiles_cloud as cloud
from ._descriptor import Provider
from ._price import Price

__all__ = ["BUILTIN_PROVIDERS"]

_OPENAI_PRICES = {
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.0, 8.0, 0.5),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o3": Price(2.0, 8.0, 0.5),
    "o4-mini": Price(1.10, 4.40, 0.275),
}
_FREE = {"": Price(0.0, 0.0, 0.0)}
_CLAUDE_PRICES = {
    "claude-opus-4": Price(15.0, 75.0, 1.5, 18.75),
    "claude-opus-4-5": Price(5.0, 25.0, 0.5, 6.25),
    "claude-sonnet-4": Price(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.1, 1.25),
}


def _claude_on_bedrock() -> dict[str, Price]:
    """Claude through Bedrock Invoke, by model id: ``global.`` profiles at Anthropic's prices;
    in-region ids (``anthropic.``) and geographic profiles (``us.``, ``eu.``...) of Claude 4.5
    and later cost 10% more."""
    sonnet, opus = _CLAUDE_PRICES["claude-sonnet-4"], _CLAUDE_PRICES["claude-opus-4-5"]
    later = {"claude-sonnet-4-5": sonnet, "claude-sonnet-4-6": sonnet, "claude-opus-4-6": opus}
    prices = {}
    for geo in ("global.", "", "us.", "eu.", "apac.", "jp.", "au."):
        for model, p in {**_CLAUDE_PRICES, **later}.items():
            factor = 1.1 if geo != "global." and model.endswith(("-4-5", "-4-6")) else 1.0
            prices[f"{geo}anthropic.{model}"] = Price(*(round(x * factor, 6) for x in astuple(p)))
    return prices


def _converse_prices() -> dict[str, Price]:
    """Models through Bedrock Converse, by model id: Claude as through Invoke, and Amazon Nova,
    whose in-region and geographic profiles cost the same."""
    nova = {
        "amazon.nova-pro": Price(0.80, 3.20, 0.20),
        "amazon.nova-lite": Price(0.06, 0.24, 0.015),
        "amazon.nova-micro": Price(0.035, 0.14, 0.00875),
    }
    geos = ("", "us.", "eu.", "apac.")
    return {
        **_claude_on_bedrock(),
        **{geo + model: price for geo in geos for model, price in nova.items()},
    }


def _behind(family: str, sdk: str) -> partial[Provider]:
    """A Provider speaking an API ``family`` through the ``sdk`` package: the pip extra named
    after the family (unless it gives its own), its schema dialect, and a model id to name."""
    dialect = f"alloy.providers._dialects:{family}"
    return partial(
        Provider,
        extra=family,
        sdk_module=sdk,
        needs_model_id=True,
        dialect=dialect,
        api_family=family,
    )


_OPENAI_SDK, _ANTHROPIC_SDK = _behind("openai", "openai"), _behind("anthropic", "anthropic")
_GEMINI_SDK, _BEDROCK_SDK = _behind("gemini", "google.genai"), _behind("bedrock", "boto3")
_OLLAMA_SDK = _behind("ollama", "ollama")


BUILTIN_PROVIDERS: tuple[Provider, ...] = (
    _OPENAI_SDK(
        "openai",
        "alloy.providers.openai_responses:create",
        prefixes=("gpt-", "o1", "o3", "o4", "chatgpt-"),
        key_env=("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
        batch_api="alloy.providers.openai_batch:responses_batch_api",
        example_models=("gpt-5-mini", "gpt-4o", "gpt-4-turbo"),
        prices=_OPENAI_PRICES,
    ),
    _OPENAI_SDK(
        "openai-chat",
        "alloy.providers.openai_chat:create",
        key_env=("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
        batch_api="alloy.providers.openai_batch:chat_batch_api",
        example_models=("gpt-4.1-mini", "o1-mini"),
        prices=_OPENAI_PRICES,
        genai_name="openai",
    ),
    _OPENAI_SDK(
        "azure",
        "alloy.providers.azure:create",
        key_env=("AZURE_OPENAI_API_KEY",),
        base_url_env=("AZURE_OPENAI_ENDPOINT",),
        example_models=("my-gpt-4o-deployment",),
        genai_name="azure.ai.openai",
    ),
    _OPENAI_SDK(
        "azure-chat",
        "alloy.providers.azure:create_chat",
        key_env=("AZURE_OPENAI_API_KEY",),
        base_url_env=("AZURE_OPENAI_ENDPOINT",),
        example_models=("my-gpt-4o-deployment",),
        genai_name="azure.ai.openai",
    ),
    _ANTHROPIC_SDK(
        "anthropic",
        "alloy.providers.anthropic:create",
        prefixes=("claude-",),
        key_env=("ANTHROPIC_API_KEY",),
        base_url_env=("ANTHROPIC_BASE_URL",),
        batch_api="alloy.providers.anthropic_batch:AnthropicBatchAPI",
        example_models=("claude-sonnet-4-6", "claude-opus-4-1", "claude-sonnet-4-0"),
        prices=_CLAUDE_PRICES,
    ),
    _GEMINI_SDK(
        "gemini",
        "alloy.providers.gemini:create",
        needs_model_id=False,
        prefixes=("gemini-",),
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        base_url_env=("GOOGLE_GEMINI_BASE_URL",),
        batch_api="alloy.providers.gemini_batch:GeminiBatchAPI",
        example_models=("gemini-2.5-flash",),
        prices={
            "gemini-2.5-pro": Price(1.25, 10.0, 0.31),
            "gemini-2.5-flash": Price(0.30, 2.50, 0.075),
            "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.025),
        },
        genai_name="gcp.gemini",
    ),
    _GEMINI_SDK(
        "vertex",
        "alloy.providers.vertex:create",
        needs_model_id=False,
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        base_url_env=("GOOGLE_VERTEX_BASE_URL",),
        example_models=("gemini-2.5-flash",),
        prices={
            "gemini-2.5-pro": Price(1.25, 10.0, 0.125),
            "gemini-2.5-flash": Price(0.30, 2.50, 0.03),
            "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01),
        },
        profiles=cloud.VERTEX,
        genai_name="gcp.vertex_ai",
    ),
    _ANTHROPIC_SDK(
        "anthropic-foundry",
        "alloy.providers.anthropic_foundry:create",
        key_env=("ANTHROPIC_FOUNDRY_API_KEY",),
        base_url_env=("ANTHROPIC_FOUNDRY_BASE_URL",),
        example_models=("claude-sonnet-4-6", "claude-haiku-4-5"),
        prices=_CLAUDE_PRICES,
        profiles=cloud.CLAUDE_ON_CLOUDS,
        genai_name="anthropic",
    ),
    _ANTHROPIC_SDK(
        "anthropic-vertex",
        "alloy.providers.anthropic_vertex:create",
        extra="anthropic-vertex",
        key_env=("ANTHROPIC_VERTEX_ACCESS_TOKEN",),
        base_url_env=("ANTHROPIC_VERTEX_BASE_URL",),
        example_models=("claude-haiku-4-5@20251001", "claude-sonnet-4-6"),
        prices=_CLAUDE_PRICES,
        profiles=cloud.CLAUDE_ON_CLOUDS,
        genai_name="gcp.vertex_ai",
    ),
    _ANTHROPIC_SDK(
        "anthropic-bedrock",
        "alloy.providers.anthropic_bedrock:create",
        extra="anthropic-bedrock",
        key_env=("AWS_BEARER_TOKEN_BEDROCK",),
        base_url_env=("ANTHROPIC_BEDROCK_BASE_URL",),
        example_models=(
            "us.anthropic.claude-haiku-4-5-20251001-v1:0",
            "global.anthropic.claude-sonnet-4-6",
        ),
        prices=_claude_on_bedrock(),
        profiles=cloud.CLAUDE_ON_CLOUDS,
        genai_name="aws.bedrock",
    ),
    _BEDROCK_SDK(
        "bedrock",
        "alloy.providers.bedrock:create",
        key_env=("AWS_BEARER_TOKEN_BEDROCK",),
        base_url_env=("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL"),
        example_models=("us.anthropic.claude-haiku-4-5-20251001-v1:0", "amazon.nova-lite-v1:0"),
        prices=_converse_prices(),
        profiles=cloud.BEDROCK,
        genai_name="aws.bedrock",
    ),
    _OLLAMA_SDK(
        "ollama",
        "alloy.providers.ollama:create",
        key_env=("OLLAMA_API_KEY",),
        base_url_env=("OLLAMA_HOST",),
        example_models=("llama3.2",),
        prices=_FREE,
    ),
    Provider("offline", "alloy.providers.offline:create", example_models=("",), prices=_FREE),
    Provider("fake", "alloy.providers.offline:create", prices=_FREE),
)
