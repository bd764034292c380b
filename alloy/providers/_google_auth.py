"""Google credentials for the Vertex AI providers (``vertex``, ``anthropic-vertex``).

Application Default Credentials are loaded once per model and handed to every client it makes,
so that one refresh after a 401 serves them all. google-auth comes with google-genai; for
Anthropic's Vertex client it is the ``anthropic-vertex`` extra.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any, ClassVar

from ..errors import AuthenticationError, ConfigurationError
from ._base import Redactor
from ._refresh import RefreshesOn401

__all__ = ["OnGoogleCredentials", "application_default", "is_auth_error", "refresh"]

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)


def application_default(model_name: str, extra: str) -> tuple[Any, str | None]:
    """Application Default Credentials and the project they name; a ConfigurationError (naming
    the extra, or how to log in) when there are none."""
    if importlib.util.find_spec("google.auth") is None:
        raise ConfigurationError(
            f"{model_name} without a key or access token needs google-auth for Application "
            f"Default Credentials: pip install 'alloy[{extra}]'"
        )
    import google.auth
    import google.auth.exceptions

    try:
        credentials, project = google.auth.default(scopes=list(SCOPES))
    except google.auth.exceptions.DefaultCredentialsError:
        raise ConfigurationError(
            f"{model_name} found no Google credentials: run 'gcloud auth application-default "
            "login' or set GOOGLE_APPLICATION_CREDENTIALS, or pass credentials=... or a key"
        ) from None
    return credentials, project


def refresh(credentials: Any) -> str | None:
    """Refresh ``credentials`` now (after a 401: the token held may have been revoked); the new
    token, for redaction."""
    from google.auth.transport.requests import Request

    credentials.refresh(Request())
    token = getattr(credentials, "token", None)
    return token if isinstance(token, str) else None


def is_auth_error(exc: BaseException) -> bool:
    """Whether ``exc`` is google-auth's (a failed refresh, missing credentials)."""
    if importlib.util.find_spec("google.auth") is None:
        return False
    import google.auth.exceptions

    return isinstance(exc, google.auth.exceptions.GoogleAuthError)


def credentials_error(model: Any, exc: BaseException) -> AuthenticationError | None:
    """What ``exc`` means for a model on Google credentials (``model.credentials``): the token
    the SDK fetched while sending is redacted from here on, and google-auth's own failure (a
    refresh refused, no credentials) is an AuthenticationError; None leaves ``exc`` to the SDK's
    mapping."""
    model.redact.add(getattr(model.credentials, "token", None))
    if not is_auth_error(exc):
        return None
    return AuthenticationError(
        f"{model.name}: Google credentials could not be refreshed "
        f"({type(exc).__name__}): {model.redact(str(exc))}",
        provider=model.provider,
    )


class OnGoogleCredentials(RefreshesOn401):
    """Mixed in before a Vertex AI model: its credentials (given, or Application Default
    Credentials loaded once and shared by its clients, so one refresh serves them all),
    refreshed once after a 401. Its ``map_error`` is to try :func:`credentials_error` first."""

    #: The extra that brings google-auth, named when it is missing.
    extra: ClassVar[str]
    name: str
    redact: Redactor

    def __init__(self, *args: Any, credentials: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.credentials = credentials
        self._credentials_lock = threading.Lock()
        self._default_project: str | None = None

    def google_credentials(self) -> tuple[Any, str | None]:
        """The credentials, and the project they name."""
        with self._credentials_lock:
            if self.credentials is None:
                self.credentials, self._default_project = application_default(self.name, self.extra)
            project = self._default_project or getattr(self.credentials, "project_id", None)
            return self.credentials, project

    def refresh_credential(self) -> bool:
        """Google credentials are refreshed; a key or a bare access token cannot be."""
        if self.credentials is None:
            return False
        self.redact.add(refresh(self.credentials))
        return True
