"""How a failure becomes an HTTP status and a JSON error body.

Every route answers a failure with a non-2xx status and one body shape, the one OpenAI's API
uses (so its SDKs raise the right exception)::

    {"error": {"type": "rail_blocked", "code": "rail_blocked", "message": "...", "param": null,
               "rail": "no_canary", "reason": "..."}}

===========================  ======  ============================================================
error                        status  type
===========================  ======  ============================================================
invalid body (typed routes)  422     FastAPI's ``{"detail": [...]}`` with each field's error
invalid body (/v1 routes)    400     ``invalid_request_error``; unsupported fields included
no or wrong bearer key       401     ``unauthorized``
a Host the server refuses    421     ``invalid_host`` (see :mod:`alloy.serve._guard`)
a POST that is not JSON      415     ``unsupported_media_type``
a body over the limit        413     ``request_too_large``
RailBlocked                  403     ``rail_blocked`` (with ``rail`` and ``reason``)
unknown command or model     404     ``not_found``
ConfigurationError           400     ``invalid_request_error`` (a value the call cannot use)
RateLimitError               429     ``rate_limited`` (``Retry-After`` when the provider said)
ProviderTimeoutError         504     ``provider_timeout``
other ProviderError          502     ``provider_error``
OutputError, CriterionFailed 502     ``output_error``: the model answered unusably
BudgetExceeded               502     ``budget_exceeded``
other CommandError           500     ``command_failed`` (tool errors, tool loop limits)
cut off by a shutdown        503     ``server_shutting_down`` (see :mod:`alloy.serve._shutdown`)
anything else                500     ``internal_error``, with no detail
===========================  ======  ============================================================

Messages never carry model output: an output that failed to parse has not been through the
output rails, so ``OutputError`` bodies say what went wrong without quoting it. Provider
messages are alloy's own, with keys already redacted.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import (
    BudgetExceeded,
    CommandError,
    ConfigurationError,
    CriterionFailed,
    OutputError,
    ProviderError,
    ProviderTimeoutError,
    RailBlocked,
    RateLimitError,
)

log = logging.getLogger("alloy.serve")


class ErrorDetail(BaseModel):
    """What went wrong; ``rail`` and ``reason`` are set for a RailBlocked."""

    model_config = ConfigDict(extra="allow")

    type: str
    code: str | None = None
    message: str
    param: str | None = None
    rail: str | None = None
    reason: str | None = None


class ErrorBody(BaseModel):
    """The body of every error answer but FastAPI's own 422."""

    error: ErrorDetail


class ServeError(Exception):
    """A failure the server itself reports with ``status`` (a bad /v1 request, a 404)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code or type


def invalid(message: str, param: str | None = None) -> ServeError:
    """A 400 for a request body the /v1 routes cannot take."""
    return ServeError(400, message, type="invalid_request_error", param=param)


def shutting_down() -> ServeError:
    """A 503 for a request the server cut off at its graceful timeout while stopping."""
    return ServeError(
        503,
        "The server is shutting down and cut this request off at its graceful timeout; "
        "send it again",
        type="server_shutting_down",
    )


def unsupported(param: str, why: str = "") -> ServeError:
    """A 400 for a field the server does not support: refused, never silently dropped."""
    detail = f": {why}" if why else ""
    return ServeError(
        400,
        f"Unsupported parameter: {param!r} is not supported by this server{detail}",
        type="invalid_request_error",
        param=param,
        code="unsupported_parameter",
    )


def describe(error: BaseException) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The status, the JSON body and extra headers for ``error``."""
    headers: dict[str, str] = {}
    detail: dict[str, Any]
    if isinstance(error, ServeError):
        status = error.status
        detail = {"type": error.type, "code": error.code, "message": error.message}
        detail["param"] = error.param
    elif isinstance(error, RailBlocked):
        status = 403
        detail = {
            "type": "rail_blocked",
            "code": "rail_blocked",
            "message": error.message,
            "rail": error.rail,
            "reason": error.reason,
        }
    elif isinstance(error, ConfigurationError):
        status = 400
        detail = {"type": "invalid_request_error", "code": "invalid_value", "message": str(error)}
    elif isinstance(error, RateLimitError):
        status = 429
        detail = _command_detail(error, "rate_limited", error.message)
        if error.retry_after is not None:
            headers["retry-after"] = str(max(1, round(error.retry_after)))
    elif isinstance(error, ProviderTimeoutError):
        status = 504
        detail = _command_detail(error, "provider_timeout", error.message)
    elif isinstance(error, ProviderError):
        status = 502
        detail = _command_detail(error, "provider_error", error.message)
    elif isinstance(error, (OutputError, CriterionFailed)):
        status = 502
        message = f"The model's answer was unusable ({type(error).__name__})"
        if error.expected:
            message += f"; expected {error.expected}"
        detail = _command_detail(error, "output_error", message)
    elif isinstance(error, BudgetExceeded):
        status = 502
        detail = _command_detail(error, "budget_exceeded", "The call's token budget ran out")
    elif isinstance(error, CommandError):
        status = 500
        detail = _command_detail(
            error, "command_failed", f"The call failed ({type(error).__name__})"
        )
    else:
        status = 500
        detail = {
            "type": "internal_error",
            "code": "internal_error",
            "message": "The server failed while handling the request",
        }
    detail.setdefault("param", None)
    return status, {"error": detail}, headers


def _command_detail(error: CommandError, kind: str, message: str) -> dict[str, Any]:
    return {"type": kind, "code": kind, "message": message, "error": type(error).__name__}


#: Documented error answers of the command routes, for the OpenAPI document.
COMMAND_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "An argument the call cannot use"},
    401: {"model": ErrorBody, "description": "No valid bearer key (when keys are configured)"},
    403: {"model": ErrorBody, "description": "A rail blocked the call (RailBlocked)"},
    429: {"model": ErrorBody, "description": "The provider's rate limit (Retry-After)"},
    500: {"model": ErrorBody, "description": "The call failed (tool error, tool loop limit)"},
    502: {"model": ErrorBody, "description": "The provider failed, or its answer was unusable"},
    504: {"model": ErrorBody, "description": "The provider timed out"},
}
