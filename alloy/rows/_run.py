"""The run itself: rows in from any iterable, calls paced and bounded, records out.

One async loop does everything. It reads the input lazily and keeps at most ``window`` rows
between the oldest row not yet handed out and the newest started, so memory stays flat for an
input of any length; ``concurrency`` of them call the model at once, through the command's own
engine (re-asks, checks, rails, tools and the response cache apply per row exactly as for a
single call). Rows finished in an earlier run come from the checkpoint without a call.

A ``ConfigurationError`` stops the run at once (it would fail every row); any other failure
fails its row only, unless ``errors="raise"``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._call import NO_DEPS, Prepared
from .._cost_cap import Purse, capped_runtime
from .._types import Result, Usage
from .._wrapper import unwrapped
from ..errors import CommandError, ConfigurationError
from ..events import Event, MapFinished, RowFinished, new_call_id
from ..pricing import cost as price
from ._budget import check_budget
from ._checkpoint import Checkpoint, Stored, plain_json
from ._inputs import RowInputError, bind, identity, row_key, run_identity
from ._pacer import PacedModel, Pacer
from ._progress import Progress
from ._records import BadRow, Failed, Ok, Row, Summary

Errors = Literal["collect", "raise"]


@dataclass(frozen=True)
class Settings:
    """How a run over rows goes: ``map()``'s and ``amap()``'s keywords as one object, given
    as ``cmd.map(rows, settings=...)``; see :meth:`alloy.Command.map` for each. Checked when
    it is made (a bad value is a ConfigurationError)."""

    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    as_completed: bool = False
    errors: Errors = "collect"
    progress: bool | None = None
    checkpoint: str | Path | None = None
    retry_failed: bool = True
    total: int | None = None
    #: What every row's call is given as ``deps=``; left out, the calls are given none.
    deps: Any = NO_DEPS
    #: ``online``, ``batch`` (the provider's batch API) or ``auto`` (batch for a run of at
    #: least ``batch_min_rows`` rows when the provider has one and the command no tools).
    mode: Literal["online", "batch", "auto"] = "online"
    batch_min_rows: int = 1000
    #: Seconds between looks at running batch jobs.
    poll_interval: float = 30.0
    #: What becomes of rows a batch did not answer: run ``online``, or another ``batch``
    #: (``batch_rounds`` times at most, then online).
    batch_retry: Literal["online", "batch"] = "online"
    batch_rounds: int = 1
    budget: Any = None
    #: US dollars the whole run may spend (see ``alloy._cost_cap``); None: no cap.
    cost_budget: float | None = None

    def __post_init__(self) -> None:
        check_budget(self.budget)
        check_cost_budget(self.cost_budget, self.mode)
        if (
            not isinstance(self.concurrency, int)
            or isinstance(self.concurrency, bool)
            or (self.concurrency < 1)
        ):
            raise ConfigurationError(
                f"map(concurrency=...) must be a whole number of at least 1, got {self.concurrency!r}"
            )
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not value > 0
                or value == float("inf")
            ):
                raise ConfigurationError(
                    f"map({name}=...) must be a number above 0 (per minute), got {value!r}"
                )
        if self.errors not in ("collect", "raise"):
            raise ConfigurationError(
                f"map(errors=...) must be 'collect' or 'raise', got {self.errors!r}"
            )
        if self.mode not in ("online", "batch", "auto"):
            raise ConfigurationError(
                f"map(mode=...) must be 'online', 'batch' or 'auto', got {self.mode!r}"
            )
        if self.batch_retry not in ("online", "batch"):
            raise ConfigurationError(
                f"map(batch_retry=...) must be 'online' or 'batch', got {self.batch_retry!r}"
            )
        if not (isinstance(self.poll_interval, (int, float)) and self.poll_interval >= 0):
            raise ConfigurationError(
                f"map(poll_interval=...) must be seconds, 0 or more, got {self.poll_interval!r}"
            )

    @property
    def has_deps(self) -> bool:
        """Whether every row's call is given ``deps=``."""
        return self.deps is not NO_DEPS

    @property
    def window(self) -> int:
        """Rows started beyond the oldest one not yet handed out: enough to keep every slot
        busy while one row is slow, few enough that memory does not grow with the input."""
        return max(2 * self.concurrency, self.concurrency + 16)


@dataclass
class _Tally:
    """The counts of a run so far: the first fields of its :class:`Summary`."""

    rows: int = 0
    ok: int = 0
    failed: int = 0
    resumed: int = 0
    invalidated: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0

    def add(self, row: Row[Any]) -> None:
        self.rows += 1
        if row.ok:
            self.ok += 1
        else:
            self.failed += 1
        if row.resumed:
            self.resumed += 1
            return
        self.usage = self.usage + row.usage
        if self.cost is not None:
            self.cost = (
                None
                if row.cost is None and row.usage.total_tokens
                else self.cost + (row.cost or 0.0)
            )


