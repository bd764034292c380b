"""A provider, described once: everything alloy knows about it besides its adapter's code.

The registry (:mod:`alloy.providers`) routes model strings and builds models from it,
``alloy providers`` and ``alloy schema`` print from it, :mod:`alloy.pricing` takes its prices,
:mod:`alloy.batch` its batch API, and the emulator and the test fixtures point its SDK at a
local server through its variables. Nothing here imports an SDK: the factory, the schema
dialect and the batch API may be ``"module:function"`` strings, resolved on first use, so
``import alloy`` stays light.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._profile import Profile
from .._types import Dialect
from ..errors import ConfigurationError
from ._price import Price

if TYPE_CHECKING:
    from .._model import Model
    from .batch_api import BatchAPI

__all__ = ["BatchAPIFactory", "Dialect", "ModelFactory", "Provider"]

#: ``factory(model_id, api_key=..., base_url=...)`` returns a Model.
ModelFactory = Callable[..., "Model"]
#: ``batch_api(model)`` returns the provider's batch API for a model its factory built.
BatchAPIFactory = Callable[[Any], "BatchAPI"]


@dataclass(frozen=True)
class Provider:
    """One provider's facts. Only ``name`` and ``factory`` are required.

    Attributes:
        name: what model strings start with (``"openai"`` in ``"openai:gpt-5-mini"``).
        factory: builds a model; a ``"module:function"`` string is imported on first use.
        extra: the pip extra that installs the SDK (``pip install 'alloy[extra]'``).
        sdk_module: the SDK's import name; a missing one is a ConfigurationError naming the extra.
        needs_model_id: the name alone (``"openai"``) is not a model, so configuration refuses it.
        prefixes: bare model names with one of these prefixes belong to this provider.
        key_env: the variables the key is read from, in the order the SDK reads them.
        base_url_env: the variables the endpoint is read from, in the same order.
        dialect: turns the canonical output schema into what the provider accepts, as
            ``dialect(schema, model_id)``; None means the schema is sent as it is.
        batch_api: the provider's batch API (``mode="batch"``), as ``batch_api(model)``
            returning a :class:`~alloy.providers.batch_api.BatchAPI`; a ``"module:function"``
            string is imported on first use. None: the provider has none (runs go online).
        example_models: model ids shown in the capability matrix (``""``: the provider's default).
        prices: USD per million tokens by model id prefix; the longest matching prefix wins.
        api_family: the family of HTTP APIs it speaks, as the emulator names it (``"openai"``
            for Responses and Chat Completions, ``"anthropic"``, ``"gemini"``, ``"ollama"``,
            ``"bedrock"``); None for none.

    ``wire=`` and ``batch_wire=`` are the old spellings of ``api_family=`` and ``batch_api=``,
    accepted (and read back) with a DeprecationWarning.
        genai_name: its name in the OpenTelemetry GenAI conventions (``gen_ai.provider.name``,
            e.g. ``"gcp.gemini"``) where that differs from ``name``.
        profiles: what the endpoint supports (:class:`~alloy.providers.Profile`) by model id
            prefix, the longest matching prefix winning (``""``: every model); tried on the id
            as given and as its family knows it (``alloy.providers.family_id``). Empty: the
            adapter's own profile of the model family, and a schema answered with prose is
            the model's mistake (re-asked), not a silently dropped schema.
        default_base_url: the endpoint used when neither ``base_url=`` nor a variable of
            ``base_url_env`` gives one (a preset over another provider's adapter).
    """

    name: str
    factory: ModelFactory | str
    extra: str | None = None
    sdk_module: str | None = None
    needs_model_id: bool = False
    prefixes: tuple[str, ...] = ()
    key_env: tuple[str, ...] = ()
    base_url_env: tuple[str, ...] = ()
    dialect: Dialect | str | None = None
    batch_api: BatchAPIFactory | str | None = None
    example_models: tuple[str, ...] = ()
    prices: Mapping[str, Price] = field(default_factory=dict, hash=False)
    api_family: str | None = None
    genai_name: str | None = None
    profiles: Mapping[str, Profile] = field(default_factory=dict, hash=False)
    default_base_url: str | None = None

    def __post_init__(self) -> None:
        # A lone string where a tuple belongs ("ACME_API_KEY") would otherwise be read letter
        # by letter; prices are copied so the frozen descriptor cannot change under a reader.
        for name in ("prefixes", "key_env", "base_url_env", "example_models"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))
        object.__setattr__(self, "profiles", MappingProxyType(dict(self.profiles)))

    # -- environment --------------------------------------------------------------------------

    @property
    def env(self) -> tuple[str, ...]:
        """Every variable the provider reads: keys first, then endpoints."""
        return self.key_env + self.base_url_env

    @property
    def env_prefixes(self) -> tuple[str, ...]:
        """The variable families its SDK reads (``OPENAI_`` for ``OPENAI_API_KEY``).

        Test fixtures clear whole families, because SDKs read more than the key and the
        endpoint (``OPENAI_CUSTOM_HEADERS``, ``GOOGLE_GENAI_USE_VERTEXAI``).
        """
        return tuple(dict.fromkeys(variable.split("_", 1)[0] + "_" for variable in self.env))

    def api_key_from_env(self) -> str | None:
        """The first key variable that is set, read in the SDK's order."""
        return _first_set(self.key_env)

    def base_url_from_env(self) -> str | None:
        """The first endpoint variable that is set, read in the SDK's order."""
        return _first_set(self.base_url_env)

    # -- code, loaded on use ------------------------------------------------------------------

    def load_factory(self) -> ModelFactory:
        """The factory, importing its module now; a missing SDK names the extra to install."""
        if callable(self.factory):
            return self.factory
        if self.sdk_module and importlib.util.find_spec(self.sdk_module.split(".")[0]) is None:
            raise ConfigurationError(
                f"Provider {self.name!r} needs the {self.sdk_module!r} package: "
                f"pip install 'alloy[{self.extra}]'"
            )
        factory: ModelFactory = _resolve(self.factory)
        return factory

    def load_dialect(self) -> Dialect | None:
        """The schema dialect, importing its module now (None: the schema is sent as it is)."""
        if self.dialect is None or callable(self.dialect):
            return self.dialect
        dialect: Dialect = _resolve(self.dialect)
        return dialect

    def load_batch_api(self) -> BatchAPIFactory | None:
        """The batch API's factory, importing its module now (None: no batch API)."""
        if self.batch_api is None or callable(self.batch_api):
            return self.batch_api
        factory: BatchAPIFactory = _resolve(self.batch_api)
        return factory

    @property
    def wire(self) -> str | None:
        """Deprecated: :attr:`api_family`."""
        _renamed("wire", "api_family")
        return self.api_family

    @property
    def batch_wire(self) -> BatchAPIFactory | str | None:
        """Deprecated: :attr:`batch_api`."""
        _renamed("batch_wire", "batch_api")
        return self.batch_api

    @property
    def dialect_name(self) -> str | None:
        """A short name for the dialect (its function's name), without importing it."""
        if self.dialect is None:
            return None
        if isinstance(self.dialect, str):
            return self.dialect.rpartition(":")[2]
        return getattr(self.dialect, "__name__", type(self.dialect).__name__)

    # -- prices -------------------------------------------------------------------------------

    def price_entry(self, model_id: str) -> tuple[str, Price] | None:
        """The longest price prefix of ``model_id`` and its price, if any."""
        best: tuple[str, Price] | None = None
        for prefix, price in self.prices.items():
            if model_id.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, price)
        return best


_INIT = Provider.__init__


@functools.wraps(_INIT)
def _init(self: Provider, *args: Any, **kwargs: Any) -> None:
    """The dataclass's ``__init__``, taking ``wire=`` and ``batch_wire=`` too, with a warning."""
    for old, new in (("wire", "api_family"), ("batch_wire", "batch_api")):
        if old in kwargs:
            _renamed(old, new)
            value = kwargs.pop(old)
            kwargs[new] = value if kwargs.get(new) is None else kwargs[new]
    _INIT(self, *args, **kwargs)


Provider.__init__ = _init  # type: ignore[method-assign]


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"Provider.{old} is now Provider.{new}", DeprecationWarning, stacklevel=3)


def _first_set(variables: tuple[str, ...]) -> str | None:
    for variable in variables:
        value = os.environ.get(variable)
        if value:
            return value
    return None


def _resolve(target: str) -> Any:
    """``"package.module:attribute"`` -> the attribute, importing the module."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
