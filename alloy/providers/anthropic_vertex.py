"""Claude on Google Cloud Vertex AI (provider ``anthropic-vertex``): the Anthropic adapter over
``anthropic.AnthropicVertex``, which sends the Messages body to ``...:rawPredict``
(``:streamRawPredict``) with the model in the path. Model ids are Vertex's
(``claude-sonnet-4-5@20250929``).

The credential is an access token (``api_key=`` or ``ANTHROPIC_VERTEX_ACCESS_TOKEN``, which
cannot be refreshed), else credentials given or Application Default Credentials
(:class:`~._google_auth.OnGoogleCredentials`, google-auth from ``alloy[anthropic-vertex]``).
Regions, projects and variables: docs/providers.md, "Claude on Microsoft Foundry, Vertex AI and
Amazon Bedrock".
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from pydantic import SecretStr

from ..errors import AlloyError, ConfigurationError
from ._google_auth import OnGoogleCredentials, credentials_error
from ._profiles_cloud import CLAUDE_ON_CLOUDS
from .anthropic import AnthropicModel

__all__ = ["AnthropicVertexModel", "create"]

KEY_ENV = "ANTHROPIC_VERTEX_ACCESS_TOKEN"
BASE_URL_ENV = "ANTHROPIC_VERTEX_BASE_URL"
REGION_ENV = "CLOUD_ML_REGION"
PROJECT_ENV = "ANTHROPIC_VERTEX_PROJECT_ID"
EXTRA = "anthropic-vertex"


class AnthropicVertexModel(OnGoogleCredentials, AnthropicModel):
    """A Claude model on Vertex AI (``anthropic-vertex:MODEL@DATE``)."""

    provider = "anthropic-vertex"
    key_env: ClassVar[tuple[str, ...]] = (KEY_ENV,)
    declared_profiles = CLAUDE_ON_CLOUDS
    extra = EXTRA

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | SecretStr | None = None,
        base_url: str | None = None,
        region: str | None = None,
        project_id: str | None = None,
        credentials: Any = None,
    ) -> None:
        if not model_id:
            raise ConfigurationError(
                "Name the Claude model, e.g. 'anthropic-vertex:claude-sonnet-4-5@20250929'"
            )
        if isinstance(api_key, SecretStr):
            api_key = api_key.get_secret_value()
        super().__init__(
            model_id, api_key=api_key, base_url=base_url or None, credentials=credentials
        )
        self.region = region
        self.project_id = project_id

    def make_client(self, *, asynchronous: bool) -> Any:
        import anthropic

        region = self.region or os.environ.get(REGION_ENV) or None
        if region is None:
            raise ConfigurationError(
                f"{self.name} needs a region: set {REGION_ENV} (e.g. us-east5, or global) "
                "or pass region=..."
            )
        project = self.project_id or os.environ.get(PROJECT_ENV) or None
        options: dict[str, Any] = {"region": region, "max_retries": 0}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.api_key:
            options["access_token"] = self.api_key
        else:
            credentials, found = self.google_credentials()
            options["credentials"] = credentials
            project = project or found
        if project is None:
            raise ConfigurationError(
                f"{self.name} needs a Google Cloud project: set {PROJECT_ENV} or pass "
                "project_id=..."
            )
        options["project_id"] = project
        cls = anthropic.AsyncAnthropicVertex if asynchronous else anthropic.AnthropicVertex
        return cls(**options)

    def refresh_credential(self) -> bool:
        """Google credentials are refreshed; a bare access token cannot be."""
        if self.api_key:
            return False
        return super().refresh_credential()

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        credentials = getattr(client, "credentials", None)
        return (getattr(client, "access_token", None), getattr(credentials, "token", None))

    def map_error(self, exc: Exception) -> AlloyError | None:
        return credentials_error(self, exc) or super().map_error(exc)


#: Registry factory for ``anthropic-vertex:MODEL`` (e.g. ``claude-sonnet-4-5@20250929``).
create = AnthropicVertexModel
