"""Claude on Microsoft Foundry (provider ``anthropic-foundry``): the Anthropic adapter over
``anthropic.AnthropicFoundry``, at ``https://RESOURCE.services.ai.azure.com/anthropic/``.

The credential is a key (sent as ``x-api-key`` and ``api-key``) or a Microsoft Entra ID token
provider, called for every request (each token redacted) and asked again once after a 401.
Nothing falls back to ``ANTHROPIC_*``. Variables: docs/providers.md, "Claude on Microsoft
Foundry, Vertex AI and Amazon Bedrock".
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import SecretStr

from ..errors import ConfigurationError
from ._profiles_cloud import CLAUDE_ON_CLOUDS
from ._refresh import RefreshesOn401
from .anthropic import AnthropicModel

__all__ = ["AnthropicFoundryModel", "create"]

KEY_ENV = "ANTHROPIC_FOUNDRY_API_KEY"
BASE_URL_ENV = "ANTHROPIC_FOUNDRY_BASE_URL"
RESOURCE_ENV = "ANTHROPIC_FOUNDRY_RESOURCE"

#: A Microsoft Entra ID token provider: called for each request, returns a bearer token.
TokenProvider = Callable[[], str]
#: Headers whose values the SDK's DEBUG log of a request's options must not show.
_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


class _MaskCredentialHeaders(logging.Filter):
    """AnthropicFoundry adds its credential to each request's options (``x-api-key`` and
    ``api-key``, or ``Authorization: Bearer``), and anthropic logs those options at DEBUG:
    their values are masked in that record."""

    def filter(self, record: logging.LogRecord) -> bool:
        options = record.args
        headers = options.get("headers") if isinstance(options, dict) else None
        if isinstance(options, dict) and isinstance(headers, dict):
            masked = {
                name: "***" if str(name).lower() in _CREDENTIAL_HEADERS else value
                for name, value in headers.items()
            }
            record.args = {**options, "headers": masked}
        return True


_MASK = _MaskCredentialHeaders()


class AnthropicFoundryModel(RefreshesOn401, AnthropicModel):
    """A Claude model deployed on a Microsoft Foundry resource (``anthropic-foundry:MODEL``)."""

    provider = "anthropic-foundry"
    key_env: ClassVar[tuple[str, ...]] = (KEY_ENV,)
    declared_profiles = CLAUDE_ON_CLOUDS

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | TokenProvider | SecretStr | None = None,
        base_url: str | None = None,
        resource: str | None = None,
        azure_ad_token_provider: TokenProvider | None = None,
    ) -> None:
        if not model_id:
            raise ConfigurationError(
                "Name the Claude model, e.g. 'anthropic-foundry:claude-sonnet-4-5'"
            )
        if isinstance(api_key, SecretStr):
            api_key = api_key.get_secret_value()
        provider = azure_ad_token_provider or (api_key if callable(api_key) else None)
        key = api_key if isinstance(api_key, str) and api_key else None
        super().__init__(model_id, api_key=key, base_url=base_url or None)
        self.token_provider = provider
        self.resource = resource

    def make_client(self, *, asynchronous: bool) -> Any:
        import anthropic

        options: dict[str, Any] = {"max_retries": 0}
        resource = self.resource or os.environ.get(RESOURCE_ENV) or None
        if self.base_url:
            options["base_url"] = self.base_url
        elif resource:
            options["resource"] = resource
        else:
            raise ConfigurationError(
                f"{self.name} needs its endpoint: set {BASE_URL_ENV} "
                f"(https://RESOURCE.services.ai.azure.com/anthropic/) or {RESOURCE_ENV}, "
                "or pass base_url=..."
            )
        key = self.api_key or os.environ.get(KEY_ENV) or None
        if self.token_provider is not None:
            options["azure_ad_token_provider"] = self._token
        elif key:
            options["api_key"] = key
        else:
            raise ConfigurationError(
                f"{self.name} needs a key: set {KEY_ENV} or pass api_key=... (a key, or a "
                "callable returning a Microsoft Entra ID token)"
            )
        logging.getLogger("anthropic._base_client").addFilter(_MASK)
        cls = anthropic.AsyncAnthropicFoundry if asynchronous else anthropic.AnthropicFoundry
        return cls(**options)

    def _token(self) -> str:
        """A token from the provider, learnt by the redactor before the SDK sends it."""
        assert self.token_provider is not None
        token = self.token_provider()
        self.redact.add(token)
        return token

    def refresh_credential(self) -> bool:
        """A token provider is asked again for the resent request; a key cannot be refreshed."""
        return self.token_provider is not None

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        return (getattr(client, "api_key", None),)


#: Registry factory for ``anthropic-foundry:MODEL`` (e.g. ``claude-sonnet-4-5``).
create = AnthropicFoundryModel
