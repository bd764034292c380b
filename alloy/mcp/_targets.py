"""The commands ``alloy mcp`` serves: every command a module defines at its top level, or the
one ``module:command`` names (a module may be given as ``path/to/file.py``)."""

from __future__ import annotations

from typing import Any

from .._command import Command
from .._importing import import_target
from ..errors import ConfigurationError


def commands_in(target: str) -> dict[str, Command[..., Any]]:
    """``{name: command}`` for ``module`` or ``module:command``; a ConfigurationError says what
    is not there."""
    module_part, sep, name = target.rpartition(":")
    if not sep or not module_part:
        module_part, name = target, ""
    module = import_target(module_part)
    if name:
        found = getattr(module, name, None)
        if not isinstance(found, Command):
            raise ConfigurationError(f"{module_part!r} has no alloy command named {name!r}")
        return {name: found}
    commands = {
        key: obj
        for key, obj in vars(module).items()
        if not key.startswith("_") and isinstance(obj, Command)
    }
    if not commands:
        raise ConfigurationError(
            f"{module_part!r} defines no alloy command (decorate functions with @command)"
        )
    return commands
