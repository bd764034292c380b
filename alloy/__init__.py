"""alloy: typed AI functions.

A function that returns a prompt, decorated with ``@command(output=T)``, becomes a model call
that returns a real ``T``: enforced by the provider's structured output, validated locally, and
repaired by a re-ask when it fails.
"""

from ._command import AsyncCommand, Command, Result, ask, command
from ._config import Config, configure, reset_configuration, use_config
from ._tools import Tool, ensure, require, tool
from ._types import Usage
from .errors import (
    AlloyError,
    AuthenticationError,
    BadRequestError,
    BudgetExceeded,
    CommandError,
    ConfigurationError,
    ContentFilteredError,
    CriterionFailed,
    EmptyOutputError,
    OutputError,
    ParseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RailBlocked,
    RateLimitError,
    RefusalError,
    SchemaRejectedError,
    ServerError,
    ToolError,
    ToolLoopLimitExceeded,
    TruncatedOutputError,
)
from .providers import register_provider

__version__ = "0.1.0"

__all__ = [
    "AlloyError",
    "AsyncCommand",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceeded",
    "Command",
    "CommandError",
    "Config",
    "ConfigurationError",
    "ContentFilteredError",
    "CriterionFailed",
    "EmptyOutputError",
    "OutputError",
    "ParseError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RailBlocked",
    "RateLimitError",
    "RefusalError",
    "Result",
    "SchemaRejectedError",
    "ServerError",
    "Tool",
    "ToolError",
    "ToolLoopLimitExceeded",
    "TruncatedOutputError",
    "Usage",
    "ask",
    "command",
    "configure",
    "ensure",
    "register_provider",
    "require",
    "reset_configuration",
    "tool",
    "use_config",
]
