"""Old spellings of renamed public names: still importable, with a DeprecationWarning.

A module that renamed some of its names sets ``__getattr__ = renamed(__name__, {old: new},
globals())``; docs/migrating.md lists the renames.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any


def renamed(
    module: str,
    names: Mapping[str, str],
    namespace: Mapping[str, Any],
    why: Callable[[str], str] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that gives ``namespace[new]`` for each old name, warning (with
    ``why(new)`` after the new name, when given)."""

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        reason = f": {why(new)}" if why is not None else ""
        warnings.warn(f"{module}.{name} is now {new}{reason}", DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__
