"""Pacing: keep a run's model calls within the provider's requests and tokens per minute.

A :class:`Pacer` holds two token buckets (requests, tokens), refilled continuously at the
per-minute rate and holding ``burst`` seconds' worth, the way OpenAI and Anthropic describe their
own limits ("60,000 requests a minute may be enforced as 1,000 a second"). Before a call it
reserves one request and the tokens the call is estimated to use (its input, and ``max_tokens`` or
the output seen so far), waiting until both are there; after the call it settles the reservation
with the usage the provider reported. A 429 pauses every call of the run for its ``retry-after``
(or a backoff when it has none), halves the calls the run lets out at once (see
:class:`~alloy.rows._concurrency.AdaptiveConcurrency`; a provider that states no limits is
kept to its own that way), and the call is sent again once the pause is over.

The limits come from the ``rpm=`` / ``tpm=`` options when given, and else from the provider's own
rate-limit headers (``x-ratelimit-*``, ``anthropic-ratelimit-*``), which the adapters read onto
each reply (``Response.rate_limits``) and error (``ProviderError.rate_limits``): until the first
reply states them, one call at a time goes out. Each reply's ``remaining`` counts also pull the buckets down
when the provider has less left than the run thinks (another process shares the key).

:class:`PacedModel` puts a pacer in front of a model; the engine, the cache and the drivers see
an ordinary model.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from .._engine import backoff_ceiling
from .._model import Model
from .._types import Done, RateLimits, Request, Response, StreamEvent, Text
from .._wrapper import WrapperModel
from ..errors import ProviderError, RateLimitError
from ._concurrency import AdaptiveConcurrency

#: Output tokens assumed for a call before any reply was seen (and no ``max_tokens`` is set).
FIRST_OUTPUT_GUESS = 256
#: Of the stated rate, the share the run aims for; and of a burst's worth, the share it may
#: send at once. Network jitter bunches requests that left evenly, and the provider counts them
#: as they arrive: the burst's rest absorbs that.
HEADROOM = 0.97
BURST_SHARE = 0.8
#: Times a call that met a 429 is sent again, each after the run's pause, before the 429 is
#: the call's error (and the command's own ``retries`` take over). Many: a run that finds a
#: provider's undisclosed limit by its 429s meets about one for each call let through.
RATE_LIMIT_RESENDS = 32
#: A 429 asking for a longer wait (seconds) is a spent quota, not a rate: not waited out here.
LONGEST_PAUSE = 60.0


class _Bucket:
    """A per-minute allowance, refilled continuously, holding ``burst`` seconds' worth."""

    __slots__ = ("burst", "level", "per_minute", "stamp")

    def __init__(self, per_minute: float, burst: float, now: float) -> None:
        self.per_minute = per_minute
        self.burst = burst
        self.level = self.capacity
        self.stamp = now

    @property
    def capacity(self) -> float:
        return max(1.0, self.per_minute / 60 * self.burst * BURST_SHARE)

    @property
    def rate(self) -> float:
        return self.per_minute * HEADROOM / 60

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, amount: float) -> float:
        """Seconds until ``amount`` (at most a full bucket) is there; 0 when it is now."""
        short = min(amount, self.capacity) - self.level
        return 0.0 if short <= 0 else short / self.rate


def take_from_buckets(
    requests: _Bucket | None, tokens: _Bucket | None, amount: float, now: float, paused: float
) -> float:
    """Take one request and ``amount`` tokens from the buckets (None: not limited) and return
    0; or, when they do not hold that much yet or sending is ``paused`` for that many more
    seconds, take nothing and return the seconds to wait."""
    waits = [paused]
    for bucket, wanted in ((requests, 1.0), (tokens, amount)):
        if bucket is not None:
            bucket.refill(now)
            waits.append(bucket.wait(wanted))
    wait = max(waits)
    if wait > 0:
        return wait
    if requests is not None:
        requests.level -= 1
    if tokens is not None:
        tokens.level -= amount
    return 0.0


#: Requests and tokens per minute (None: not limited), or what is left of each.
Limits = tuple[float | None, float | None]


