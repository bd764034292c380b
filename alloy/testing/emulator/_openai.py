"""What OpenAI's two wire APIs share: Bearer auth, the error envelope and the strict checks.

The envelope is ``{"error": {"message", "type", "param", "code"}}`` with an ``x-request-id``
header (providers.md 5.1); the SDK maps the status to ``BadRequestError``,
``AuthenticationError``, ``RateLimitError``, ``InternalServerError`` and so on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._api import BadRequest, Reason, SchemaProblem, WireAPI, count_tokens, request_id
from ._call import Call, ToolDef
from ._http import Incoming, Send, json_send, sse_frame
from ._prompt_cache import prefixes
from ._schema_rules import openai_strict_problem

_MESSAGES: dict[str, str] = {
    "missing_key": (
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
        "(with blank username) if you're accessing the API from your browser and are prompted for "
        "a username and password. You can obtain an API key from "
        "https://platform.openai.com/account/api-keys."
    ),
    "auth": (
        "Incorrect API key provided: sk-****. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    ),
    "rate_limit": (
        "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
        "Please try again in 20ms."
    ),
    "overloaded": "The engine is currently overloaded, please try again later",
    "server": "The server had an error while processing your request. Sorry about that!",
    "schema": "Invalid schema for response_format 'response': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    "not_found": "The model does not exist or you do not have access to it.",
    "bad_request": "Invalid request.",
    "other": "The request failed.",
}

_TYPES_CODES: dict[str, tuple[str, str | None]] = {
    "missing_key": ("invalid_request_error", None),
    "auth": ("invalid_request_error", "invalid_api_key"),
    "rate_limit": ("requests", "rate_limit_exceeded"),
    "overloaded": ("server_error", None),
    "server": ("server_error", None),
    "schema": ("invalid_request_error", "invalid_json_schema"),
    "not_found": ("invalid_request_error", "model_not_found"),
    "bad_request": ("invalid_request_error", None),
    "other": ("invalid_request_error", None),
}


#: The longest ``prompt_cache_key`` OpenAI takes.
MAX_PROMPT_CACHE_KEY = 64


class OpenAIBase(WireAPI):
    """Shared behaviour of ``/v1/responses`` and ``/v1/chat/completions``."""

    provider = "openai"

    def authorized(self, incoming: Incoming) -> bool:
        """A Bearer key, or on an Azure path (``/openai/...``) also an ``api-key`` header,
        which ``AzureOpenAI`` sends."""
        if is_azure(incoming.path) and incoming.headers.get("api-key", "").strip():
            return True
        return super().authorized(incoming)

    @staticmethod
    def check_azure(incoming: Incoming) -> None:
        """Azure's 404 for a classic path (``/openai/deployments/...``, ``/openai/responses``)
        without ``?api-version=``; the v1 API (``/openai/v1/...``) takes none."""
        classic = is_azure(incoming.path) and not incoming.path.startswith("/openai/v1/")
        if classic and not incoming.query_value("api-version"):
            raise BadRequest("Resource not found", status=404)

    def cached_tokens(self, call: Call, head: Mapping[str, Any], pieces: list[Any]) -> int:
        """Prompt tokens read from the cache: the longest prefix of ``pieces`` (instructions,
        input items, messages) an earlier request under the same ``prompt_cache_key``, model
        and ``head`` (tools, output format) had. Without a key the emulator caches nothing."""
        key = call.body.get("prompt_cache_key")
        if not isinstance(key, str):
            return 0
        seed = {"model": call.model, "prompt_cache_key": key, **head}
        counted = [(piece, count_tokens(piece), True) for piece in pieces]
        return self.prompt_cache.use(prefixes(seed, counted)).read

    def error(
        self,
        status: int,
        reason: Reason,
        message: str | None = None,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        retry_after: float | None = None,
    ) -> Send:
        """The OpenAI envelope; 5xx errors are always ``server_error``."""
        kind, default_code = _TYPES_CODES[reason]
        if status >= 500 and reason not in ("server", "overloaded"):
            kind = "server_error"
        body = {
            "error": {
                "message": message or _MESSAGES[reason],
                "type": kind,
                "param": param,
                "code": code if code is not None else default_code,
            }
        }
        return json_send(status, body, (("x-request-id", request_id()), *headers))

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        # The Chat flavour (``data: {"error": …}``); Responses overrides with an ``error`` event.
        """The Chat Completions flavour, ``data: {"error": …}`` (the SDK raises APIError)."""
        body = {
            "error": {
                "message": message or _MESSAGES["server"],
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        return sse_frame(body)

    @staticmethod
    def strict_problem(
        schema: Mapping[str, Any] | None, name: str | None, param: str, strict: bool
    ) -> SchemaProblem | None:
        """OpenAI's 400 for a ``strict`` response format that breaks the strict rules."""
        if not strict or schema is None:
            return None
        detail = openai_strict_problem(schema)
        if detail is None:
            return None
        return SchemaProblem(
            f"Invalid schema for response_format '{name or 'response'}': {detail}", param
        )

    @staticmethod
    def strict_tool_problem(tools: tuple[ToolDef, ...], param: str) -> SchemaProblem | None:
        """OpenAI's 400 for a ``strict`` function whose parameters break the strict rules."""
        for index, tool in enumerate(tools):
            if not tool.strict:
                continue
            detail = openai_strict_problem(tool.schema)
            if detail is not None:
                return SchemaProblem(
                    f"Invalid schema for function '{tool.name}': {detail}",
                    param.format(index=index),
                    "invalid_function_parameters",
                )
        return None


def is_azure(path: str) -> bool:
    """Whether ``path`` is one of Azure OpenAI's (classic or v1), which start with ``/openai/``."""
    return path.startswith("/openai/")


def check_prompt_cache_key(body: Mapping[str, Any]) -> None:
    """OpenAI's 400 for a ``prompt_cache_key`` that is not a string of at most 64 characters."""
    key = body.get("prompt_cache_key")
    if key is None:
        return
    if not isinstance(key, str):
        raise BadRequest(
            "Invalid type for 'prompt_cache_key': expected a string.", "prompt_cache_key"
        )
    if len(key) > MAX_PROMPT_CACHE_KEY:
        raise BadRequest(
            f"Invalid 'prompt_cache_key': string too long. Expected a string with maximum "
            f"length {MAX_PROMPT_CACHE_KEY}, but got a string with length {len(key)} instead.",
            "prompt_cache_key",
        )


def forced_tool(choice: Any, tools: tuple[ToolDef, ...]) -> str | None:
    """The tool a ``tool_choice`` forces: ``"required"`` means the first offered tool."""
    if choice == "required":
        return tools[0].name if tools else None
    if isinstance(choice, Mapping):
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        if choice.get("mode") == "required" and isinstance(choice.get("tools"), list):
            names = [t.get("name") for t in choice["tools"] if isinstance(t, Mapping)]
            return next((n for n in names if isinstance(n, str)), None)
    return None