@dataclass
class _Setup:
    #: The run's calls: the command's, its models behind the run's pacers (and purse).
    prepared: Prepared
    reader: Any  # the output type that renders values into the checkpoint and reads them back
    run: str  # what every row key of the run shares
    signature: inspect.Signature
    checkpoint: Checkpoint | None
    total: int | None
    progress: Progress
    handlers: Sequence[Any]

    @property
    def plan(self) -> Any:
        return self.prepared.plan


class Run:
    """One run of a command's prepared calls over rows; iterate it (``async for``) for the
    records."""

    def __init__(self, prepared: Prepared, inputs: Any, settings: Settings) -> None:
        self.prepared = prepared
        self.spec = prepared.spec
        self.inputs = inputs
        self.settings = settings
        self.summary: Summary | None = None
        self.run_id = new_call_id()
        self._tally = _Tally()
        self._pacers: dict[str, Pacer] = {}
        self._purse = Purse(settings.cost_budget, "run") if settings.cost_budget else None
        #: Rows just ended as not started (the cost budget was reached), until recorded.
        self._not_started: set[int] = set()
        self._started = 0.0

    # -- the loop --
    async def rows(self) -> AsyncGenerator[Row[Any], None]:
        settings = self.settings
        setup = self._setup()
        prepared, reader, checkpoint = setup.prepared, setup.reader, setup.checkpoint
        semaphore = asyncio.Semaphore(settings.concurrency)
        finished: asyncio.Queue[tuple[int, Row[Any] | BaseException]] = asyncio.Queue()
        tasks: dict[int, asyncio.Task[None]] = {}  # by row index, until its record is read
        held: dict[int, Row[Any]] = {}
        source = _rows_of(self.inputs)
        started = given = 0
        exhausted = False

        async def call(
            index: int, item: Any, args: tuple[Any, ...], kwargs: dict[str, Any], key: str
        ) -> None:
            try:
                async with semaphore:
                    row = self._unstarted(index, item, key) or await self._call(
                        index, item, key, prepared.arun(args, kwargs)
                    )
                if checkpoint is not None and not self._stopped_by_cap(row):
                    _record(checkpoint, key, index, row, reader)
                outcome: Row[Any] | BaseException = row
            except ConfigurationError as error:
                outcome = error
            except asyncio.CancelledError:
                raise
            except BaseException as error:  # a bug below us: stop the run, saying what
                outcome = error
            finished.put_nowait((index, outcome))

        try:
            while True:
                while not exhausted and (
                    (len(tasks) if settings.as_completed else started - given) < settings.window
                ):
                    try:
                        item = await anext(source)
                    except StopAsyncIteration:
                        exhausted = True
                        break
                    index, started = started, started + 1
                    ready = self._row_call(
                        index, item, setup.signature, setup.run, checkpoint, reader
                    )
                    if isinstance(ready, (Ok, Failed)):
                        finished.put_nowait((index, ready))
                        continue
                    tasks[index] = asyncio.ensure_future(call(index, item, *ready))
                if exhausted and given == started:
                    break
                index, outcome = await finished.get()
                tasks.pop(index, None)
                if isinstance(outcome, BaseException):
                    raise outcome
                held[index] = outcome
                for row in self._release(held, given, settings.as_completed):
                    given += 1
                    await self._hand_out(row, setup)
                    yield row
        finally:
            for task in tasks.values():
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks.values(), return_exceptions=True)
            self._close(setup)
        await self._end(setup)

    def _setup(self) -> _Setup:
        """What every row of the run shares, made once when the run starts."""
        settings = self.settings
        spec = self.spec
        prepared = self.prepared.wrapped(self._paced)
        if self._purse is not None:  # checked before the pacer waits, and with prices known
            capped = capped_runtime(prepared.runtime, self._purse, "map(cost_budget=...)")
            prepared = prepared.with_runtime(capped)
        plan, output = prepared.plan, spec.output
        checkpoint = Checkpoint(settings.checkpoint) if settings.checkpoint is not None else None
        if checkpoint is not None:
            checkpoint.note("command", identity(spec.fn))
            checkpoint.note("model", plan.model)
        total = settings.total if settings.total is not None else _length(self.inputs)
        self._started = time.monotonic()
        return _Setup(
            prepared=prepared,
            reader=getattr(output, "inner", output),
            run=run_identity(identity(spec.fn), plan.model, output.schema, vars(plan.config)),
            signature=spec.signature,
            checkpoint=checkpoint,
            total=total,
            progress=Progress(total, settings.progress, spec.name),
            handlers=prepared.runtime.handlers,  # global handlers, then the command's
        )

    async def _hand_out(self, row: Row[Any], setup: _Setup) -> None:
        """Count a row that is about to be handed out, show it, and tell the listeners; with
        ``errors="raise"`` a failed row's error is raised instead."""
        tally = self._tally
        tally.add(row)
        setup.progress.advance(tally.failed, tally.usage.total_tokens, tally.cost)
        if setup.handlers:
            await self._tell(
                setup.handlers,
                RowFinished(
                    self.spec.name,
                    self.run_id,
                    row=row,
                    done=tally.rows,
                    failed=tally.failed,
                    total=setup.total,
                    elapsed=time.monotonic() - self._started,
                    usage=tally.usage,
                    cost=tally.cost,
                ),
            )
        if not row.ok and self.settings.errors == "raise":
            assert isinstance(row, Failed)
            raise row.error

    def _close(self, setup: _Setup) -> None:
        if setup.checkpoint is not None:
            setup.checkpoint.close()
        setup.progress.close()
        self.summary = self._summary()

    async def _end(self, setup: _Setup) -> None:
        if setup.handlers:
            await self._tell(
                setup.handlers, MapFinished(self.spec.name, self.run_id, summary=self.summary)
            )

    def _release(
        self, held: dict[int, Row[Any]], given: int, any_order: bool
    ) -> Iterator[Row[Any]]:
        """The rows that may be handed out now: any finished one, or the next ones in order."""
        if any_order:
            while held:
                yield held.pop(next(iter(held)))
            return
        while given in held:
            yield held.pop(given)
            given += 1

    def _row_call(
        self,
        index: int,
        item: Any,
        signature: inspect.Signature,
        run: str,
        checkpoint: Checkpoint | None,
        reader: Any,
    ) -> Row[Any] | tuple[tuple[Any, ...], dict[str, Any], str]:
        """A row's arguments and key, or its record when there is nothing to call."""
        if isinstance(item, BadRow):
            where = f"line {item.line}: " if item.line is not None else ""
            return Failed(index, "", item, RowInputError(where + item.reason))
        try:
            args, kwargs = bind(signature, item, self.spec.name, self.spec.fn)
            key = row_key(run, args, kwargs)
        except RowInputError as error:
            return Failed(index, "", item, error)
        if checkpoint is not None:
            stored = checkpoint.get(key)
            if stored is not None and (stored.ok or not self.settings.retry_failed):
                try:
                    return _resumed(stored, index, key, item, reader)
                except Exception:  # its value no longer validates (a check tightened): run it
                    self._tally.invalidated += 1
        if self.settings.has_deps and not self.spec.own_deps:
            kwargs = {**kwargs, "deps": self.settings.deps}
        return args, kwargs, key

    async def _call(
        self, index: int, item: Any, key: str, call: Coroutine[Any, Any, Result[Any]]
    ) -> Row[Any]:
        """The record of the row whose ``call`` this is: a ConfigurationError stops the run,
        any other failure fails the row."""
        try:
            outcome: Result[Any] | Exception = await call
        except ConfigurationError:
            raise
        except Exception as error:  # the prompt function, a tool or the model failed this row
            outcome = error
        return self._row(index, key, item, outcome)

    def _row(self, index: int, key: str, item: Any, outcome: Result[Any] | Exception) -> Row[Any]:
        """A row's record: its call's Result, or what failed it."""
        if isinstance(outcome, CommandError):
            usage = outcome.usage or Usage()
            cost = _cost(usage, self.prepared.plan.model)
            return Failed(index, key, item, outcome, usage, outcome.attempts, cost)
        if isinstance(outcome, Exception):
            return Failed(index, key, item, outcome)
        transcript = outcome.transcript
        return Ok(
            index, key, item, outcome.value, transcript.usage, transcript.attempts, outcome.cost
        )

    def _unstarted(self, index: int, item: Any, key: str) -> Failed | None:
        """The record of a row not started because the run's cost budget was reached."""
        purse = self._purse
        if purse is None or not purse.reached:
            return None
        self._not_started.add(index)
        return Failed(index, key, item, purse.unstarted(self.spec.name), cost=0.0)

    def _stopped_by_cap(self, row: Row[Any]) -> bool:
        """Whether the run's cost budget stopped ``row``: it is kept out of the checkpoint, so
        that the same map run again runs it (whatever ``retry_failed`` says)."""
        if row.index in self._not_started:
            self._not_started.discard(row.index)
            return True
        purse = self._purse
        return purse is not None and isinstance(row, Failed) and purse.stopped(row.error)

    def _paced(self, model: Any) -> PacedModel:
        """``model`` behind the run's pacer for it (one per model: each has its own limits).
        Only a provider that states its limits in reply headers is waited on to learn them."""
        pacer = self._pacers.get(model.name)
        if pacer is None:
            learn = getattr(unwrapped(model), "states_rate_limits", False) is True
            pacer = Pacer(
                self.settings.rpm,
                self.settings.tpm,
                learn=learn,
                budget=self.settings.budget,
                name=model.name,
                concurrency=self.settings.concurrency,
            )
            self._pacers[model.name] = pacer
        return PacedModel(model, pacer)

    def _summary(self) -> Summary:
        return Summary(
            **vars(self._tally),  # rows, ok, failed, resumed, invalidated, usage, cost
            seconds=time.monotonic() - self._started if self._started else 0.0,
            waited=sum(p.stats.waited for p in self._pacers.values()),
            rate_limited=sum(p.stats.rate_limited for p in self._pacers.values()),
            limits={name: p.limits for name, p in self._pacers.items()},
        )

    async def _tell(self, handlers: Any, event: Event) -> None:
        from ..events import logger

        for handler, kinds in handlers:
            if kinds and not isinstance(event, kinds):
                continue
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception(
                    "alloy event handler %r failed on %s", handler, type(event).__name__
                )


