"""alloy: typed AI functions.

A function that returns a prompt, decorated with ``@command(output=T)``, becomes a model call
that returns a real ``T``: enforced by the provider's structured output, validated locally, and
repaired by a re-ask when it fails.
"""

from . import _alloy_ai_modules
from ._command import AsyncCommand, Command, ask, command
from ._config import Config, configure, reset_configuration, use_config
from ._deps import Context
from ._tools import Tool, ensure, require, tool
from ._types import ModelTurn as Assistant
from ._types import PromptModeWarning, Result, System, Usage
from ._types import UserTurn as User
from .checks import (
    CheckedOutput,
    CheckReport,
    Criterion,
    CriterionResult,
    check,
    checked,
    judged_by,
)
from .errors import (
    AlloyError,
    AuthenticationError,
    BadRequestError,
    BudgetExceeded,
    CacheMissError,
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
    UnreadableResponseError,
)
from .formats import BoundedText, Code, KeyValues, Task, TaskList, YesNo
from .media import Document, Image
from .providers import register_provider

__version__ = "0.1.0"

__all__ = [
    "AlloyError",
    "Assistant",
    "AsyncCommand",
    "AuthenticationError",
    "BadRequestError",
    "BoundedText",
    "BudgetExceeded",
    "CacheMissError",
    "CheckReport",
    "CheckedOutput",
    "Code",
    "Command",
    "CommandError",
    "Config",
    "ConfigurationError",
    "ContentFilteredError",
    "Context",
    "Criterion",
    "CriterionFailed",
    "CriterionResult",
    "Document",
    "EmptyOutputError",
    "Image",
    "KeyValues",
    "OutputError",
    "ParseError",
    "PromptModeWarning",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RailBlocked",
    "RateLimitError",
    "RefusalError",
    "Result",
    "SchemaRejectedError",
    "ServerError",
    "System",
    "Task",
    "TaskList",
    "Tool",
    "ToolError",
    "ToolLoopLimitExceeded",
    "TruncatedOutputError",
    "UnreadableResponseError",
    "Usage",
    "User",
    "YesNo",
    "ask",
    "check",
    "checked",
    "command",
    "configure",
    "ensure",
    "judged_by",
    "register_provider",
    "require",
    "reset_configuration",
    "tool",
    "use_config",
]

_alloy_ai_modules.install()
