"""Prompt caches as the providers keep them, so cached-token usage is tested end to end.

A request marks prefixes of its prompt as cacheable: Anthropic ``cache_control`` breakpoints,
or, under an OpenAI ``prompt_cache_key``, every prefix that ends between two input items. A
later request that begins with a remembered prefix reads it, and its usage says so
(``cache_read_input_tokens``, ``cached_tokens``); Anthropic also reports what a request writes
(``cache_creation_input_tokens``). Gemini caches are made beforehand (``POST
/{version}/cachedContents``) and named by the requests that use them.

Simpler than the services, on purpose: no minimum prompt length, no expiry and no lookback
limit, and OpenAI prefixes are only remembered under a ``prompt_cache_key`` (the service caches
without one too), so a test that asks for nothing sees no cached tokens. Everything is
forgotten when the emulator is reset.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Prefix:
    """A prompt prefix: a digest of everything up to its end, its tokens, and whether the
    request marks it for caching (only marked prefixes are written)."""

    key: str
    tokens: int
    marked: bool


@dataclass(frozen=True)
class CacheUse:
    """What one request read from the cache and wrote to it, in tokens."""

    read: int = 0
    written: int = 0


def prefixes(seed: Any, pieces: Iterable[tuple[Any, int, bool]]) -> list[Prefix]:
    """The prefixes of a prompt made of ``pieces`` (each its content, its tokens and whether it
    is marked), keyed by ``seed`` (what must also match: the model, a cache key) and the content
    so far. A leaf module: the wire APIs count the tokens, as they do for their usage."""
    digest = hashlib.sha256(_canonical(seed)).hexdigest()
    found: list[Prefix] = []
    total = 0
    for content, tokens, marked in pieces:
        digest = hashlib.sha256(digest.encode() + _canonical(content)).hexdigest()
        total += tokens
        found.append(Prefix(digest, total, marked))
    return found


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str).encode()


class PromptCache:
    """The prefixes and named caches one emulator remembers; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: dict[str, int] = {}
        self._named: dict[str, int] = {}

    def use(self, found: Sequence[Prefix]) -> CacheUse:
        """Read the longest remembered prefix up to the last marked one, and write the marked
        ones: what lies between the read and the last mark is written."""
        marks = [index for index, prefix in enumerate(found) if prefix.marked]
        if not marks:
            return CacheUse()
        candidates = found[: marks[-1] + 1]
        with self._lock:
            read = max((p.tokens for p in candidates if p.key in self._prefixes), default=0)
            for prefix in candidates:
                if prefix.marked:
                    self._prefixes[prefix.key] = prefix.tokens
        return CacheUse(read, max(0, candidates[-1].tokens - read))

    def create(self, tokens: int) -> str:
        """Remember a named cache of ``tokens`` tokens; its name, ``cachedContents/…``."""
        name = "cachedContents/" + uuid.uuid4().hex[:16]
        with self._lock:
            self._named[name] = tokens
        return name

    def tokens_of(self, name: str) -> int | None:
        """The tokens a named cache holds (a bare id is taken as ``cachedContents/<id>``), or
        None for a cache this emulator never made."""
        if "/" not in name:
            name = f"cachedContents/{name}"
        with self._lock:
            return self._named.get(name)

    def clear(self) -> None:
        """Forget every prefix and named cache."""
        with self._lock:
            self._prefixes.clear()
            self._named.clear()
