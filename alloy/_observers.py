"""Who listens to calls: the handlers subscribed to every command, the ``alloy`` logger, call ids.

Kept apart from :mod:`alloy.events` so that a call nobody listens to never loads the event
classes (two dozen dataclasses, the largest part of ``import alloy``): the engine builds an
event only for a listener, and imports its class only then.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("alloy")

#: A handler and the event classes it takes (every event when empty).
Listener = tuple[Callable[[Any], Any], tuple[type, ...]]

_global_handlers: tuple[Listener, ...] = ()
_lock = threading.Lock()


def new_call_id() -> str:
    """A short random id that ties one call's events and spans together."""
    return os.urandom(6).hex()


def listen(listener: Listener) -> Callable[[], None]:
    """Add ``listener`` for every command's calls (``alloy.events.subscribe``); returns a
    function that removes it."""
    global _global_handlers
    with _lock:
        _global_handlers = (*_global_handlers, listener)

    def unsubscribe() -> None:
        global _global_handlers
        with _lock:
            _global_handlers = tuple(h for h in _global_handlers if h is not listener)

    return unsubscribe


def global_handlers() -> tuple[Listener, ...]:
    return _global_handlers
