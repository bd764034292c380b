"""Azure OpenAI (providers ``azure`` and ``azure-chat``): presets over the two OpenAI adapters.

``azure:DEPLOYMENT`` speaks the Responses API and ``azure-chat:DEPLOYMENT`` Chat Completions,
as ``openai:`` and ``openai-chat:`` do; the model id is the deployment's name. Only the client
differs, so each model here is the OpenAI adapter with its own ``make_client``:

* **v1**: an endpoint whose path ends in ``/v1`` (``https://RESOURCE.openai.azure.com/openai/v1/``)
  is used with the plain ``OpenAI(base_url=...)`` client, the key as a Bearer token.
* **classic**: any other endpoint (``https://RESOURCE.openai.azure.com``) goes through
  ``AzureOpenAI(azure_endpoint=..., api_version=...)``, which sends the key in the ``api-key``
  header and the API version as ``?api-version=``, from ``api_version=`` or
  ``OPENAI_API_VERSION``.

The endpoint is ``base_url=`` or ``AZURE_OPENAI_ENDPOINT``, the key ``api_key=`` or
``AZURE_OPENAI_API_KEY``, or a callable returning a Microsoft Entra ID token (called for every
request, asked again once after a 401, each token redacted); nothing falls back to ``OPENAI_*``.
A deployment's name says nothing of its model, so the ``model=`` hint names it, and a classic
API version before ``2024-08-01-preview`` declares no structured outputs. What users see:
docs/providers.md, "Azure OpenAI".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import SecretStr

from ..errors import ConfigurationError
from ._base import Redactor
from ._openai_common import capabilities_for
from ._refresh import RefreshesOn401
from .openai_chat import OpenAIChatModel
from .openai_responses import OpenAIResponsesModel

__all__ = [
    "AzureChatModel",
    "AzureEndpoint",
    "AzureResponsesModel",
    "STRUCTURED_OUTPUTS_VERSION",
    "TokenProvider",
    "create",
    "create_chat",
    "has_structured_outputs",
]

#: A Microsoft Entra ID token provider: called for each request, returns a bearer token.
TokenProvider = Callable[[], str]

KEY_ENV = "AZURE_OPENAI_API_KEY"
ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
VERSION_ENV = "OPENAI_API_VERSION"
#: The first API version taking ``response_format`` ``json_schema`` and strict tools.
STRUCTURED_OUTPUTS_VERSION = "2024-08-01-preview"


def has_structured_outputs(api_version: str) -> bool:
    """Whether a classic API version takes structured outputs. Versions compare by date, a
    ``-preview`` before the release of its date."""

    def order(version: str) -> tuple[str, bool]:
        return version[:10], "-preview" not in version

    return order(api_version) >= order(STRUCTURED_OUTPUTS_VERSION)


def is_v1(endpoint: str) -> bool:
    """Whether ``endpoint`` is a v1 base URL (``.../openai/v1/``) rather than a resource."""
    return urlsplit(endpoint).path.rstrip("/").endswith("/v1")


class AzureEndpoint:
    """What both Azure models add to their OpenAI adapter: the endpoint, the credential and the
    API version, checked when the first client is built, and the clients built from them.

    A key is kept as a ``SecretStr``; a token provider is kept as given and wrapped, so every
    token it returns is added to the model's redactor before the SDK sends it.
    """

    def __init__(
        self,
        base_url: str | None,
        api_key: str | TokenProvider | None,
        api_version: str | None,
        redact: Redactor,
    ) -> None:
        self.base_url = base_url
        self.token_provider = api_key if callable(api_key) else None
        self.key = SecretStr(api_key) if isinstance(api_key, str) and api_key else None
        self.api_version = api_version
        self.redact = redact
        redact.add(self.key.get_secret_value() if self.key else None)

    def checked(self) -> tuple[str, str | None]:
        """The endpoint and API version (None for v1), once the endpoint, a credential and,
        for classic, a version are known. Checked when the first client is built, so a model
        can be named (``alloy providers``) before its variables are set."""
        if not self.base_url:
            raise ConfigurationError(
                f"Azure OpenAI needs its endpoint: set {ENDPOINT_ENV} (https://RESOURCE.openai."
                "azure.com, or .../openai/v1/ for the v1 API) or pass base_url=..."
            )
        if self.key is None and self.token_provider is None:
            raise ConfigurationError(
                f"Azure OpenAI needs a key: set {KEY_ENV} or pass api_key=... (a key, or a "
                "callable returning a Microsoft Entra ID token)"
            )
        if is_v1(self.base_url):
            return self.base_url, None
        version = self.api_version or os.environ.get(VERSION_ENV) or None
        if version is None:
            raise ConfigurationError(
                f"Azure OpenAI's classic API needs an API version: set {VERSION_ENV} "
                "(e.g. 2024-10-21) or pass api_version=...; or use the v1 API with an "
                "endpoint ending in /openai/v1/"
            )
        return self.base_url, version

    def token(self) -> str:
        """A fresh token from the provider, learnt by the redactor before it is sent."""
        assert self.token_provider is not None
        token = self.token_provider()
        self.redact.add(token)
        return token

    async def atoken(self) -> str:
        """The same, for ``AsyncOpenAI``, which awaits a callable key."""
        return self.token()

    def client(self, *, asynchronous: bool) -> Any:
        """``OpenAI(base_url=...)`` for v1, ``AzureOpenAI(azure_endpoint=...)`` for classic;
        SDK retries off (the engine retries)."""
        import openai

        base_url, version = self.checked()
        kwargs: dict[str, Any] = {"max_retries": 0}
        key = self.key.get_secret_value() if self.key else None
        if version is None:
            kwargs["base_url"] = base_url
            if self.token_provider is None:
                kwargs["api_key"] = key
            else:
                kwargs["api_key"] = self.atoken if asynchronous else self.token
            return (openai.AsyncOpenAI if asynchronous else openai.OpenAI)(**kwargs)
        kwargs.update(azure_endpoint=base_url, api_version=version)
        if self.token_provider is None:
            kwargs["api_key"] = key
        else:
            kwargs["azure_ad_token_provider"] = self.token
        return (openai.AsyncAzureOpenAI if asynchronous else openai.AzureOpenAI)(**kwargs)


class _OnAzure(RefreshesOn401):
    """What both Azure models share: the deployment's endpoint and credential (read from
    ``AZURE_OPENAI_*`` when not given), the client made from them, and a token provider asked
    again once after a 401."""

    key_env: ClassVar[tuple[str, ...]] = (KEY_ENV,)
    provider: ClassVar[str]
    redact: Any
    capabilities: Any

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | TokenProvider | None = None,
        base_url: str | None = None,
        api_version: str | None = None,
        model: str | None = None,
        azure_ad_token_provider: TokenProvider | None = None,
    ) -> None:
        if not model_id:
            raise ConfigurationError(f"Name the Azure deployment, e.g. '{self.provider}:my-gpt-4o'")
        base_url = base_url or os.environ.get(ENDPOINT_ENV) or None
        super().__init__(model_id, base_url=base_url)  # type: ignore[call-arg]
        api_key = azure_ad_token_provider or api_key or os.environ.get(KEY_ENV) or None
        self.azure = AzureEndpoint(base_url, api_key, api_version, self.redact)
        profile = capabilities_for(model) if model else self.capabilities
        version = api_version or os.environ.get(VERSION_ENV)
        if base_url and not is_v1(base_url) and version and not has_structured_outputs(version):
            profile = replace(profile, json_schema="no", strict_tools=False)
        self.capabilities = profile

    def make_client(self, *, asynchronous: bool) -> Any:
        return self.azure.client(asynchronous=asynchronous)

    def refresh_credential(self) -> bool:
        """The SDK asks a token provider for each request, so the resent request carries a
        fresh token; a key cannot be refreshed."""
        return self.azure.token_provider is not None


class AzureResponsesModel(_OnAzure, OpenAIResponsesModel):
    """An Azure OpenAI deployment behind the Responses API (``azure:DEPLOYMENT``)."""

    provider = "azure"


class AzureChatModel(_OnAzure, OpenAIChatModel):
    """An Azure OpenAI deployment behind Chat Completions (``azure-chat:DEPLOYMENT``)."""

    provider = "azure-chat"


#: Registry factory for ``azure:DEPLOYMENT`` (the Responses API).
create = AzureResponsesModel
#: Registry factory for ``azure-chat:DEPLOYMENT`` (Chat Completions).
create_chat = AzureChatModel
