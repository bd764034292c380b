"""What the cache says when it does not do what was asked of it, once instead of on every call.

A cache that is configured but serves nothing must not be silent: a command whose requests are
not cached says why, once, at WARNING, naming the fix (see :class:`NotCached`); a store that
fails says so once per store, at WARNING, and every later fault at DEBUG (see
:func:`store_fault`), so a hung or broken store neither fails calls nor floods the log. A store
that failed to read (or to write) is then left alone for :data:`REST` seconds (see
:func:`resting`): a hung Redis costs one timeout, not one per call.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any, Literal

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

    def reply_not_stored(self, model: str, location: str) -> None:
        if "reply not stored" in self._said:
            return
        self._say(
            "reply not stored",
            f"alloy cache: a reply of {model} to {self.command} is not stored in {location}: "
            "it holds parts with no JSON form, so the request is asked again next time",
        )

    def _say(self, reason: str, message: str) -> None:
        with self._lock:
            if reason in self._said:
                return
            self._said.add(reason)
        logger.warning("%s", message)


#: Seconds a store that failed to read (or to write) is not asked to again: calls are misses
#: (or are not stored) meanwhile, without waiting on it.
REST = 30.0

Doing = Literal["reading", "writing"]

#: The stores that reported a fault at WARNING already (held weakly: a closed store goes).
_faulted: weakref.WeakSet[Any] = weakref.WeakSet()
#: Until when (``time.monotonic()``) each store is left alone, for reading and for writing.
_rest: weakref.WeakKeyDictionary[Any, dict[str, float]] = weakref.WeakKeyDictionary()
_faulted_lock = threading.Lock()


def resting(store: Any, doing: Doing) -> bool:
    """Whether ``store`` failed ``doing`` less than :data:`REST` seconds ago."""
    if not _rest:
        return False
    until = _rest.get(store)
    return until is not None and until.get(doing, 0.0) > time.monotonic()


def store_fault(store: Any, doing: Doing, error: BaseException) -> None:
    """Report that ``store`` failed ``doing`` (the call goes on as a miss, or unstored): at
    WARNING the first time for this store, at DEBUG after that; it rests meanwhile."""
    with _faulted_lock:
        first = store not in _faulted
        if first:
            _faulted.add(store)
        _rest.setdefault(store, {})[doing] = time.monotonic() + REST
    location = getattr(store, "location", repr(store))
    if first:
        logger.warning(
            "alloy cache: %s %s failed, so calls are answered by the provider (misses) while "
            "it fails, and it is tried again every %d seconds; later faults of this store are "
            "logged at DEBUG: %s",
            doing,
            location,
            REST,
            describe(error),
        )
    else:
        logger.debug("alloy cache: %s %s failed: %s", doing, location, describe(error))


def describe(error: BaseException) -> str:
    """The error's type and message, for a log line or a message of alloy's own."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


__all__ = ["FIXES", "REST", "NotCached", "describe", "resting", "store_fault"]
