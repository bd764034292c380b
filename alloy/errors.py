"""Every exception alloy raises, in one tree with one root.

::

    AlloyError
    ├── ConfigurationError          the caller's mistake; raised eagerly, never retried
    ├── CacheMissError              replay mode met a request the response cache does not hold
    └── CommandError                a call failed; carries command, expected type, output snippet,
        │                           transcript, attempts and usage
        ├── ProviderError           the provider or the network failed (mapped once, in the adapter)
        │   ├── AuthenticationError     401/403: bad or missing key
        │   ├── RateLimitError          429; ``retry_after`` in seconds when the provider said
        │   ├── ProviderTimeoutError    the request timed out
        │   ├── ProviderConnectionError the connection failed or dropped
        │   ├── BadRequestError         400-class rejection of the request
        │   │   └── SchemaRejectedError the provider refused the output or tool schema
        │   ├── ServerError             5xx / overloaded
        │   └── UnreadableResponseError the reply was not what the API documents (cut, garbled)
        ├── OutputError             the model answered, but unusably
        │   ├── ParseError              not parsable or not valid for the expected type
        │   ├── EmptyOutputError        no final output at all
        │   ├── TruncatedOutputError    cut off by the token limit (never re-asked)
        │   ├── RefusalError            the model refused
        │   └── ContentFilteredError    the provider's content filter stopped the output
        ├── ToolError               a tool failed and the command was set to raise
        ├── ToolLoopLimitExceeded   the model kept calling tools past ``max_tool_turns``
        ├── CriterionFailed         a quality criterion with ``on_fail="exception"`` failed
        ├── BudgetExceeded          a token or cost budget stopped the call
        ├── EnforcementError        the answer could only be enforced below ``require_enforcement``
        └── RailBlocked             an input, output or tool rail refused

No API key ever appears in a message, repr or attribute of these errors, nor anywhere in their
chain: an SDK exception (whose request still carries the key in its headers) is never attached
as ``__cause__`` or ``__context__``; what is useful in it (status, request id, a redacted message)
is copied instead.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._types import RateLimits, Transcript, Usage

__all__ = [
    "AlloyError",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceeded",
    "CacheMissError",
    "CommandError",
    "ConfigurationError",
    "ContentFilteredError",
    "CriterionFailed",
    "EmptyOutputError",
    "EnforcementError",
    "OutputError",
    "ParseError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RailBlocked",
    "RateLimitError",
    "RefusalError",
    "SchemaRejectedError",
    "ServerError",
    "ToolError",
    "ToolLoopLimitExceeded",
    "TruncatedOutputError",
    "UnreadableResponseError",
]

SNIPPET_CHARS = 120


def snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """A short, single-quoted excerpt of model output for error messages."""
    if text is None:
        return "<none>"
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return repr(text)


class AlloyError(Exception):
    """Root of every alloy exception."""


class ConfigurationError(AlloyError):
    """The caller configured something wrongly: a bad type, option or environment value.

    Raised as early as possible (usually at decoration time) and never retried.
    """


class CacheMissError(AlloyError):
    """Replay mode (``ALLOY_CACHE_MODE=replay``) met a request the response cache does not hold.

    Replay mode makes no provider calls at all, so a suite run offline from a committed cache
    file fails here, naming the request, instead of reaching the network. ``key`` is the
    request's cache key; run once in ``record`` mode (with the provider) to store it.
    """

    def __init__(self, message: str, *, key: str, model: str) -> None:
        super().__init__(message)
        self.key = key
        self.model = model


class CommandError(AlloyError):
    """A command call failed.

    Attributes describe the failure for debugging: which command, the expected output type,
    a snippet of what the model returned, and the whole transcript of the call.
    """

    def __init__(
        self,
        message: str,
        *,
        command: str | None = None,
        expected: str | None = None,
        output: str | None = None,
        transcript: Transcript | None = None,
        output_mode: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.command = command
        self.expected = expected
        self.output = output
        self.transcript = transcript
        #: How structured output was enforced for the call: native, tool or prompt (None for text).
        self.output_mode = output_mode

    @property
    def attempts(self) -> int:
        """Model requests made during the call, re-asks and retries included."""
        return self.transcript.attempts if self.transcript is not None else 0

    @property
    def usage(self) -> Usage | None:
        """Token usage summed over every turn of the call."""
        return self.transcript.usage if self.transcript is not None else None

    def __str__(self) -> str:
        context = []
        if self.command:
            context.append(f"command {self.command!r}")
        if self.output_mode:
            context.append(f"output mode {self.output_mode}")
        return f"{self.message} ({', '.join(context)})" if context else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.__dict__))


def _rebuild(cls: type[CommandError], message: str, state: dict[str, Any]) -> CommandError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class ProviderError(CommandError):
    """The provider or the network failed. ``status_code`` and ``provider`` say where;
    ``rate_limits`` holds the limits the error reply's headers stated, if any."""

    #: Whether alloy retries this error with backoff (ALLOY_RETRY bounds the attempts).
    transient: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        rate_limits: RateLimits | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.provider = provider
        self.status_code = status_code
        self.request_id = request_id
        self.retry_after = retry_after
        self.rate_limits = rate_limits


