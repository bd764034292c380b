"""What the cache says when it does not do what was asked of it, once instead of on every call.

A cache that is configured but serves nothing must not be silent: a command whose requests are
not cached says why, once, at WARNING, naming the fix (see :class:`NotCached`); a store that
fails says so once per store, at WARNING, and every later fault at DEBUG (see
:func:`store_fault`), so a hung or broken store neither fails calls nor floods the log.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from .._types import Request

logger = logging.getLogger("alloy.cache")

#: How to make a request that is not repeatable cached: the same words in every warning.
FIXES = (
    "to cache them, set cache_all=True (ALLOY_CACHE_ALL=1), send a seed "
    '(extra_json={"seed": 7}) where the API takes one, or use temperature=0 on a model '
    "that takes it"
)


class NotCached:
    """Says why a command's requests are not cached: once per reason, for the command and every
    copy of it (``with_options`` shares its notice), however many calls or rows it makes."""

    def __init__(self, command: str = "calls") -> None:
        self.command = command
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def not_repeatable(self, model: str, location: str, request: Request) -> None:
        if "not repeatable" in self._said:
            return
        if request.settings.temperature == 0:
            why = f"{model} takes no temperature, so temperature=0 is left out and they are"
        else:
            why = "they are"
        self._say(
            "not repeatable",
            f"alloy cache: requests of {self.command} to {model} are not cached in {location}: "
            f"{why} not repeatable (no temperature 0 and no seed); {FIXES}",
        )

    def no_json_form(self, model: str, location: str, reason: Exception) -> None:
        if "no JSON form" in self._said:
            return
        self._say(
            "no JSON form",
            f"alloy cache: a request of {self.command} to {model} is not cached in {location}: "
            f"it holds something with no JSON form ({reason}); pass JSON-ready values "
            "(str, numbers, lists, dicts, dataclasses or pydantic models) to cache it",
        )

    def _say(self, reason: str, message: str) -> None:
        with self._lock:
            if reason in self._said:
                return
            self._said.add(reason)
        logger.warning("%s", message)


#: The stores that reported a fault at WARNING already (held weakly: a closed store goes).
_faulted: weakref.WeakSet[Any] = weakref.WeakSet()
_faulted_lock = threading.Lock()


def store_fault(store: Any, doing: str, error: BaseException) -> None:
    """Report that ``store`` failed ``doing`` something (the call goes on as a miss): at
    WARNING the first time for this store, at DEBUG after that."""
    with _faulted_lock:
        first = store not in _faulted
        if first:
            _faulted.add(store)
    location = getattr(store, "location", repr(store))
    if first:
        logger.warning(
            "alloy cache: %s %s failed, so calls are answered by the provider (misses) while "
            "it fails; later faults of this store are logged at DEBUG: %s",
            doing,
            location,
            describe(error),
        )
    else:
        logger.debug("alloy cache: %s %s failed: %s", doing, location, describe(error))


def describe(error: BaseException) -> str:
    """The error's type and message, for a log line or a message of alloy's own."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


__all__ = ["FIXES", "NotCached", "describe", "store_fault"]
