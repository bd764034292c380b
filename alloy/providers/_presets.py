"""OpenAI-compatible endpoints as presets over the Chat Completions adapter (issue 30 item 1).

Each is a descriptor only: the ``openai-chat`` adapter with its own default base URL, key
variable, base URL variable, declared capability profile (:class:`~alloy.providers.Profile`)
and prices. Local servers (vLLM, llama.cpp, LM Studio, SGLang) need no key and take
``base_url=`` or their own ``*_BASE_URL`` variable; hosted ones read their vendor's key
variable. Declared profiles are what each vendor documents (sources in docs/providers.md,
"OpenAI-compatible presets"); a probe or what the process observes overrides them. Prices are
list prices in USD per million tokens, for the example models, when the vendor publishes them.
"""

from __future__ import annotations

from .._profile import Profile
from ._descriptor import Provider
from ._price import Price
from ._profiles_declared import (
    DEEPSEEK,
    FIREWORKS,
    GROQ,
    LLAMACPP,
    LMSTUDIO,
    MISTRAL,
    OPENROUTER,
    SGLANG,
    TOGETHER,
    VLLM,
    XAI,
)

__all__ = ["PRESETS"]

_CHAT = "alloy.providers.openai_chat:create"
_DIALECT = "alloy.providers._dialects:openai"
_FREE = {"": Price(0.0, 0.0, 0.0)}


def _preset(
    name: str,
    *,
    base_url: str,
    key_env: tuple[str, ...],
    profiles: dict[str, Profile],
    example_models: tuple[str, ...],
    prices: dict[str, Price],
) -> Provider:
    return Provider(
        name,
        _CHAT,
        extra="openai",
        sdk_module="openai",
        needs_model_id=True,
        key_env=key_env,
        base_url_env=(f"{name.upper()}_BASE_URL",),
        dialect=_DIALECT,
        example_models=example_models,
        prices=prices,
        wire="openai",
        profiles=profiles,
        default_base_url=base_url,
    )


PRESETS: tuple[Provider, ...] = (
    _preset(
        "vllm",
        base_url="http://localhost:8000/v1",
        key_env=("VLLM_API_KEY",),
        profiles=VLLM,
        example_models=("Qwen/Qwen3-8B",),
        prices=_FREE,
    ),
    _preset(
        "llamacpp",
        base_url="http://localhost:8080/v1",
        key_env=("LLAMACPP_API_KEY",),
        profiles=LLAMACPP,
        example_models=("qwen3-8b",),
        prices=_FREE,
    ),
    _preset(
        "lmstudio",
        base_url="http://localhost:1234/v1",
        key_env=("LMSTUDIO_API_KEY",),
        profiles=LMSTUDIO,
        example_models=("openai/gpt-oss-20b",),
        prices=_FREE,
    ),
    _preset(
        "sglang",
        base_url="http://localhost:30000/v1",
        key_env=("SGLANG_API_KEY",),
        profiles=SGLANG,
        example_models=("Qwen/Qwen3-8B",),
        prices=_FREE,
    ),
    _preset(
        "groq",
        base_url="https://api.groq.com/openai/v1",
        key_env=("GROQ_API_KEY",),
        profiles=GROQ,
        example_models=("llama-3.3-70b-versatile", "openai/gpt-oss-120b"),
        prices={
            "llama-3.3-70b-versatile": Price(0.59, 0.79),
            "openai/gpt-oss-120b": Price(0.15, 0.75),
        },
    ),
    _preset(
        "openrouter",
        base_url="https://openrouter.ai/api/v1",
        key_env=("OPENROUTER_API_KEY",),
        profiles=OPENROUTER,
        example_models=("openai/gpt-4o-mini",),
        prices={"openai/gpt-4o-mini": Price(0.15, 0.60)},
    ),
    _preset(
        "deepseek",
        base_url="https://api.deepseek.com",
        key_env=("DEEPSEEK_API_KEY",),
        profiles=DEEPSEEK,
        example_models=("deepseek-chat",),
        prices={"deepseek-chat": Price(0.28, 0.42, 0.028)},
    ),
    _preset(
        "mistral",
        base_url="https://api.mistral.ai/v1",
        key_env=("MISTRAL_API_KEY",),
        profiles=MISTRAL,
        example_models=("mistral-small-latest",),
        prices={"mistral-small-latest": Price(0.10, 0.30)},
    ),
    _preset(
        "xai",
        base_url="https://api.x.ai/v1",
        key_env=("XAI_API_KEY",),
        profiles=XAI,
        example_models=("grok-3-mini",),
        prices={"grok-3-mini": Price(0.30, 0.50, 0.075)},
    ),
    _preset(
        "together",
        base_url="https://api.together.xyz/v1",
        key_env=("TOGETHER_API_KEY",),
        profiles=TOGETHER,
        example_models=("meta-llama/Llama-3.3-70B-Instruct-Turbo",),
        prices={"meta-llama/Llama-3.3-70B-Instruct-Turbo": Price(0.88, 0.88)},
    ),
    _preset(
        "fireworks",
        base_url="https://api.fireworks.ai/inference/v1",
        key_env=("FIREWORKS_API_KEY",),
        profiles=FIREWORKS,
        example_models=("accounts/fireworks/models/llama-v3p1-8b-instruct",),
        prices={"accounts/fireworks/models/llama-v3p1-8b-instruct": Price(0.20, 0.20)},
    ),
)
