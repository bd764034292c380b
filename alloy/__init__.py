"""alloy: typed AI functions.

A function that returns a prompt, decorated with ``@command(output=T)``, becomes a model call
that returns a real ``T``: enforced by the provider's structured output, validated locally, and
repaired by a re-ask when it fails.
"""

import typing as _typing

from . import _alloy_ai_modules
from ._command import AsyncCommand, Command, ask, command
from ._config import Config, configure, reset_configuration, use_config
from ._deps import Context
from ._tools import Tool, ensure, require, tool
from ._types import ModelTurn as Assistant
from ._types import PromptModeWarning, Result, System, Usage
from ._types import UserTurn as User
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

if _typing.TYPE_CHECKING:
    from .checks import (
        CheckedOutput,
        CheckReport,
        Criterion,
        CriterionResult,
        check,
        checked,
        judged_by,
    )
    from .formats import BoundedText, Code, KeyValues, Task, TaskList, YesNo
    from .media import Document, Image
    from .providers import register_provider

#: The exports a plain call does not need, each with its module: imported on first use.
_LAZY = {
    **dict.fromkeys(
        (
            "CheckReport",
            "CheckedOutput",
            "Criterion",
            "CriterionResult",
            "check",
            "checked",
            "judged_by",
        ),
        "checks",
    ),
    **dict.fromkeys(("BoundedText", "Code", "KeyValues", "Task", "TaskList", "YesNo"), "formats"),
    **dict.fromkeys(("Document", "Image"), "media"),
    "register_provider": "providers",
}

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


def __getattr__(name: str) -> _typing.Any:
    """An export a plain call does not need, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'alloy' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


_alloy_ai_modules.install()
