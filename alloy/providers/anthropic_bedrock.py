"""Claude on Amazon Bedrock through Anthropic's SDK (provider ``anthropic-bedrock``): the
Anthropic adapter over ``anthropic.AnthropicBedrock`` (Invoke), or over
``anthropic.AnthropicBedrockMantle`` with ``mantle=True``.

* **Invoke** sends the Messages body to ``POST {base}/model/{model id}/invoke``
  (``/invoke-with-response-stream`` for a stream, whose events come in AWS event-stream
  framing, decoded by botocore). The base is ``https://bedrock-runtime.{region}.amazonaws.com``,
  or ``base_url=`` / ``ANTHROPIC_BEDROCK_BASE_URL``. Model ids are Bedrock's, with or without a
  cross-region prefix (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``).
* **Mantle** (``mantle=True``) is Bedrock's Messages endpoint,
  ``https://bedrock-mantle.{region}.api.aws/anthropic/v1/messages`` (or
  ``ANTHROPIC_BEDROCK_MANTLE_BASE_URL``).

The credential is a Bedrock API key (Bearer), else SigV4 with the keys given or the AWS
credential chain, read again once after a 401 (not a retry). Signing and event streams need
botocore (``alloy[anthropic-bedrock]``). No key, secret or session token is ever logged or
raised. Regions and variables: docs/providers.md, "Claude on Microsoft Foundry, Vertex AI and
Amazon Bedrock".
"""

from __future__ import annotations

import importlib.util
import logging
import re
import weakref
from typing import Any, ClassVar

from pydantic import SecretStr

from ..errors import AlloyError, ConfigurationError
from ._profiles_cloud import CLAUDE_ON_CLOUDS
from ._refresh import RefreshesOn401
from .anthropic import AnthropicModel

__all__ = ["AnthropicBedrockModel", "create"]

KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
BASE_URL_ENV = "ANTHROPIC_BEDROCK_BASE_URL"
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
EXTRA = "anthropic-bedrock"
_NO_CREDENTIALS = "Could not resolve AWS credentials"


class _BotocoreSecrets(logging.Filter):
    """What botocore logs at DEBUG that may show a credential: the canonical request it signs
    holds the session token (``x-amz-security-token``), masked; and each event-stream message's
    whole body, which may repeat what the request presented, left out."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.args, tuple) or not record.args:
            return True
        message, first = str(record.msg), record.args[0]
        if message.startswith("CanonicalRequest") and isinstance(first, str):
            record.args = (_SESSION_TOKEN.sub(r"\1***", first), *record.args[1:])
        elif message.startswith("Response body"):
            size = len(first) if isinstance(first, (bytes, str)) else 0
            record.args = (f"<{size} bytes, not logged>",)
        return True


_SESSION_TOKEN = re.compile(r"(x-amz-security-token:)[^\n]*", re.IGNORECASE)
_SECRETS = _BotocoreSecrets()


class AnthropicBedrockModel(RefreshesOn401, AnthropicModel):
    """A Claude model on Amazon Bedrock (``anthropic-bedrock:MODEL_ID``)."""

    provider = "anthropic-bedrock"
    key_env: ClassVar[tuple[str, ...]] = (KEY_ENV, "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    declared_profiles = CLAUDE_ON_CLOUDS

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | SecretStr | None = None,
        base_url: str | None = None,
        aws_access_key: str | None = None,
        aws_secret_key: str | None = None,
        aws_session_token: str | None = None,
        aws_region: str | None = None,
        aws_profile: str | None = None,
        mantle: bool = False,
    ) -> None:
        if not model_id:
            raise ConfigurationError(
                "Name the Bedrock model id, e.g. "
                "'anthropic-bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0'"
            )
        if isinstance(api_key, SecretStr):
            api_key = api_key.get_secret_value()
        super().__init__(model_id, api_key=api_key, base_url=base_url or None)
        self.aws = {
            "aws_access_key": aws_access_key,
            "aws_secret_key": SecretStr(aws_secret_key) if aws_secret_key else None,
            "aws_session_token": SecretStr(aws_session_token) if aws_session_token else None,
            "aws_region": aws_region,
            "aws_profile": aws_profile,
        }
        self.redact.add(aws_secret_key, aws_session_token)
        self.mantle = mantle
        #: Signed with the AWS credential chain (no API key, no keys given): refreshable.
        self.signs_with_chain = not api_key and not aws_access_key and not aws_secret_key
        self.clients: weakref.WeakSet[Any] = weakref.WeakSet()

    def make_client(self, *, asynchronous: bool) -> Any:
        import anthropic

        if importlib.util.find_spec("botocore") is None:
            raise ConfigurationError(
                f"{self.name} needs botocore (SigV4 signing, event streams): "
                f"pip install 'alloy[{EXTRA}]'"
            )
        for logger_name in ("botocore.auth", "botocore.parsers"):
            logging.getLogger(logger_name).addFilter(_SECRETS)
        options: dict[str, Any] = {"max_retries": 0}
        for name, value in self.aws.items():
            if value is not None:
                options[name] = value.get_secret_value() if isinstance(value, SecretStr) else value
        if self.api_key:
            options["api_key"] = self.api_key
        if self.base_url:
            options["base_url"] = self.base_url
        cls: Any
        if self.mantle:
            cls = (
                anthropic.AsyncAnthropicBedrockMantle
                if asynchronous
                else anthropic.AnthropicBedrockMantle
            )
        else:
            cls = anthropic.AsyncAnthropicBedrock if asynchronous else anthropic.AnthropicBedrock
        try:
            client = cls(**options)
        except (ValueError, anthropic.AnthropicError) as exc:
            problem = self.redact(str(exc))
        else:
            self.clients.add(client)
            return client
        variables = " or ".join(REGION_ENV)
        raise ConfigurationError(
            f"{self.name} cannot make its Bedrock client: {problem} (the region is aws_region= "
            f"or {variables}; the credential api_key= / {KEY_ENV}, AWS keys, or a profile)"
        )

    def refresh_credential(self) -> bool:
        """Read the AWS credential chain again and have every client sign with what it gives
        now: the SDK keeps one boto3 session per set of options, whose credentials it read once.
        An API key, or keys given to ``create``, cannot be refreshed."""
        if not self.signs_with_chain:
            return False
        import boto3

        found = boto3.Session(profile_name=self.aws["aws_profile"]).get_credentials()
        if found is None:
            return False
        fresh = found.get_frozen_credentials()
        self.redact.add(fresh.access_key, fresh.secret_key, fresh.token)
        self.aws.update(
            aws_access_key=fresh.access_key,
            aws_secret_key=SecretStr(fresh.secret_key),
            aws_session_token=SecretStr(fresh.token) if fresh.token else None,
        )
        for client in list(self.clients):
            client.aws_access_key = fresh.access_key
            client.aws_secret_key = fresh.secret_key
            client.aws_session_token = fresh.token
        return True

    def client_keys(self, client: Any) -> tuple[str | None, ...]:
        return (
            getattr(client, "api_key", None),
            getattr(client, "aws_secret_key", None),
            getattr(client, "aws_session_token", None),
        )

    def map_error(self, exc: Exception) -> AlloyError | None:
        if isinstance(exc, RuntimeError) and _NO_CREDENTIALS in str(exc):
            return ConfigurationError(
                f"{self.name} found no AWS credentials: set {KEY_ENV} (a Bedrock API key), "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or pass api_key=..."
            )
        return super().map_error(exc)


#: Registry factory for ``anthropic-bedrock:MODEL_ID``
#: (e.g. ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``).
create = AnthropicBedrockModel
