"""Budgets: one model's request and token allowance, shared by runs in many workers.

A run's :class:`~alloy.rows.Pacer` keeps the allowance in its own buckets, which is right for
one process. N workers each pacing alone would send N times the provider's limit (each learns
the same limits from the headers and each starts with a full bucket), and the provider answers
the rest with 429s. Given ``budget=``, every pacer keeps its allowance in the budget instead:
the same two buckets (refilled continuously, a fraction of a second's worth at most, aimed at
97% of the stated rate) and the same pause after a 429, held once for every worker that shares
it, keyed by model. What each pacer learns (the limits, the ``remaining`` counts, a 429's
``retry-after``) it tells the budget; the budget's own clock times the refills.

* :class:`LocalBudget`: in this process, for runs in several threads or event loops.
* :class:`RedisBudget`: in a Redis database, for processes on any machines (Dask, Spark,
  ``ProcessPoolExecutor``): each step is one Lua script, atomic on the server, timed by the
  server's clock.
* ``alloy.ray.RayBudget``: in a Ray actor, for Ray workers.

Anything with the four methods of :class:`Budget` will do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ._pacer import BURST_SHARE, HEADROOM, Budget, Limits, _Bucket, take_from_buckets


@dataclass
class _Allowance:
    requests: _Bucket | None = None
    tokens: _Bucket | None = None
    paused_until: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def buckets(self, limits: Limits, burst: float, now: float) -> tuple[_Bucket | None, ...]:
        """The buckets for ``limits``, made (full) where a limit is new or changed."""
        for name, limit in zip(("requests", "tokens"), limits, strict=True):
            bucket: _Bucket | None = getattr(self, name)
            if limit and (bucket is None or bucket.per_minute != limit or bucket.burst != burst):
                setattr(self, name, _Bucket(limit, burst, now))
        return self.requests, self.tokens


class LocalBudget:
    """A budget in this process: runs in several threads (or event loops) keep together."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._models: dict[str, _Allowance] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<LocalBudget of {len(self._models)} model(s)>"

    def __reduce__(self) -> Any:
        raise TypeError(
            "a LocalBudget is shared by runs in one process and cannot be sent to another; "
            "use alloy.rows.RedisBudget or alloy.ray.RayBudget to share one across processes"
        )

    def _allowance(self, model: str) -> _Allowance:
        with self._lock:
            found = self._models.get(model)
            if found is None:
                found = self._models[model] = _Allowance()
            return found

    def take(self, model: str, limits: Limits, tokens: float, burst: float) -> float:
        allowance = self._allowance(model)
        with allowance.lock:
            now = self.clock()
            requests, tokens_bucket = allowance.buckets(limits, burst, now)
            return take_from_buckets(
                requests, tokens_bucket, tokens, now, allowance.paused_until - now
            )

    def give(self, model: str, tokens: float) -> None:
        allowance = self._allowance(model)
        with allowance.lock:
            if allowance.tokens is not None:
                allowance.tokens.level += tokens

    def cap(self, model: str, left: Limits, since: float) -> None:
        allowance = self._allowance(model)
        with allowance.lock:
            now = self.clock()
            for bucket, remaining in zip((allowance.requests, allowance.tokens), left, strict=True):
                if bucket is not None and remaining is not None:
                    bucket.refill(now)
                    bucket.level = min(bucket.level, remaining + since * bucket.rate)

    def pause(self, model: str, seconds: float) -> None:
        allowance = self._allowance(model)
        with allowance.lock:
            allowance.paused_until = max(allowance.paused_until, self.clock() + seconds)
            if allowance.requests is not None:
                allowance.requests.level = min(allowance.requests.level, 0.0)


# -- Redis -------------------------------------------------------------------------------------

#: The bucket arithmetic of ``_Bucket``, in Lua, on a hash per model: for each of ``r``
#: (requests) and ``t`` (tokens), its limit per minute, level and stamp; and the pause's end.
#: Times are the server's (``TIME``), so clients on machines with other clocks agree.
_COMMON = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local key = KEYS[1]
local headroom, share = tonumber(ARGV[1]), tonumber(ARGV[2])
local function load(kind)
  local got = redis.call('HMGET', key, kind .. 'pm', kind .. 'burst', kind .. 'level', kind .. 'stamp')
  local pm = tonumber(got[1])
  if not pm then return nil end
  local b = {pm = pm, burst = tonumber(got[2]), level = tonumber(got[3]), stamp = tonumber(got[4])}
  b.capacity = math.max(1, pm / 60 * b.burst * share)
  b.rate = pm * headroom / 60
  b.level = math.min(b.capacity, b.level + (now - b.stamp) * b.rate)
  b.stamp = now
  return b
end
local function save(kind, b)
  if b then
    redis.call('HSET', key, kind .. 'pm', tostring(b.pm), kind .. 'burst', tostring(b.burst),
      kind .. 'level', tostring(b.level), kind .. 'stamp', tostring(b.stamp))
  end
end
local function keep()
  redis.call('EXPIRE', key, tonumber(ARGV[3]))
