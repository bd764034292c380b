"""Results of tools marked cacheable (``@tool(cacheable=True)``), kept in the call's store.

A tool may have side effects (sending an email, charging a card), so the cache never skips one
on its own: only a tool its author marked cacheable is answered from the store, and only for
the same tool and the same arguments. The key is a hash of the tool's name and the model's
arguments as canonical JSON (after they were validated against the tool's signature). Only a
result the tool returned is stored, never an error, a timeout or a broken contract. The stored
text is the result as the model reads it, so a hit hands the model the very same text.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .._types import ToolCall
from ._key import Unkeyable, canonical
from ._model import CachePolicy
from ._notices import resting, store_fault

#: Bumped when the layout changes; entries of another version are misses.
VERSION = 1


class ToolCache:
    """Cacheable tools' results in ``policy``'s store, under ``policy``'s mode and lifetime.

    ``readwrite`` looks a call up and stores what the tool returned; ``record`` always runs the
    tool and stores its result; ``replay`` looks up and, on a miss, runs the tool (a tool is
    not a provider) without storing anything.
    """

    def __init__(self, policy: CachePolicy) -> None:
        self.policy = policy

    def key(self, call: ToolCall, arguments: str) -> str | None:
        """The key of ``call`` with ``arguments`` (its validated JSON), or None without one."""
        try:
            text = canonical(["tool", VERSION, call.name, json.loads(arguments)])
        except (Unkeyable, ValueError):
            return None
        return hashlib.sha256(text.encode()).hexdigest()

    def read(self, key: str) -> str | None:
        """The stored result under ``key`` (as the model reads it), or None."""
        if self.policy.mode == "record" or resting(self.policy.store, "reading"):
            return None
        try:
            raw = self.policy.store.get(key)
        except Exception as exc:  # a cache that fails is a miss, never a failed call
            store_fault(self.policy.store, "reading", exc)
            return None
        return None if raw is None else _decode(raw)

    def write(self, key: str, content: str) -> None:
        """Store a result the tool returned (as the model reads it) under ``key``."""
        if self.policy.mode == "replay" or resting(self.policy.store, "writing"):
            return
        value = json.dumps({"v": VERSION, "tool": content}, ensure_ascii=False).encode()
        try:
            self.policy.store.put(key, value, self.policy.ttl)
        except Exception as exc:
            store_fault(self.policy.store, "writing", exc)


def _decode(raw: bytes) -> str | None:
    try:
        data: Any = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return None
    content = data.get("tool")
    return content if isinstance(content, str) else None


def tool_cache(policy: CachePolicy | None, cacheable: bool) -> ToolCache | None:
    """The tool cache of a call under ``policy`` whose tools include a cacheable one, or None."""
    return ToolCache(policy) if policy is not None and cacheable else None


__all__ = ["ToolCache", "tool_cache"]