@runtime_checkable
class Budget(Protocol):
    """Where one model's allowance lives when several pacers draw on it."""

    def take(self, model: str, limits: Limits, tokens: float, burst: float) -> float:
        """Reserve one request and ``tokens`` for ``model`` now and return 0, or return the
        seconds to wait before asking again (nothing is reserved then). ``limits`` are the
        requests and tokens per minute the caller keeps to (None: not limited); a bucket is
        made full when its limit is first given or changes."""
        ...

    def give(self, model: str, tokens: float) -> None:
        """Tokens back (or, below zero, more taken): a call used fewer than it reserved."""
        ...

    def cap(self, model: str, left: Limits, since: float) -> None:
        """The provider said this much was left ``since`` seconds ago: nobody may have more."""
        ...

    def pause(self, model: str, seconds: float) -> None:
        """A 429: nobody sends for ``seconds``."""
        ...


@dataclass(frozen=True, slots=True)
class Ticket:
    """What one call reserved (its estimated tokens), and when it was let through."""

    tokens: float
    sent: float = 0.0


@dataclass
class PacerStats:
    """What a pacer did: calls let through, seconds spent waiting, 429s met."""

    calls: int = 0
    waited: float = 0.0
    rate_limited: int = 0


class Pacer:
    """The request and token allowance of one model, shared by every call of a run.

    ``rpm`` / ``tpm`` fix the limits; left None they are learned from the replies' headers
    (``learn=False`` turns that off: then only what was given applies). With a ``budget``, the
    allowance (and a 429's pause) is kept there, under ``name``, shared with other pacers.
    With ``concurrency``, at most that many calls are in flight at once, fewer after 429s
    (:attr:`concurrency` adapts).
    """

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        burst: float = 1.0,
        learn: bool = True,
        clock: Callable[[], float] = time.monotonic,
        budget: Budget | None = None,
        name: str = "",
        concurrency: int | None = None,
    ) -> None:
        self.clock = clock
        self.budget = budget
        self.name = name
        self.burst = burst
        self.fixed = (rpm, tpm)
        now = clock()
        self.requests = _Bucket(rpm, burst, now) if rpm else None
        self.tokens = _Bucket(tpm, burst, now) if tpm else None
        #: Until the first reply says whether the provider states limits, calls go one by one.
        self.probing = learn and rpm is None and tpm is None
        self.learn = learn
        self.paused_until = 0.0
        #: 429s since the last answer: the backoff of a 429 without ``retry-after`` grows with them.
        self.refusals = 0
        self.in_flight = 0
        self.concurrency = AdaptiveConcurrency(concurrency, clock) if concurrency else None
        self.output_guess = float(FIRST_OUTPUT_GUESS)
        self.stats = PacerStats()
        self._lock = threading.Lock()
        self._turn: asyncio.Lock | None = None
        self._turn_loop: asyncio.AbstractEventLoop | None = None

    # -- the limits --
    @property
    def limits(self) -> tuple[float | None, float | None]:
        """The requests and tokens per minute kept to now (None: not limited)."""
        return (
            self.requests.per_minute if self.requests else None,
            self.tokens.per_minute if self.tokens else None,
        )

    def observe(self, stated: RateLimits, sent: float | None = None) -> None:
        """Learn from the limits a reply stated: the limits (unless fixed), and what is left.

        What was left when the provider answered, plus what has refilled since the call was
        sent (no later than the provider counted), is the most there can be now: a bucket above
        that is pulled down to it, since someone else shares the allowance. Nearer, and the
        run would throw away what refilled while the reply travelled."""
        with self._lock:
            self.probing = False
            if not stated.known or not self.learn:
                return
            now = self.clock()
            since = now - sent if sent is not None else 0.0
            if self.budget is not None:
                left = (stated.requests.remaining, stated.tokens.remaining)
                self.budget.cap(self.name, left, since)
            for name, window, fixed in (
                ("requests", stated.requests, self.fixed[0]),
                ("tokens", stated.tokens, self.fixed[1]),
            ):
                bucket: _Bucket | None = getattr(self, name)
                if (
                    fixed is None
                    and window.limit
                    and (bucket is None or bucket.per_minute != window.limit)
                ):
                    bucket = _Bucket(window.limit, self.burst, now)
                    setattr(self, name, bucket)
                if bucket is not None and window.remaining is not None and self.budget is None:
                    bucket.refill(now)
                    bucket.level = min(bucket.level, window.remaining + since * bucket.rate)

    # -- reserving and settling --
    def estimate(self, request: Request) -> float:
        """The tokens ``request`` may use: about four characters a token of what it sends,
        plus ``max_tokens`` or the output seen so far."""
        sent = len(request.system or "")
        for message in request.messages:
            for part in message.parts:
                sent += len(part.text) if isinstance(part, Text) else 64
        if request.output is not None and request.output.schema is not None:
            sent += len(json.dumps(request.output.schema))
        for tool in request.tools:
            sent += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
        output = request.settings.max_tokens or self.output_guess
        return sent / 4 + output

    def _take(self, tokens: float) -> float:
        """Reserve a request and ``tokens`` now, or say how long to wait first."""
        with self._lock:
            now = self.clock()
            if self.probing and self.in_flight:
                return -1.0  # wait for the first reply to say what the limits are
            if self.concurrency is not None and not self.concurrency.allows(self.in_flight):
                return -1.0  # wait for a call to finish
            waits = [self.paused_until - now]
            if self.budget is not None:  # the allowance is kept there, not in the buckets
                if waits[0] <= 0:
                    waits.append(self.budget.take(self.name, self.limits, tokens, self.burst))
                return self._taken(max(waits))
            return self._taken(take_from_buckets(self.requests, self.tokens, tokens, now, waits[0]))

    def _taken(self, wait: float) -> float:
        if wait > 0:
            return wait
        self.in_flight += 1
        self.stats.calls += 1
        return 0.0

    async def acquire(self, request: Request) -> Ticket:
        """Wait (in turn with the run's other calls) until ``request`` may go out."""
        tokens = self.estimate(request)
        loop = asyncio.get_running_loop()
        if self._turn is None or self._turn_loop is not loop:
            self._turn, self._turn_loop = asyncio.Lock(), loop
        async with self._turn:
            started = self.clock()
            while (wait := self._take(tokens)) != 0:
                await asyncio.sleep(wait if wait > 0 else 0.005)
            self.stats.waited += self.clock() - started
        return Ticket(tokens, self.clock())

    def acquire_sync(self, request: Request) -> Ticket:
        """:meth:`acquire` for a blocking call."""
        tokens = self.estimate(request)
        started = self.clock()
        while (wait := self._take(tokens)) != 0:
            time.sleep(wait if wait > 0 else 0.005)
        self.stats.waited += self.clock() - started
        return Ticket(tokens, self.clock())

    def settle(self, ticket: Ticket, response: Response | None) -> None:
        """The call is over: give back what it reserved beyond what it used (a failed call
        keeps its reservation: the provider counted it too)."""
        with self._lock:
            self.in_flight -= 1
            self.probing = False  # a reply without limits in its headers: the provider states none
            if response is None:
                return
            self.refusals = 0
            if self.concurrency is not None:
                self.concurrency.succeeded()
            usage = response.usage
            if self.budget is not None and usage.total_tokens:
                self.budget.give(self.name, ticket.tokens - usage.total_tokens)
            elif self.tokens is not None and usage.total_tokens:
                self.tokens.level += ticket.tokens - usage.total_tokens
            if usage.output_tokens:
                self.output_guess = 0.8 * self.output_guess + 0.2 * usage.output_tokens

    def rate_limited(self, error: RateLimitError, sent: float | None = None) -> None:
        """A 429 on a call sent at ``sent``: nobody in the run sends until its ``retry-after``
        (else a backoff growing with the 429s met since the last answer) has passed, and fewer
        calls go at once from then on."""
        with self._lock:
            self.stats.rate_limited += 1
            if error.retry_after is not None:
                wait = error.retry_after
            else:
                wait = backoff_ceiling(self.refusals)
            self.refusals += 1
            if self.concurrency is not None:
                self.concurrency.rate_limited(self.clock() if sent is None else sent)
            self.paused_until = max(self.paused_until, self.clock() + max(0.0, wait))
            if self.budget is not None:
                self.budget.pause(self.name, max(0.0, wait))
            if self.requests is not None:
                self.requests.level = min(self.requests.level, 0.0)


