"""Provider registry: from a model string to a ready Model, importing SDKs only when used.

``"openai:gpt-5-mini"`` names the provider explicitly; bare names are recognised by the
prefixes in the provider descriptors (``gpt-``, ``o1``/``o3``/``o4``, ``claude-``,
``gemini-``), the longest matching prefix winning. Each provider is described once, by a
:class:`Provider`: the CLI, pricing, the emulator and the test fixtures read the same
descriptor. A third party adds its own with :func:`register_provider`.

Models are built once per (model, key, base URL) and reused, so SDK clients and their connection
pools outlive a call. They are kept by a digest of the key, never the key, and only the
``ALLOY_MAX_CLIENTS`` most recently used (64 by default): an app that calls with a key per
tenant (``with_options(api_key=...)``, ``alloy serve --pass-through-keys``) would otherwise keep
a model, its clients and their connections for every key it ever saw. The model let go has its
clients closed once no call is using them (:meth:`SDKModel.close_clients`). A key or endpoint not
given as an option is read from the provider's variables, in the order its SDK reads them, so a
provider that borrows another's adapter (an OpenAI-compatible server with its own
``ACME_API_KEY``) gets its own.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._profile import ENFORCEMENTS, Profile, forget_observed
from ..errors import ConfigurationError
from ._builtin import BUILTIN_PROVIDERS
from ._descriptor import BatchAPIFactory, Dialect, ModelFactory, Provider
from ._presets import PRESETS
from ._price import Price
from ._profiles import (
    PROFILE_STORE_ENV,
    declared_profile,
    endpoint_of,
    family_id,
    load_probe,
    resolve_profile,
    store_probe,
)

if TYPE_CHECKING:
    from pydantic import SecretStr

    from .._model import Model

_REGISTRY: dict[str, Provider] = {
    provider.name: provider for provider in (*BUILTIN_PROVIDERS, *PRESETS)
}
#: Built models, least recently used first, by (provider, model id, key digest, base URL).
_MODELS: OrderedDict[tuple[str, str, str | None, str | None], Model] = OrderedDict()
#: How many built models (each with its SDK clients) are kept; the least recently used beyond
#: it is let go and its clients closed.
MAX_CLIENTS_ENV = "ALLOY_MAX_CLIENTS"
DEFAULT_MAX_CLIENTS = 64
_generation = 0
_LOCK = threading.Lock()


def clear_model_cache() -> None:
    """Drop cached models and their clients (tests use this after changing provider env vars),
    and what this process observed of their endpoints (downgraded profiles)."""
    global _generation
    with _LOCK:
        _MODELS.clear()
        _generation += 1
    forget_observed()


def model_cache_generation() -> int:
    """Changes whenever cached models are dropped, so holders of a Model know to look again."""
    return _generation


def register_provider(
    name: str | Provider,
    factory: ModelFactory | str | None = None,
    *,
    extra: str | None = None,
    sdk_module: str | None = None,
    prefixes: tuple[str, ...] = (),
    needs_model_id: bool = False,
    key_env: tuple[str, ...] = (),
    base_url_env: tuple[str, ...] = (),
    dialect: Dialect | str | None = None,
    batch_api: BatchAPIFactory | str | None = None,
    example_models: tuple[str, ...] = (),
    prices: Mapping[str, Price] | None = None,
    api_family: str | None = None,
    genai_name: str | None = None,
    profiles: Mapping[str, Profile] | None = None,
    wire: str | None = None,
    batch_wire: BatchAPIFactory | str | None = None,
) -> Provider:
    """Add (or replace) a provider, given as a :class:`Provider` or as its fields.

    ``factory(model_id, api_key=..., base_url=...)`` returns a Model. Returns the descriptor.
    ``wire=`` and ``batch_wire=``, the old spellings of ``api_family=`` and ``batch_api=``,
    still work, with a DeprecationWarning.
    """
    for old, new, value in (("wire", "api_family", wire), ("batch_wire", "batch_api", batch_wire)):
        if value is not None:
            warnings.warn(
                f"register_provider({old}=...) is now register_provider({new}=...)",
                DeprecationWarning,
                stacklevel=2,
            )
    fields: dict[str, Any] = {
        "extra": extra,
        "sdk_module": sdk_module,
        "needs_model_id": needs_model_id,
        "prefixes": prefixes,
        "key_env": key_env,
        "base_url_env": base_url_env,
        "dialect": dialect,
        "batch_api": batch_api if batch_api is not None else batch_wire,
        "example_models": example_models,
        "prices": prices or {},
        "api_family": api_family if api_family is not None else wire,
        "genai_name": genai_name,
        "profiles": profiles or {},
    }
    if isinstance(name, Provider):
        given = sorted(field for field, value in fields.items() if value)
        if factory is not None or given:
            raise TypeError(
                "register_provider(Provider(...)) takes no other arguments, "
                f"not {', '.join(['factory'] * (factory is not None) + given)}"
            )
        provider = name
    elif factory is None:
        raise TypeError(f"register_provider({name!r}) needs a factory")
    else:
        provider = Provider(name, factory, **fields)
    _REGISTRY[provider.name] = provider
    clear_model_cache()
    return provider


def providers() -> dict[str, Provider]:
    """The registered providers, by name, in registration order."""
    return dict(_REGISTRY)


def provider_of(model_name: str) -> Provider | None:
    """The descriptor of the provider a model is named after (``"acme:llama"`` -> Acme's), or
    None for a model whose name starts with no registered provider (a Model object's own)."""
    name, sep, _ = model_name.partition(":")
    return _REGISTRY.get(name if sep else model_name)


def dialect_for(model_name: str) -> Dialect | None:
    """The schema dialect a model's requests are sent in: its provider's (``Provider.dialect``),
    or None (the schema as it is) for a provider without one or a name no provider has."""
    provider = provider_of(model_name)
    return provider.load_dialect() if provider is not None else None


def profile_for(model: Model, override: Profile | Mapping[str, object] | None = None) -> Profile:
    """The capability profile ``model``'s calls run by: the user's ``override``, else a stored
    probe, what this process observed, its provider's declaration, or its family (see
    :func:`resolve_profile`)."""
    return resolve_profile(model, provider_of(model.name), override)


def declares_profiles(model_name: str) -> bool:
    """Whether the model's provider declares its endpoint's profiles: such an endpoint may drop
    a schema silently (answer it with prose), which calls then watch for."""
    provider = provider_of(model_name)
    return provider is not None and bool(provider.profiles)


def env_prefixes() -> tuple[str, ...]:
    """The variable families every registered provider's SDK reads (``OPENAI_``, ``ACME_``…)."""
    return tuple(dict.fromkeys(p for provider in _REGISTRY.values() for p in provider.env_prefixes))


def split_model(model: str) -> tuple[str, str]:
    """``"provider:model-id"`` or a bare name with a known prefix -> (provider, model id)."""
    provider, sep, model_id = model.partition(":")
    if sep and provider in _REGISTRY:
        return provider, model_id
    if model in _REGISTRY:
        return model, ""
    owner, longest = None, -1
    for candidate in _REGISTRY.values():
        for prefix in candidate.prefixes:
            if model.startswith(prefix) and len(prefix) > longest:
                owner, longest = candidate.name, len(prefix)
    if owner is not None:
        return owner, model
    if sep and provider == "local":
        raise ConfigurationError(
            f"'local:' in model {model!r} was alloy-ai's prefix for an Ollama model: write it "
            f"as 'ollama:{model_id}'"
        )
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

    A key or base URL not given is read from the provider's variables. A factory receives the
    key as a plain ``str`` (its documented signature); alloy's own adapters keep it as a
    ``SecretStr``.
    """
    if api_key is not None and not isinstance(api_key, str):
        api_key = api_key.get_secret_value()
    if model is None or model == "":
        raise ConfigurationError(NO_MODEL)
    if not isinstance(model, str):
        return model
    provider_name, model_id = split_model(model)
    provider = _REGISTRY[provider_name]
    api_key = api_key or provider.api_key_from_env()
    base_url = base_url or provider.base_url_from_env() or provider.default_base_url
    missing_key = None
    if _borrows_adapter(provider):
        missing_key = _missing_key(provider, api_key)
        api_key, base_url = _own_credentials(provider, api_key, base_url)
    # The key is cached by digest so no secret sits in a dict someone might print.
    key = (provider_name, model_id, _digest(api_key), base_url)
    limit = max_clients()
    evicted: list[Model] = []
    with _LOCK:
        cached = _MODELS.get(key)
        if cached is None:
            cached = provider.load_factory()(model_id, api_key=api_key, base_url=base_url)
            _name_for(cached, provider_name)
            if missing_key is not None:
                _lacks_key(cached, missing_key, provider.key_env)
            _MODELS[key] = cached
            while len(_MODELS) > limit:
                evicted.append(_MODELS.popitem(last=False)[1])
        else:
            _MODELS.move_to_end(key)
    for model in evicted:
        close_clients(model)
    return cached


def max_clients() -> int:
    """How many built models ``ALLOY_MAX_CLIENTS`` lets alloy keep (64 when unset)."""
    raw = (os.environ.get(MAX_CLIENTS_ENV) or "").strip()
    if not raw:
        return DEFAULT_MAX_CLIENTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(
            f"{MAX_CLIENTS_ENV}={raw!r}: expected a whole number of models to keep, at least 1"
        )
    return value


def close_clients(model: Model) -> None:
    """Close the SDK clients of a model alloy let go (once no call is using them); a model
    of another kind is left to the garbage collector."""
    close = getattr(model, "close_clients", None)
    if callable(close):
        close()


#: Sent as the key of a provider that borrows an adapter and has none: its SDK then has a key
#: and reads no variable of its own provider (see :func:`_own_credentials`).
NO_KEY = "alloy-no-key"


def _borrows_adapter(provider: Provider) -> bool:
    """Whether ``provider`` is served by the factory of another provider that has credentials.

    The lender is the first provider registered with that factory (``openai-chat`` for the
    presets over it), whose SDK has variables of its own to fall back to; two names for one
    credential-free model (``offline`` and ``fake``) borrow nothing.
    """
    lender = next(p for p in _REGISTRY.values() if p.factory == provider.factory)
    return lender.name != provider.name and bool(lender.key_env or lender.base_url_env)


def _own_credentials(
    provider: Provider, api_key: str | None, base_url: str | None
) -> tuple[str, str]:
    """The key and endpoint of a provider that borrows another's adapter, never that other's.

    Left to itself, the borrowed SDK falls back to its own variables: with no key it would send
    ``OPENAI_API_KEY`` to Acme's server, and with no endpoint it would send Acme's key to
    OpenAI. So the endpoint must come from this provider (an option or its own variable), and
    without a key of its own a placeholder is sent, which local servers ignore (a hosted one
    refuses to send it: :func:`_missing_key`).
    """
    if not base_url:
        where = " or ".join(provider.base_url_env) or "a base URL variable in its descriptor"
        raise ConfigurationError(
            f"Provider {provider.name!r} needs its endpoint: set {where} or pass base_url=..."
            " (it borrows another provider's adapter, whose own endpoint it must not reach)"
        )
    return api_key or NO_KEY, base_url


def _missing_key(provider: Provider, api_key: str | None) -> str | None:
    """What to say when a preset over a hosted service (Groq, DeepSeek...) has no key of its own;
    None when it has one, or when its default endpoint is on this machine (vLLM, llama.cpp, LM
    Studio, SGLang), whose servers take none."""
    local = urlsplit(provider.default_base_url or "").hostname in ("localhost", "127.0.0.1")
    if api_key or not provider.default_base_url or local:
        return None
    variables = " or ".join(provider.key_env)
    return (
        f"No API key for {provider.name!r}: set the {variables} environment variable"
        " or pass api_key=..."
    )


def _lacks_key(model: Model, message: str, key_env: tuple[str, ...]) -> None:
    """Make the model refuse to build a client until one of ``key_env`` is set, so its first
    call without a key fails before any request."""
    from ._base import SDKModel

    if isinstance(model, SDKModel):
        model.missing_key, model.missing_key_env = message, key_env


def _name_for(model: Model, provider_name: str) -> None:
    """Name a model after the provider it was asked of, when that provider borrowed an adapter.

    ``acme:llama`` served by the Chat Completions adapter would otherwise be called
    ``openai-chat:llama`` in results, errors and price lookups, and its errors would name
    ``openai-chat`` as the provider that failed.
    """
    adapter, sep, model_id = model.name.partition(":")
    if sep and adapter != provider_name and adapter in _REGISTRY:
        model.name = f"{provider_name}:{model_id}"
        if hasattr(model, "provider"):
            model.provider = provider_name


def _digest(secret: str | None) -> str | None:
    if secret is None:
        return None
    import hashlib

    return hashlib.sha256(secret.encode()).hexdigest()


__all__ = [
    "ENFORCEMENTS",
    "PROFILE_STORE_ENV",
    "BatchAPIFactory",
    "Dialect",
    "ModelFactory",
    "Price",
    "Profile",
    "Provider",
    "clear_model_cache",
    "declared_profile",
    "declares_profiles",
    "endpoint_of",
    "env_prefixes",
    "family_id",
    "get_model",
    "load_probe",
    "profile_for",
    "providers",
    "register_provider",
    "resolve_profile",
    "split_model",
    "store_probe",
]


def __getattr__(name: str) -> Any:
    """Old spellings, with a DeprecationWarning (docs/migrating.md)."""
    from .._renamed import renamed

    return renamed(__name__, {"BatchWireFactory": "BatchAPIFactory"}, globals())(name)
