"""Rate limits as the providers enforce and state them, for tests of pacing.

``Emulator.rate_limit("openai", rpm=600, tpm=60_000)`` makes one API family keep to a per-minute
request and token allowance. As the providers describe theirs, the allowance refills
continuously and is enforced over short periods (OpenAI: "60,000 requests/minute may be enforced
as 1,000 requests/second"), so a bucket holds ``burst`` seconds' worth. A request that finds too
little left gets the provider's 429 with ``retry-after``; every reply states the limits in the
provider's headers (``x-ratelimit-*`` for OpenAI, ``anthropic-ratelimit-*`` for Anthropic; Gemini
and Ollama state none, as they do not).

Tokens are counted the emulator's way (about four characters a token): a request needs its
input's worth to be admitted, and is charged its input and its answer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from ._script import APIFamily


@dataclass
class _Bucket:
    per_minute: float
    burst: float
    level: float = field(init=False)
    stamp: float = field(init=False)

    def __post_init__(self) -> None:
        self.level = self.capacity
        self.stamp = time.monotonic()

    @property
    def capacity(self) -> float:
        return max(1.0, self.per_minute / 60 * self.burst)

    @property
    def rate(self) -> float:
        return self.per_minute / 60

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0 when it is now)."""
        short = min(amount, self.capacity) - self.level
        return 0.0 if short <= 0 else short / self.rate

    def until_full(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass
class Limits:
    """One API family's allowance; counts what it admitted and refused (``admitted``, ``refused``)."""

    rpm: float | None
    tpm: float | None
    burst: float = 1.0
    admitted: int = 0
    refused: int = 0
    _requests: _Bucket | None = field(init=False, default=None)
    _tokens: _Bucket | None = field(init=False, default=None)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.rpm is not None:
            self._requests = _Bucket(self.rpm, self.burst)
        if self.tpm is not None:
            self._tokens = _Bucket(self.tpm, self.burst)

    def admit(self, tokens: int) -> float:
        """Take one request (and check ``tokens`` are there): 0 when admitted, else the
        seconds to wait before asking again."""
        with self._lock:
            now = time.monotonic()
            waits = [0.0]
            for bucket, amount in ((self._requests, 1.0), (self._tokens, float(tokens))):
                if bucket is not None:
                    bucket.refill(now)
                    waits.append(bucket.wait(amount))
            wait = max(waits)
            if wait > 0:
                self.refused += 1
                return wait
            if self._requests is not None:
                self._requests.level -= 1
            self.admitted += 1
            return 0.0

    def charge(self, tokens: int) -> None:
        """Debit the tokens a request used (the level may go below zero: later requests wait)."""
        with self._lock:
            if self._tokens is not None:
                self._tokens.refill(time.monotonic())
                self._tokens.level -= tokens

    def headers(self, family: APIFamily) -> tuple[tuple[str, str], ...]:
        """The limits as ``family``'s provider states them (none for Gemini and Ollama)."""
        with self._lock:
            now = time.monotonic()
            windows = []
            for kind, bucket in (("requests", self._requests), ("tokens", self._tokens)):
                if bucket is not None:
                    bucket.refill(now)
                    windows.append((kind, bucket))
        found: list[tuple[str, str]] = []
        for kind, bucket in windows:
            limit, left, reset = (
                int(bucket.per_minute),
                max(0, int(bucket.level)),
                bucket.until_full(),
            )
            if family == "openai":
                found += [
                    (f"x-ratelimit-limit-{kind}", str(limit)),
                    (f"x-ratelimit-remaining-{kind}", str(left)),
                    (f"x-ratelimit-reset-{kind}", f"{int(reset * 1000)}ms"),
                ]
            elif family == "anthropic":
                at = datetime.now(timezone.utc) + timedelta(seconds=reset)
                found += [
                    (f"anthropic-ratelimit-{kind}-limit", str(limit)),
                    (f"anthropic-ratelimit-{kind}-remaining", str(left)),
                    (f"anthropic-ratelimit-{kind}-reset", at.isoformat().replace("+00:00", "Z")),
                ]
        return tuple(found)