class PacedModel(WrapperModel):
    """``model`` whose every call first waits for ``pacer`` and then settles with it; a call
    that meets a 429 is sent again once the run's pause is over (see :class:`_Resends`)."""

    def __init__(self, model: Model, pacer: Pacer) -> None:
        super().__init__(model)
        self.pacer = pacer

    def __repr__(self) -> str:
        return f"<paced {self.wrapped!r}>"

    def request(self, request: Request) -> Response:
        resends = _Resends(self.pacer, request)
        while True:
            try:
                with _PacedCall(self.pacer, self.pacer.acquire_sync(resends.request)) as call:
                    response = self.wrapped.request(resends.request)
                    call.done = response
                return response
            except RateLimitError as error:
                if not resends.again(error):
                    raise

    async def arequest(self, request: Request) -> Response:
        resends = _Resends(self.pacer, request)
        while True:
            try:
                with _PacedCall(self.pacer, await self.pacer.acquire(resends.request)) as call:
                    response = await self.wrapped.arequest(resends.request)
                    call.done = response
                return response
            except RateLimitError as error:
                if not resends.again(error):
                    raise

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        resends = _Resends(self.pacer, request)
        while True:
            began = False
            try:
                with _PacedCall(self.pacer, self.pacer.acquire_sync(resends.request)) as call:
                    for event in self.wrapped.stream(resends.request):
                        if isinstance(event, Done):
                            call.done = event.response
                        began = True
                        yield event
                return
            except RateLimitError as error:
                if began or not resends.again(error):
                    raise

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        resends = _Resends(self.pacer, request)
        while True:
            began = False
            try:
                with _PacedCall(self.pacer, await self.pacer.acquire(resends.request)) as call:
                    async for event in self.wrapped.astream(resends.request):
                        if isinstance(event, Done):
                            call.done = event.response
                        began = True
                        yield event
                return
            except RateLimitError as error:
                if began or not resends.again(error):
                    raise


