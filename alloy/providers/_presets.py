"""OpenAI-compatible endpoints as presets over the Chat Completions adapter (issue 30 item 1).

Each is a descriptor only: the ``openai-chat`` adapter with its own default base URL, key
variable (``<NAME>_API_KEY``), base URL variable (``<NAME>_BASE_URL``), declared capability
profile (:class:`~alloy.providers.Profile`, by model id prefix, ``""`` for every model) and
prices. Local servers (vLLM, llama.cpp, LM Studio, SGLang) need no key and are free; hosted ones
need their vendor's key. Declared profiles are what each vendor documents (sources in
docs/providers.md, "OpenAI-compatible presets"); a probe or what the process observes overrides
them. Prices are list prices in USD per million tokens for the example models.
"""

from __future__ import annotations

from dataclasses import replace

from .._profile import Profile, ToolChoice
from ._builtin import _OPENAI_SDK
from ._descriptor import Provider
from ._price import Price

__all__ = ["PRESETS"]

_NO_NAMED: frozenset[ToolChoice] = frozenset({"auto", "required", "none"})
_GUIDED: frozenset[ToolChoice] = frozenset({"named", "required", "none"})
_GROQ = Profile(schema_with_tools=False, schema_with_streaming=False)
_ALL = Profile()  # everything a current OpenAI model does


def _local(name: str, port: int, example: str, profile: Profile = _ALL) -> Provider:
    """A server on this machine: no key, no price."""
    url = f"http://localhost:{port}/v1"
    return _preset(name, url, {"": profile}, (example,), {"": Price(0.0, 0.0, 0.0)})


def _hosted(
    name: str, url: str, prices: dict[str, Price], profile: Profile | dict[str, Profile] = _ALL
) -> Provider:
    """A vendor's service: its key, a price for each example model, and its profile (by model id
    prefix where models differ)."""
    profiles = profile if isinstance(profile, dict) else {"": profile}
    return _preset(name, url, profiles, tuple(prices), prices)


def _preset(
    name: str,
    url: str,
    profiles: dict[str, Profile],
    examples: tuple[str, ...],
    prices: dict[str, Price],
) -> Provider:
    """The ``openai-chat`` adapter with the preset's own endpoint, variables, profile and prices."""
    chat, upper = "alloy.providers.openai_chat:create", name.upper()
    keys, urls = f"{upper}_API_KEY", f"{upper}_BASE_URL"
    return _OPENAI_SDK(
        name,
        chat,
        key_env=keys,
        base_url_env=urls,
        default_base_url=url,
        example_models=examples,
        prices=prices,
        profiles=profiles,
    )


PRESETS: tuple[Provider, ...] = (
    # json_schema by default; named and "required" tool_choice are guided, "auto" needs
    # --enable-auto-tool-choice and a parser; a schema suppresses tool calls.
    _local("vllm", 8000, "Qwen/Qwen3-8B", Profile(tool_choice=_GUIDED, schema_with_tools=False)),
    # Grammars for json_schema and json_object; tools with --jinja; a named tool_choice acts as auto.
    _local("llamacpp", 8080, "qwen3-8b", Profile(tool_choice=_NO_NAMED)),
    # json_schema only: json_object is refused with a 400.
    _local(
        "lmstudio", 1234, "openai/gpt-oss-20b", Profile(json_object=False, tool_choice=_NO_NAMED)
    ),
    # json_schema through its grammar backends; tools with a tool-call parser.
    _local("sglang", 30000, "Qwen/Qwen3-8B"),
    # Strict only on the gpt-oss models; a schema neither streams nor goes with tools.
    _hosted(
        "groq",
        "https://api.groq.com/openai/v1",
        {
            "llama-3.3-70b-versatile": Price(0.59, 0.79),
            "openai/gpt-oss-120b": Price(0.15, 0.60, 0.075),
        },
        {
            "": replace(_GROQ, json_schema="best-effort"),
            "openai/gpt-oss": replace(_GROQ, strict_tools=True),
        },
    ),
    # Routes to a provider that may lack a feature, so schemas are best-effort.
    _hosted(
        "openrouter",
        "https://openrouter.ai/api/v1",
        {"openai/gpt-4o-mini": Price(0.15, 0.60)},
        Profile(json_schema="best-effort"),
    ),
    # JSON Output (json_object) only, no JSON Schema; function calling.
    _hosted(
        "deepseek",
        "https://api.deepseek.com",
        {"deepseek-chat": Price(0.28, 0.42, 0.028)},
        Profile(json_schema="no"),
    ),
    # Structured outputs (json_schema), JSON mode and function calling.
    _hosted("mistral", "https://api.mistral.ai/v1", {"mistral-small-latest": Price(0.10, 0.30)}),
    _hosted("xai", "https://api.x.ai/v1", {"grok-3-mini": Price(0.30, 0.50, 0.075)}),
    # JSON mode with a schema on its supported models, best-effort elsewhere.
    _hosted(
        "together",
        "https://api.together.xyz/v1",
        {"meta-llama/Llama-3.3-70B-Instruct-Turbo": Price(0.88, 0.88)},
        Profile(json_schema="best-effort"),
    ),
    # Grammar-based JSON mode with a schema, and function calling.
    _hosted(
        "fireworks",
        "https://api.fireworks.ai/inference/v1",
        {"accounts/fireworks/models/llama-v3p1-8b-instruct": Price(0.20, 0.20)},
    ),
)