class AuthenticationError(ProviderError):
    """The provider rejected the credentials (the key itself is never shown)."""


class RateLimitError(ProviderError):
    """Too many requests; ``retry_after`` holds the provider's hint in seconds, if any."""

    transient = True


class ProviderTimeoutError(ProviderError):
    """The request did not finish within the timeout."""

    transient = True


class ProviderConnectionError(ProviderError):
    """The connection could not be made or was dropped."""

    transient = True


class BadRequestError(ProviderError):
    """The provider rejected the request as malformed (never retried)."""


class SchemaRejectedError(BadRequestError):
    """The provider refused the output or tool schema alloy sent."""


class ServerError(ProviderError):
    """The provider failed on its side (5xx, overloaded)."""

    transient = True


class UnreadableResponseError(ProviderError):
    """The provider's reply could not be read: not the JSON its API documents, cut off, or of an
    unexpected shape. Retried like other transient failures, since a garbled or cut reply is
    most often a network or proxy fault; ``request_id`` and a redacted snippet say what came."""

    transient = True


class OutputError(CommandError):
    """The model answered, but the answer cannot become the expected value."""


class ParseError(OutputError):
    """The output was not parsable, or not valid for the expected type."""


class EmptyOutputError(OutputError):
    """The model produced no final output."""


class TruncatedOutputError(OutputError):
    """The output was cut off by the token limit. Not re-asked: raise ``max_tokens`` instead."""


class RefusalError(OutputError):
    """The model refused to answer."""


class ContentFilteredError(OutputError):
    """The provider's content filter stopped the output."""


class ToolError(CommandError):
    """A tool raised and the command was configured with ``tool_errors="raise"``."""

    def __init__(self, message: str, *, tool: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.tool = tool


class ToolLoopLimitExceeded(CommandError):
    """The model kept requesting tools beyond ``max_tool_turns``.

    ``max_turns`` is the limit, ``turns_taken`` the tool rounds that ran, and ``partial_text``
    whatever text the model wrote alongside its last tool calls (alloy-ai's attributes; it is the
    error's ``output``, and alloy-ai's ``partial_text=`` keyword sets it).
    """

    def __init__(
        self,
        message: str,
        *,
        max_turns: int | None = None,
        turns_taken: int | None = None,
        partial_text: str | None = None,
        **kwargs: Any,
    ) -> None:
        if partial_text is not None:
            kwargs.setdefault("output", partial_text)
        super().__init__(message, **kwargs)
        self.max_turns = max_turns
        self.turns_taken = turns_taken

    @property
    def partial_text(self) -> str | None:
        return self.output


class CriterionFailed(CommandError):
    """A quality criterion whose action is ``exception`` failed.

    ``report`` is the ``CheckReport`` of the parse attempt that failed (set by the checker).
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        criterion: str | None = None,
        report: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.field = field
        self.criterion = criterion
        self.report = report


class BudgetExceeded(CommandError):
    """A budget stopped the call: its ``token_budget`` was spent before a valid answer
    arrived, or its next request would have passed a ``cost_budget`` (the call's, or a run's
    over rows), so it was not sent.

    ``spent`` and ``limit`` are the budget's figures in ``unit`` (``"tokens"`` or ``"USD"``);
    None when the error was raised without them.
    """

    def __init__(
        self,
        message: str,
        *,
        spent: float | None = None,
        limit: float | None = None,
        unit: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.spent = spent
        self.limit = limit
        self.unit = unit


class EnforcementError(CommandError):
    """The typed answer could only be enforced more weakly than ``require_enforcement``
    (``ALLOY_REQUIRE_ENFORCEMENT``) allows: the endpoint's profile offers nothing as strong, or
    the endpoint refused the mode the call had (a 400 naming ``response_format``,
    ``json_schema``, ``tool_choice`` or ``strict``) and the next mode down is too weak.

    ``required`` is the weakest enforcement allowed, ``available`` the strongest the call
    could still have had (``None``: none at all).
    """

    def __init__(
        self,
        message: str,
        *,
        required: str | None = None,
        available: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.required = required
        self.available = available


class RailBlocked(CommandError):
    """A rail refused the input, the output or a tool call."""

    def __init__(
        self, message: str, *, rail: str | None = None, reason: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.rail = rail
        self.reason = reason


def create_tool_loop_exception(
    *, max_turns: int | None, turns_taken: int, partial_text: str | None
) -> ToolLoopLimitExceeded:
    """alloy-ai's factory for :class:`ToolLoopLimitExceeded`, with alloy-ai's message; kept so
    code written for it runs (not in ``__all__``: alloy raises the error itself)."""
    warnings.warn(
        "alloy.errors.create_tool_loop_exception is alloy-ai's: build the error itself, "
        "ToolLoopLimitExceeded(message, max_turns=..., turns_taken=..., partial_text=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    partial = (partial_text or "").strip()
    message = (
        f"Exceeded tool-call turn limit (max_tool_turns={max_turns}, turns_taken={turns_taken})."
    )
    message += f" Partial response: {partial[:500]}" if partial else " No final answer produced."
    return ToolLoopLimitExceeded(
        message, max_turns=max_turns, turns_taken=turns_taken, partial_text=partial_text
    )