class _Resends:
    """The 429s of one call, each waited out (the pacer's pause) and the call sent again: up
    to :data:`RATE_LIMIT_RESENDS` times, never for a 429 that is not transient (no credit
    left) or asks for more than :data:`LONGEST_PAUSE`, and never past the request's
    ``timeout`` (which the engine shortens to the call's deadline) counted from the first 429:
    a re-sent request gets what is left of it."""

    def __init__(self, pacer: Pacer, request: Request) -> None:
        self.pacer = pacer
        self.request = request
        self.count = 0
        self.deadline: float | None = None

    def again(self, error: RateLimitError) -> bool:
        """Whether to send the call again after ``error`` (with :attr:`request`)."""
        hint = error.retry_after
        if (
            not error.transient
            or self.count >= RATE_LIMIT_RESENDS
            or (hint is not None and hint > LONGEST_PAUSE)
        ):
            return False
        timeout = self.request.settings.timeout
        if timeout is not None:
            now = self.pacer.clock()
            if self.deadline is None:
                self.deadline = now + timeout
            left = self.deadline - max(now, self.pacer.paused_until)
            if left <= 0:
                return False
            settings = replace(self.request.settings, timeout=left)
            self.request = replace(self.request, settings=settings)
        self.count += 1
        return True


class _PacedCall:
    """One model call under a ticket: the rate limits its reply (or error) stated go to the
    pacer, a 429 pauses the run, and the ticket settles with the call's reply (``done``), or
    with none when the call ended without one (it failed, or its stream was left unfinished)."""

    def __init__(self, pacer: Pacer, ticket: Ticket) -> None:
        self.pacer = pacer
        self.ticket = ticket
        self.done: Response | None = None

    def __enter__(self) -> _PacedCall:
        return self

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        if self.done is not None:
            stated = self.done.rate_limits
        else:
            stated = error.rate_limits if isinstance(error, ProviderError) else None
        if stated is not None:
            self.pacer.observe(stated, self.ticket.sent)
        if isinstance(error, RateLimitError):
            self.pacer.rate_limited(error, self.ticket.sent)
        self.pacer.settle(self.ticket, self.done)
