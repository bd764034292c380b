"""What a server serves: the commands and rail configurations found in the given modules.

``alloy serve app`` serves every command and :class:`~alloy.serve.RailConfig` that module
``app`` defines at its top level; ``alloy serve app:summarize app:strict`` only those named.
A command is served under the name it has in its module, which is also its URL segment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .._command import Command
from .._importing import import_target
from ..errors import ConfigurationError
from ._rails import RailConfig

_URL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")


@dataclass(frozen=True)
class Served:
    """The commands (by URL name) and the rail configurations (by name) of one server."""

    commands: Mapping[str, Command[..., Any]] = field(default_factory=dict)
    rail_configs: Mapping[str, RailConfig] = field(default_factory=dict)


def collect(objects: Mapping[str, Any] | Iterable[Any]) -> Served:
    """Commands and rail configs from ``{name: object}`` (or objects, named by themselves)."""
    if not isinstance(objects, Mapping):
        named: dict[str, Any] = {}
        for obj in objects:
            if isinstance(obj, RailConfig):
                named[obj.name] = obj
            elif isinstance(obj, Command):
                named[obj.name.rsplit(".", 1)[-1]] = obj
            else:
                raise ConfigurationError(
                    f"cannot serve {obj!r}: give alloy commands and alloy.serve.RailConfig objects"
                )
        objects = named
    commands: dict[str, Command[..., Any]] = {}
    configs: dict[str, RailConfig] = {}
    for name, obj in objects.items():
        if isinstance(obj, Command):
            if not _URL_NAME.match(name):
                raise ConfigurationError(
                    f"command name {name!r} cannot be a URL segment: use letters, digits, "
                    "'_', '.' or '-'"
                )
            commands[name] = obj
        elif isinstance(obj, RailConfig):
            if obj.name in configs and configs[obj.name] is not obj:
                raise ConfigurationError(f"two rail configs are named {obj.name!r}")
            configs[obj.name] = obj
        else:
            raise ConfigurationError(
                f"{name!r} is {type(obj).__name__}, not an alloy command or RailConfig"
            )
    return Served(commands, configs)


def from_module(module: ModuleType, names: Iterable[str] = ()) -> dict[str, Any]:
    """``{name: object}`` for the named attributes of ``module``, or all its servable ones."""
    wanted = list(names)
    if wanted:
        found: dict[str, Any] = {}
        for name in wanted:
            if not hasattr(module, name):
                raise ConfigurationError(f"module {module.__name__!r} has no attribute {name!r}")
            found[name] = getattr(module, name)
        return found
    return {
        name: obj
        for name, obj in vars(module).items()
        if not name.startswith("_") and isinstance(obj, (Command, RailConfig))
    }


def load(targets: Iterable[str]) -> Served:
    """The commands and rail configs that ``module`` or ``module:name`` targets name (a module
    may be given as ``path/to/file.py``); a ConfigurationError says what cannot be served."""
    targets = list(targets)
    objects: dict[str, Any] = {}
    for target in targets:
        module_part, sep, name = target.rpartition(":")
        if not sep:
            module_part, name = target, ""
        if not module_part:
            raise ConfigurationError(f"expected module or module:name, got {target!r}")
        found = from_module(import_target(module_part), [name] if name else [])
        for key, obj in found.items():
            if key in objects and objects[key] is not obj:
                raise ConfigurationError(f"two targets serve different objects named {key!r}")
            objects[key] = obj
    served = collect(objects)
    if not served.commands and not served.rail_configs:
        raise ConfigurationError(
            f"{', '.join(targets)}: no alloy command or RailConfig to serve "
            "(decorate functions with @command, or name them as module:name)"
        )
    return served