def _record(checkpoint: Checkpoint, key: str, index: int, row: Row[Any], reader: Any) -> None:
    if not key:
        return  # a row whose input did not fit has no key to find it by
    if row.ok:
        try:
            value = reader.render(row.value)
        except Exception as error:  # a value its own type does not read back, say
            if row.value is not None:  # handed out all the same; a resumed run asks again
                from ..events import logger

                logger.warning("alloy: row %d is not kept in the checkpoint: %s", index, error)
                return
            value = ""  # output=None: nothing to render, and None is what "" reads back as
        checkpoint.put(
            key,
            index,
            value=value,
            plain=plain_json(row.value),
            usage=row.usage,
            attempts=row.attempts,
            cost=row.cost,
        )
    else:
        assert isinstance(row, Failed)
        checkpoint.put(
            key, index, error=row.error, usage=row.usage, attempts=row.attempts, cost=row.cost
        )


def _resumed(stored: Stored, index: int, key: str, item: Any, reader: Any) -> Row[Any]:
    """A row finished in an earlier run, read back (and validated again) from the checkpoint."""
    if stored.ok:
        value = reader.parse(stored.value or "")
        return Ok(index, key, item, value, stored.usage, stored.attempts, stored.cost, resumed=True)
    error = ResumedFailure(f"{stored.error_type}: {stored.error}")
    return Failed(index, key, item, error, stored.usage, stored.attempts, stored.cost, resumed=True)


