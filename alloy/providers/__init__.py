"""Provider registry: from a model string to a ready Model, importing SDKs only when used.

``"openai:gpt-5-mini"`` names the provider explicitly; bare names are recognised by their known
prefixes (``gpt-``, ``o1``/``o3``/``o4``, ``claude-``, ``gemini-``). A third party registers its own
provider with :func:`register_provider`. Models are built once per (model, key, base URL) and
reused, so SDK clients and their connection pools live as long as the process.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from pydantic import SecretStr

    from .._model import Model

ModelFactory = Callable[..., "Model"]


@dataclass(frozen=True)
class Provider:
    """How to build models of one provider. ``factory`` may be ``"module:function"`` (lazy).

    ``needs_model_id`` says that the provider's name alone (``"openai"``, ``"ollama:"``) is not a
    model, so configuration can refuse it where it is read instead of when the model is built.
    """

    name: str
    factory: ModelFactory | str
    extra: str | None = None
    sdk_module: str | None = None
    needs_model_id: bool = False

    def load_factory(self) -> ModelFactory:
        if callable(self.factory):
            return self.factory
        if self.sdk_module and importlib.util.find_spec(self.sdk_module.split(".")[0]) is None:
            raise ConfigurationError(
                f"Provider {self.name!r} needs the {self.sdk_module!r} package: "
                f"pip install 'alloy[{self.extra}]'"
            )
        module_name, _, attr = self.factory.partition(":")
        factory: ModelFactory = getattr(importlib.import_module(module_name), attr)
        return factory


_REGISTRY: dict[str, Provider] = {}
_PREFIXES: list[tuple[str, str]] = []
_MODELS: dict[tuple[str, str, str | None, str | None], Model] = {}
_generation = 0
_LOCK = threading.Lock()


def clear_model_cache() -> None:
    """Drop cached models and their clients (tests use this after changing provider env vars)."""
    global _generation
    with _LOCK:
        _MODELS.clear()
        _generation += 1


def model_cache_generation() -> int:
    """Changes whenever cached models are dropped, so holders of a Model know to look again."""
    return _generation


def register_provider(
    name: str,
    factory: ModelFactory | str,
    *,
    extra: str | None = None,
    sdk_module: str | None = None,
    prefixes: tuple[str, ...] = (),
    needs_model_id: bool = False,
) -> None:
    """Add (or replace) a provider. ``factory(model_id, api_key=..., base_url=...)`` returns a Model."""
    _REGISTRY[name] = Provider(name, factory, extra, sdk_module, needs_model_id)
    _PREFIXES.extend((prefix, name) for prefix in prefixes)
    clear_model_cache()


def providers() -> dict[str, Provider]:
    """The registered providers, by name."""
    return dict(_REGISTRY)


register_provider(
    "openai",
    "alloy.providers.openai_responses:create",
    extra="openai",
    sdk_module="openai",
    prefixes=("gpt-", "o1", "o3", "o4", "chatgpt-"),
    needs_model_id=True,
)
register_provider(
    "openai-chat",
    "alloy.providers.openai_chat:create",
    extra="openai",
    sdk_module="openai",
    needs_model_id=True,
)
register_provider(
    "anthropic",
    "alloy.providers.anthropic:create",
    extra="anthropic",
    sdk_module="anthropic",
    prefixes=("claude-",),
    needs_model_id=True,
)
register_provider(
    "gemini",
    "alloy.providers.gemini:create",
    extra="gemini",
    sdk_module="google.genai",
    prefixes=("gemini-",),
)
register_provider(
    "ollama",
    "alloy.providers.ollama:create",
    extra="ollama",
    sdk_module="ollama",
    needs_model_id=True,
)
register_provider("offline", "alloy.providers.offline:create")
register_provider("fake", "alloy.providers.offline:create")


def split_model(model: str) -> tuple[str, str]:
    """``"provider:model-id"`` or a bare name with a known prefix -> (provider, model id)."""
    provider, sep, model_id = model.partition(":")
    if sep and provider in _REGISTRY:
        return provider, model_id
    if model in _REGISTRY:
        return model, ""
    for prefix, name in _PREFIXES:
        if model.startswith(prefix):
            return name, model
    if sep:
        raise ConfigurationError(
            f"Unknown provider {provider!r} in model {model!r}; known providers: {', '.join(sorted(_REGISTRY))}"
        )
    raise ConfigurationError(
        f"Cannot tell the provider of model {model!r}; write it as 'provider:model' "
        f"(providers: {', '.join(sorted(_REGISTRY))})"
    )


NO_MODEL = (
    "No model configured: set ALLOY_MODEL (for example 'openai:gpt-5-mini', or 'offline' for the "
    "built-in offline model) or pass model=... to @command, configure() or use_config()"
)


def get_model(
    model: str | Model | None,
    *,
    api_key: str | SecretStr | None = None,
    base_url: str | None = None,
) -> Model:
    """The Model for a model string (built once and cached) or a Model instance as given.

    A factory receives the key as a plain ``str`` (its documented signature); alloy's own
    adapters keep it as a ``SecretStr``.
    """
    if api_key is not None and not isinstance(api_key, str):
        api_key = api_key.get_secret_value()
    if model is None or model == "":
        raise ConfigurationError(NO_MODEL)
    if not isinstance(model, str):
        return model
    provider_name, model_id = split_model(model)
    # The key is cached by digest so no secret sits in a dict someone might print.
    key = (provider_name, model_id, _digest(api_key), base_url)
    cached = _MODELS.get(key)
    if cached is not None:
        return cached
    with _LOCK:
        cached = _MODELS.get(key)
        if cached is None:
            factory = _REGISTRY[provider_name].load_factory()
            cached = factory(model_id, api_key=api_key, base_url=base_url)
            _MODELS[key] = cached
    return cached


def _digest(secret: str | None) -> str | None:
    if secret is None:
        return None
    import hashlib

    return hashlib.sha256(secret.encode()).hexdigest()


__all__ = [
    "Provider",
    "clear_model_cache",
    "get_model",
    "providers",
    "register_provider",
    "split_model",
]
