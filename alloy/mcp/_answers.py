"""A served command's call as an MCP tool result: its value, or what went wrong.

A value is ``structuredContent`` with its JSON as text content too (clients that read only text
see the same data); the call's usage, cost, model and attempts go in the result's ``_meta``.

A failure is ``isError: true`` with text that says what happened and what to do, and no
``structuredContent``: clients validate that against the success schema and would hide the real
error behind a schema mismatch. The text never quotes the model's output (an answer that failed
to parse has not been through the output rails) and never holds a key: provider messages are
alloy's own, with keys already redacted.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types
from pydantic import ValidationError

from .._types import Result
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
    ToolError,
    ToolLoopLimitExceeded,
)
from ._described import ServedCommand

log = logging.getLogger("alloy.mcp")

#: The result ``_meta`` keys of a successful call.
USAGE_META = "alloy/usage"
COST_META = "alloy/cost"
MODEL_META = "alloy/model"
ATTEMPTS_META = "alloy/attempts"


def answer(served: ServedCommand, result: Result[Any]) -> mcp_types.CallToolResult:
    """The tool result of a call that returned ``result``."""
    structured = served.structured(result.value)
    usage = result.usage
    meta = {
        USAGE_META: {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_tokens": usage.cached_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "requests": usage.requests,
        },
        COST_META: result.cost,
        MODEL_META: result.model,
        ATTEMPTS_META: result.transcript.attempts,
    }
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=text)],
        structured_content=structured,
        meta=meta,
    )


def failure(text: str) -> mcp_types.CallToolResult:
    """An error result: ``isError`` with ``text``, and no structured content."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)


def invalid_arguments(error: ValidationError) -> mcp_types.CallToolResult:
    """Arguments that do not fit the tool's input schema, each field's error named."""
    parts = []
    for item in error.errors(include_url=False)[:10]:
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return failure(
        "Invalid arguments: " + "; ".join(parts) + ". Send arguments that match the tool's "
        "inputSchema."
    )


def what_to_do(error: BaseException) -> str:
    """What a caller is told of a failed call: what happened and what to do next."""
    if isinstance(error, RailBlocked):
        return (
            f"A rail ({error.rail}) blocked this call: {error.reason}. Change the input; the "
            "same call is blocked again."
        )
    if isinstance(error, ConfigurationError):
        return (
            f"The call cannot be made as given: {error}. Fix the arguments, or the server's "
            "configuration; retrying the same call fails the same way."
        )
    if isinstance(error, RateLimitError):
        wait = f" in {max(1, round(error.retry_after))} s" if error.retry_after is not None else ""
        return f"The model provider's rate limit was reached ({error.message}). Retry{wait}."
    if isinstance(error, ProviderTimeoutError):
        return f"The model provider timed out ({error.message}). Retry the call."
    if isinstance(error, ProviderError):
        return (
            f"The model provider failed ({type(error).__name__}: {error.message}). Retry "
            "later; if it goes on, tell the server's operator."
        )
    if isinstance(error, (OutputError, CriterionFailed)):
        expected = f"; expected {error.expected}" if error.expected else ""
        return (
            f"The model's answer was unusable ({type(error).__name__}{expected}). Retry, or "
            "rephrase the input."
        )
    if isinstance(error, BudgetExceeded):
        return "The call's token budget ran out. Send a shorter input, or raise the budget."
    if isinstance(error, (ToolError, ToolLoopLimitExceeded)):
        return (
            f"The command's own tools failed ({type(error).__name__}). Retry; if it goes on, "
            "tell the server's operator."
        )
    if isinstance(error, CommandError):
        return f"The call failed ({type(error).__name__}). Retry the call."
    return "The server failed while handling this call. Tell the server's operator."


def failed(error: BaseException) -> mcp_types.CallToolResult:
    """The error result of a call that raised ``error`` (logged when it is not alloy's)."""
    if not isinstance(error, (CommandError, ConfigurationError)):
        log.error("MCP tool call failed: %s", type(error).__name__)
    return failure(what_to_do(error))