class ResumedFailure(Exception):
    """A row that failed in an earlier run, kept as failed (``retry_failed=False``): the
    original error's type and message."""


def check_cost_budget(cost_budget: Any, mode: str) -> None:
    """A ConfigurationError unless ``cost_budget`` is None or US dollars above 0, for a run
    whose requests can be checked one by one (not a batch)."""
    if cost_budget is None:
        return
    if (
        isinstance(cost_budget, bool)
        or not isinstance(cost_budget, (int, float))
        or not 0 < cost_budget < float("inf")
    ):
        raise ConfigurationError(
            f"map(cost_budget=...) must be US dollars above 0, got {cost_budget!r}"
        )
    if mode == "batch":
        raise ConfigurationError(
            "map(cost_budget=...) caps a run's requests one by one, and a batch sends them all "
            "at once: use mode='online' with a cost budget"
        )


def _cost(usage: Usage, model: str) -> float | None:
    return price(usage, model) if usage.total_tokens else 0.0


def _length(inputs: Any) -> int | None:
    try:
        return len(inputs)
    except TypeError:
        return None


async def _rows_of(inputs: Any) -> AsyncIterator[Any]:
    """The input's rows, one at a time, from an iterable or an async iterable."""
    if isinstance(inputs, AsyncIterable):
        async for item in inputs:
            yield item
        return
    if isinstance(inputs, (str, bytes, Mapping)) or not isinstance(inputs, Iterable):
        raise ConfigurationError(
            f"map() takes an iterable of rows (a list, a generator, a file's lines...), "
            f"got {type(inputs).__name__}"
        )
    for item in inputs:
        yield item
