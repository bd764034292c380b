"""Importing what a user names on a command line: ``package.module`` or ``path/to/file.py``.

``alloy run``, ``alloy map`` and ``alloy serve`` all take their targets this way. A name is
looked up from the working directory too (a console script does not put it on ``sys.path``,
``python -m`` does); a file runs as it would as a script, its folder on ``sys.path`` so its
neighbours import. What cannot be found is a :class:`TargetNotFound`; an error raised while
the module runs is left to the caller.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import ConfigurationError


class TargetNotFound(ConfigurationError):
    """No module by that name, or no Python file at that path."""


def load_command(target: str) -> Any:
    """The command ``module:attr`` or ``path/to/file.py:attr`` names (``alloy run``, ``alloy map``
    and ``alloy batch results`` load their command this way)."""
    from ._command import Command

    module_part, sep, attr_path = target.rpartition(":")
    if not sep or not module_part or not attr_path:
        raise TargetNotFound(f"expected module:command or path/to/file.py:command, got {target!r}")
    obj: Any = import_target(module_part)
    for name in attr_path.split("."):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise TargetNotFound(f"{module_part!r} has no attribute {attr_path!r}") from None
    if not isinstance(obj, Command):
        raise TargetNotFound(
            f"{target} is not an alloy command (it is {type(obj).__name__}); "
            "decorate the function with @command"
        )
    return obj


def import_target(module_part: str) -> ModuleType:
    """The module ``module_part`` names: a module name, or a ``.py`` file by its path."""
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        return _import_file(Path(module_part))
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        raise TargetNotFound(f"cannot import {module_part!r}: {exc}") from None


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise TargetNotFound(f"no such file: {str(path)!r}")
    resolved = path.resolve()
    # Named by its stem, as when it runs as a script, unless another module has that name.
    name = resolved.stem
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) != str(resolved):
        name = f"_alloy_cli_{resolved.stem}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise TargetNotFound(f"cannot import {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look the module up while it runs
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
