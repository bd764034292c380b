"""Gemini on Google Cloud Vertex AI (provider ``vertex``): the Gemini adapter over
``google.genai.Client(vertexai=True)``, which sends the Gemini API's request to Vertex AI's
``projects/{project}/locations/{location}/publishers/google/models/{model}`` paths.

Two ways in, as google-genai decides them: a project (``project=`` or ``GOOGLE_CLOUD_PROJECT``,
the location ``global`` unless set) with credentials, given or Application Default Credentials
(:class:`~._google_auth.OnGoogleCredentials`); or express mode, an API key and no project. An
``api_key=`` given to the model wins over a project from the environment; a key from the
environment gives way to a project (google-genai's own order). Vertex AI's batch prediction is
not the Gemini API's, so ``vertex`` has no batch wire. Variables and paths: docs/providers.md,
"Gemini on Vertex AI".
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import SecretStr

from ..errors import ConfigurationError, ProviderError
from ._google_auth import OnGoogleCredentials, credentials_error
from .gemini import GeminiModel, http_options

__all__ = ["VertexModel", "create"]

KEY_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
BASE_URL_ENV = "GOOGLE_VERTEX_BASE_URL"
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
LOCATION_ENV = "GOOGLE_CLOUD_LOCATION"
EXTRA = "gemini"


class VertexModel(OnGoogleCredentials, GeminiModel):
    """A Gemini model on Vertex AI (``vertex:MODEL``)."""

    provider = "vertex"
    key_env = KEY_ENV
    extra = EXTRA

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | SecretStr | None = None,
        base_url: str | None = None,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
    ) -> None:
        if isinstance(api_key, SecretStr):
            api_key = api_key.get_secret_value()
        model_id = model_id or "gemini-2.5-flash"
        super().__init__(
            model_id, api_key=api_key, base_url=base_url or None, credentials=credentials
        )
        # A key read from the environment gives way to a project, as google-genai decides.
        self.key_from_env = bool(api_key) and api_key in {os.environ.get(v) for v in KEY_ENV}
        self.project = project
        self.location = location

    def make_client(self, *, asynchronous: bool) -> Any:
        from google import genai

        project = self.project or os.environ.get(PROJECT_ENV) or None
        options: dict[str, Any] = {"vertexai": True}
        key = self.api_key
        if key and not (self.key_from_env and (project or self.credentials is not None)):
            options["api_key"] = key
        else:
            credentials, found = self.google_credentials()
            project = project or found
            if project is None:
                raise ConfigurationError(
                    f"{self.name} needs a Google Cloud project: set {PROJECT_ENV} or pass "
                    f"project=...; or an express-mode key ({KEY_ENV[0]} or api_key=...)"
                )
            location = self.location or os.environ.get(LOCATION_ENV) or "global"
            options.update(project=project, location=location, credentials=credentials)
        options["http_options"] = http_options(self.base_url)
        return genai.Client(**options)

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        return (*super().client_keys(client), getattr(self.credentials, "token", None))

    def map_error(self, exc: Exception) -> ProviderError | None:
        return credentials_error(self, exc) or super().map_error(exc)


#: Registry factory for ``vertex:MODEL`` (e.g. ``gemini-2.5-flash``).
create = VertexModel
