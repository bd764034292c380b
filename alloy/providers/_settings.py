"""Options only some providers take: reasoning effort and prompt-cache names.

Each adapter maps ``reasoning_effort``, ``prompt_cache_key`` and ``cached_content`` to its own
wire fields, or refuses them here, before anything is sent: a setting a provider cannot honour
is a ConfigurationError that says what the provider takes instead, never a field dropped in
silence (the call would then cost or think other than asked).
"""

from __future__ import annotations

from .._types import ModelSettings
from ..errors import ConfigurationError


def unsupported(provider: str, option: str, value: object, takes: str) -> ConfigurationError:
    """The error for ``option=value`` on ``provider``; ``takes`` says what it accepts instead."""
    return ConfigurationError(f"{provider} cannot take {option}={value!r}: {takes}")


def refuse_cache_names(
    settings: ModelSettings, provider: str, *, key: bool = False, content: bool = False
) -> None:
    """Refuse ``prompt_cache_key`` (OpenAI's) and ``cached_content`` (Gemini's) on a provider
    without that field: ``key`` and ``content`` say which of them it has."""
    if settings.prompt_cache_key is not None and not key:
        raise unsupported(
            provider,
            "prompt_cache_key",
            settings.prompt_cache_key,
            "it is OpenAI's routing hint for its prompt cache (providers openai and openai-chat)",
        )
    if settings.cached_content is not None and not content:
        raise unsupported(
            provider,
            "cached_content",
            settings.cached_content,
            "it names a Gemini context cache (provider gemini)",
        )


__all__ = ["refuse_cache_names", "unsupported"]