end
"""

#: ARGV: headroom, share, ttl, requests per minute ('' none), tokens per minute, tokens, burst.
_TAKE = (
    _COMMON
    + """
local burst = tonumber(ARGV[7])
local function made(kind, limit)
  local b = load(kind)
  if limit and (not b or b.pm ~= limit or b.burst ~= burst) then
    b = {pm = limit, burst = burst, capacity = math.max(1, limit / 60 * burst * share),
         rate = limit * headroom / 60, stamp = now}
    b.level = b.capacity
  end
  return b
end
local requests, tokens = made('r', tonumber(ARGV[4])), made('t', tonumber(ARGV[5]))
local amount = tonumber(ARGV[6])
local wait = (tonumber(redis.call('HGET', key, 'paused')) or 0) - now
for _, pair in ipairs({{requests, 1}, {tokens, amount}}) do
  local b, want = pair[1], pair[2]
  if b then
    local short = math.min(want, b.capacity) - b.level
    if short > 0 and short / b.rate > wait then wait = short / b.rate end
  end
end
if wait <= 0 then
  if requests then requests.level = requests.level - 1 end
  if tokens then tokens.level = tokens.level - amount end
  wait = 0
end
save('r', requests)
save('t', tokens)
keep()
return tostring(wait)
"""
)

#: ARGV: headroom, share, ttl, tokens.
_GIVE = (
    _COMMON
    + """
local b = load('t')
if b then b.level = b.level + tonumber(ARGV[4]); save('t', b); keep() end
return 0
"""
)

#: ARGV: headroom, share, ttl, requests left ('' unknown), tokens left, seconds since.
_CAP = (
    _COMMON
    + """
local since = tonumber(ARGV[6])
for i, kind in ipairs({'r', 't'}) do
  local left = tonumber(ARGV[3 + i])
  local b = load(kind)
  if b and left then
    b.level = math.min(b.level, left + since * b.rate)
    save(kind, b)
  end
end
keep()
return 0
"""
)

#: ARGV: headroom, share, ttl, seconds.
_PAUSE = (
    _COMMON
    + """
local until_ = now + tonumber(ARGV[4])
local paused = tonumber(redis.call('HGET', key, 'paused')) or 0
if until_ > paused then redis.call('HSET', key, 'paused', tostring(until_)) end
local b = load('r')
if b then b.level = math.min(b.level, 0); save('r', b) end
keep()
return 0
"""
)


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


class RedisBudget:
    """A budget in the Redis database at ``url``, shared by every process that names the
    same ``url`` and ``name``. Needs the ``redis`` package (``pip install 'alloy[redis]'``).

    Each model's allowance is one hash, ``alloy:budget:<name>:<model>``, dropped by Redis
    ``ttl`` seconds after its last use. It pickles as its URL and name, so it can be handed
    to workers with the command.
    """

    def __init__(self, url: str, name: str = "default", *, ttl: float = 3600.0) -> None:
        try:
            import redis
        except ImportError:
            raise ConfigurationError(
                f"RedisBudget({url!r}) needs the redis package: pip install 'alloy[redis]'"
            ) from None
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"RedisBudget(name=...) must be a non-empty str, got {name!r}")
        self.url, self.name, self.ttl = url, name, ttl
        self._client: Any = redis.Redis.from_url(url)
        self._scripts = {
            step: self._client.register_script(source)
            for step, source in (
                ("take", _TAKE),
                ("give", _GIVE),
                ("cap", _CAP),
                ("pause", _PAUSE),
            )
        }

    def __repr__(self) -> str:
        return f"<RedisBudget {self.name!r}>"  # the URL may hold a password

    def __reduce__(self) -> tuple[Any, ...]:
        return (RedisBudget, (self.url, self.name), {"ttl": self.ttl})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.ttl = state["ttl"]

    def _run(self, step: str, model: str, *args: str) -> Any:
        key = f"alloy:budget:{self.name}:{model}"
        common = (repr(HEADROOM), repr(BURST_SHARE), str(max(1, int(self.ttl))))
        return self._scripts[step](keys=[key], args=[*common, *args])

    def take(self, model: str, limits: Limits, tokens: float, burst: float) -> float:
        wait = self._run(
            "take", model, _number(limits[0]), _number(limits[1]), _number(tokens), _number(burst)
        )
        return float(wait)

    def give(self, model: str, tokens: float) -> None:
        self._run("give", model, _number(tokens))

    def cap(self, model: str, left: Limits, since: float) -> None:
        self._run("cap", model, _number(left[0]), _number(left[1]), _number(since))

    def pause(self, model: str, seconds: float) -> None:
        self._run("pause", model, _number(seconds))


def check_budget(budget: Any) -> None:
    """A ConfigurationError unless ``budget`` is None or has the methods of a :class:`Budget`."""
    if budget is not None and not isinstance(budget, Budget):
        raise ConfigurationError(
            f"map(budget=...) takes an alloy.rows.Budget (LocalBudget, RedisBudget, "
            f"alloy.ray.RayBudget, or anything with take, give, cap and pause), "
            f"got {type(budget).__name__}"
        )
