"""The rate limits a provider states in its reply headers, read into one shape.

OpenAI (and OpenAI-compatible servers) send ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``,
with resets as Go-style durations (``"1s"``, ``"6m0s"``, ``"120ms"``); Anthropic sends
``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}``, with resets as RFC 3339 times.
Both state per-minute limits. Gemini and Ollama send none.

Adapters read each reply's headers with :func:`stated_limits` and put what they state on the
value that carries the reply: ``Response.rate_limits``, or ``ProviderError.rate_limits`` for an
error. Paced runs (``alloy.rows``) read them there to learn the limits they must keep to,
without the user having to look them up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from .._types import RateLimits, Window

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
#: The headers that say a reply states limits at all: without one of them, nothing is read.
_LIMIT_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-limit-tokens",
    "anthropic-ratelimit-requests-limit",
    "anthropic-ratelimit-tokens-limit",
)


def stated_limits(headers: Mapping[str, str] | None) -> RateLimits | None:
    """The limits a reply's ``headers`` state, or None when they state none (one look per
    family of headers when there are none, as from Gemini, Ollama or a local server)."""
    if headers is None or not any(name in headers for name in _LIMIT_HEADERS):
        return None
    stated = rate_limits(headers)
    return stated if stated.known else None


def rate_limits(headers: Mapping[str, str], now: datetime | None = None) -> RateLimits:
    """The limits in ``headers`` (either provider's family; an unreadable value is left out)."""
    if "anthropic-ratelimit-requests-limit" in headers or (
        "anthropic-ratelimit-tokens-limit" in headers
    ):
        return RateLimits(_anthropic(headers, "requests", now), _anthropic(headers, "tokens", now))
    return RateLimits(_openai(headers, "requests"), _openai(headers, "tokens"))


def _openai(headers: Mapping[str, str], kind: str) -> Window:
    return Window(
        _number(headers.get(f"x-ratelimit-limit-{kind}")),
        _number(headers.get(f"x-ratelimit-remaining-{kind}")),
        duration(headers.get(f"x-ratelimit-reset-{kind}")),
    )


def _anthropic(headers: Mapping[str, str], kind: str, now: datetime | None) -> Window:
    reset = headers.get(f"anthropic-ratelimit-{kind}-reset")
    return Window(
        _number(headers.get(f"anthropic-ratelimit-{kind}-limit")),
        _number(headers.get(f"anthropic-ratelimit-{kind}-remaining")),
        _until(reset, now) if reset else None,
    )


def duration(text: str | None) -> float | None:
    """Seconds in a Go-style duration (``"1m30s"``, ``"20ms"``, ``"0.5s"``); None if unreadable."""
    if not text:
        return None
    text = text.strip()
    total, end = 0.0, 0
    for match in _DURATION.finditer(text):
        if match.start() != end:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        end = match.end()
    return total if end == len(text) and end else None


def _until(stamp: str, now: datetime | None) -> float | None:
    """Seconds from ``now`` until an RFC 3339 time (never negative)."""
    try:
        when = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    current = now or datetime.now(when.tzinfo)
    return max(0.0, (when - current).total_seconds())


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None
