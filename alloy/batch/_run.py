"""A run over rows through the provider's batch API (``cmd.map(rows, mode="batch")``).

1. Every row is read, bound and keyed as in an online run; rows finished in an earlier run come
   from the checkpoint, and rows already in a submitted batch are not submitted again.
2. Each remaining row's first request is made exactly as its online call would make it: the
   row's call is started from the run's ``Prepared`` and stepped to its first ``CallModel``
   (input rails included), whose request the adapter builds into the wire body. Rows with the
   same key share one request.
3. The requests go out in batches no larger than the provider allows, each recorded in the
   checkpoint before it is submitted and again with its job id after, so a process killed at any
   point finds its jobs instead of submitting them twice.
4. The jobs are polled until they end; each answer is matched to its rows by custom id (never by
   position) and sent to a fresh call of the row, stepped again to its first request
   (``engine.send(reply)``), so the output type, checks and re-asks apply as online: an answer
   that fails validation is re-asked online. A request that
   failed, expired or was cancelled runs online (``batch_retry="online"``) or goes in a
   follow-up batch (``"batch"``, up to ``batch_rounds`` rounds, then online).
5. ``alloy batch results`` reads the answers of ended jobs from another process in the same
   way (:meth:`BatchRun.read_ended`), each row's call remade from the arguments its
   submission recorded, calling no model: a row that needs a call is left to the run.

Batched tokens cost half the online price: each row's ``cost`` prices its batched turn so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_core import to_jsonable_python

from .._engine import CallModel
from .._types import Request, Response, Result
from .._wrapper import unwrapped
from ..errors import CommandError, ConfigurationError
from ..events import BatchFinished, BatchSubmitted
from ..pricing import cost as price
from ..rows._checkpoint import Checkpoint
from ..rows._inputs import KEYED_OPTIONS, row_key
from ..rows._records import Args, Failed, Ok, Row
from ..rows._run import Run, _record, _rows_of, _Setup
from ._lookup import BATCH_PRICE, BatchAPI, Missed, Outcome, batch_api_for


@dataclass
class _Pending:
    """The rows of one key: their places, inputs and arguments."""

    indices: list[int]
    items: list[Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class _Batching:
    """What the steps of one batch run share: its setup and batch API, the rows waiting for an
    answer by key, and the finished rows held until their turn to be handed out."""

    setup: _Setup
    api: BatchAPI
    checkpoint: Checkpoint
    pending: dict[str, _Pending] = field(default_factory=dict)
    held: dict[int, Row[Any]] = field(default_factory=dict)


class BatchRun(Run):
    """One run over rows through a batch API; iterate it (``async for``) for the records."""

    async def rows(self) -> AsyncGenerator[Row[Any], None]:
        settings = self.settings
        temporary = None
        if settings.checkpoint is None:  # jobs must be recorded somewhere while they run
            folder = tempfile.mkdtemp(prefix="alloy-batch-")
            temporary = os.path.join(folder, "run.sqlite")
            self.settings = replace(settings, checkpoint=temporary)
        setup = self._setup()
        checkpoint = setup.checkpoint
        assert checkpoint is not None
        given = 0
        try:
            api = batch_api_for(unwrapped(setup.prepared.runtime.model))
            batching = _Batching(setup, api, checkpoint)
            pending, held = batching.pending, batching.held
            self._note(setup, checkpoint)
            if self.spec.tools:
                raise ConfigurationError(
                    f"mode='batch': {self.spec.name} has tools, and a batched request cannot "
                    "run tools between its turns; use mode='online'"
                )
            async for index, item in _numbered(self.inputs):
                ready = self._row_call(
                    index, item, setup.signature, setup.run, checkpoint, setup.reader
                )
                if isinstance(ready, (Ok, Failed)):
                    held[index] = ready
                    continue
                args, kwargs, key = ready
                found = pending.get(key)
                if found is None:
                    pending[key] = _Pending([index], [item], args, kwargs)
                else:
                    found.indices.append(index)
                    found.items.append(item)
            for row in self._release(held, given, settings.as_completed):
                given += 1
                await self._hand_out(row, setup)
                yield row
            await self._recover(batching)
            await self._submit(batching)
            rounds = 0
            while pending:
                finished = await self._collect(batching)
                for row in self._release(held, given, settings.as_completed):
                    given += 1
                    await self._hand_out(row, setup)
                    yield row
                if not pending:
                    break
                if self._all_read(checkpoint):  # what is left, its batches did not answer
                    rounds += 1
                    await self._retry(batching, rounds)
                    continue
                if not finished:
                    await asyncio.sleep(settings.poll_interval)
            for row in self._release(held, given, settings.as_completed):
                given += 1
                await self._hand_out(row, setup)
                yield row
        finally:
            self._close(setup)
            if temporary is not None:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(temporary + suffix):
                        os.remove(temporary + suffix)
                os.rmdir(os.path.dirname(temporary))
        await self._end(setup)

    def _note(self, setup: _Setup, checkpoint: Checkpoint) -> None:
        """What ``alloy batch results`` needs to read this run's answers in another process:
        where the command is defined, and the options its rows' keys were made with."""
        fn = self.spec.fn
        checkpoint.note("target", f"{fn.__module__}:{fn.__qualname__}")
        config = vars(setup.plan.config)
        checkpoint.note("options", {name: config.get(name) for name in KEYED_OPTIONS})

    async def read_ended(self) -> Counter[str]:
        """Read the answers of the jobs that have ended into the checkpoint, each through its
        row's engine as a run reads it, but calling no model (``alloy batch results``). A row
        that needs a call (its batch did not answer it, or its answer is re-asked) is left for
        the run. Returns why rows were left, counted."""
        setup = self._setup()
        checkpoint = setup.checkpoint
        assert checkpoint is not None
        left: Counter[str] = Counter()
        try:
            api = batch_api_for(unwrapped(setup.prepared.runtime.model))
            batching = _Batching(setup, api, checkpoint)
            for tag, _, _, job, state, requests, intended in checkpoint.batches():
                keys = checkpoint.unfinished(tag)
                if not keys:
                    continue
                if job is None:  # the run died before recording it: the provider may have it
                    job = await asyncio.to_thread(api.find, tag, requests, intended - 5)
                    if job is not None:
                        checkpoint.submitted(tag, job)
                if job is None or state == "read":
                    left["its batch did not answer it" if job else "never submitted"] += len(keys)
                    continue
                status = await asyncio.to_thread(api.status, job)
                if status.state not in ("done", "cancelled"):
                    left[f"its job is {status.state}"] += len(keys)
                    continue
                outcomes = dict(await asyncio.to_thread(_read_all, api, job))
                for key in keys:
                    row = await self._read_one(batching, key, outcomes.get(key))
                    if isinstance(row, str):
                        left[row] += 1
                    else:
                        _record(checkpoint, key, row.index, row, setup.reader)
        finally:
            self._close(setup)
        return left

    async def _read_one(
        self, batching: _Batching, key: str, outcome: Outcome | None
    ) -> Row[Any] | str:
        """The row of ``key`` with its batch answer read, or why it needs the run."""
        setup, stored = batching.setup, batching.checkpoint.batch_input(key)
        if stored is None:
            return "its inputs are not in the checkpoint"
        if outcome is None or isinstance(outcome, Missed):
            return "its batch did not answer it"
        position, arguments = stored
        given = json.loads(arguments)
        args, kwargs = tuple(given["args"]), dict(given["kwargs"])
        if row_key(setup.run, args, kwargs) != key:
            return "the command here is not the one the run called"
        try:
            call = await setup.prepared.abegin(args, kwargs)
            first = await call.astep()
        except ConfigurationError:
            raise
        except Exception:  # its prompt function or an input rail failed
            return "its call stopped before it read the answer"
        if not isinstance(first, CallModel):
            return "its call stopped before it read the answer"
        reply = _reply(batching.api, outcome, first.request)
        if reply is None:
            call.engine.close()
            return "its answer needs a call online"
        try:
            end: Result[Any] | CallModel | Exception = await call.astep(reply)
        except ConfigurationError:
            raise
        except Exception as error:  # the answer failed the row (a check, a rail...)
            end = error
        if isinstance(end, CallModel):  # a re-ask, a tool round: a call the run makes
            call.engine.close()
            return "its answer needs a call online"
        return self._discounted(self._row(position, key, Args(*args, **kwargs), end), reply)

    # -- submitting --
    async def _submit(
        self,
        batching: _Batching,
        keys: list[str] | None = None,
        round_: int = 0,
        given_tag: str | None = None,
    ) -> None:
        """Send the rows of ``keys`` (by default every pending row not yet in a batch);
        ``given_tag`` names the one batch they go in (intended before, never submitted)."""
        setup, api, pending, checkpoint = (
            batching.setup,
            batching.api,
            batching.pending,
            batching.checkpoint,
        )
        if keys is None:
            keys = [key for key in pending if checkpoint.batch_of(key) is None]
        requests: list[tuple[str, dict[str, Any]]] = []
        for key in keys:
            request = await self._first_request(setup, pending[key])
            if isinstance(request, BaseException):
                rows = pending.pop(key)
                self._finish(
                    batching, key, rows, Failed(rows.indices[0], key, rows.items[0], request)
                )
                continue
            requests.append((key, api.model.build(request, stream=False)))
        chunks = [requests] if given_tag is not None else list(_chunks(requests, api))
        for chunk in chunks:
            if not chunk:
                continue
            ids = [custom_id for custom_id, _ in chunk]
            tag = given_tag or _tag(setup.run, ids, round_)
            inputs = {key: self._input(pending[key]) for key in ids}
            checkpoint.intend(tag, api.name, setup.plan.model, ids, inputs)
            job = await asyncio.to_thread(api.submit, chunk, tag)
            checkpoint.submitted(tag, job)
            if setup.handlers:
                await self._tell(
                    setup.handlers,
                    BatchSubmitted(
                        self.spec.name,
                        self.run_id,
                        job=job,
                        provider=api.name,
                        requests=len(chunk),
                    ),
                )
        self._show(setup, checkpoint)

    def _input(self, rows: _Pending) -> tuple[int, str]:
        """The row's position and its arguments as JSON (without ``deps``), for ``alloy
        batch results`` to remake its call (what JSON cannot hold is kept as its repr)."""
        kwargs = dict(rows.kwargs)
        if self.settings.has_deps and not self.spec.own_deps:
            kwargs.pop("deps", None)
        given = {"args": list(rows.args), "kwargs": kwargs}
        try:
            arguments = to_jsonable_python(given, fallback=repr, serialize_unknown=True)
        except ValueError:  # bytes that are not text (results then leaves the row to the run)
            arguments = to_jsonable_python(
                given, fallback=repr, serialize_unknown=True, bytes_mode="base64"
            )
        return rows.indices[0], json.dumps(arguments, ensure_ascii=True)

    async def _recover(self, batching: _Batching) -> None:
        """Batches an earlier process meant to submit but did not record as submitted: the
        provider has the job (it died after submitting) or it does not (before)."""
        checkpoint = batching.checkpoint
        for tag, _, _, job, _, requests, intended in checkpoint.batches():
            if job is not None:
                continue
            found = await asyncio.to_thread(batching.api.find, tag, requests, intended - 5)
            if found is not None:
                checkpoint.submitted(tag, found)
                continue
            keys = [key for key in batching.pending if checkpoint.batch_of(key) == tag]
            await self._submit(batching, keys, given_tag=tag)

    async def _first_request(self, setup: _Setup, rows: _Pending) -> Request | BaseException:
        """The row's first model request, made by its call as the online call would make it
        (stepped to its first ``CallModel``, told to nobody: the call the batch's answer is
        sent to tells them); or what stopped the row before any request (a rail, its prompt
        function)."""
        prepared = setup.prepared
        quiet = prepared.with_runtime(replace(prepared.runtime, handlers=()))
        try:
            call = await quiet.abegin(rows.args, dict(rows.kwargs))
            first = await call.astep()
        except ConfigurationError:
            raise
        except Exception as error:
            return error
        if isinstance(first, CallModel):
            call.engine.close()
            return first.request
        return CommandError("the call ended without asking the model", command=self.spec.name)

    # -- collecting --
    async def _collect(self, batching: _Batching) -> int:
        """Poll every job not yet read; read the ended ones. Returns how many were read now."""
        setup, api, checkpoint = batching.setup, batching.api, batching.checkpoint
        read = 0
        for tag, _, _, job, state, _, _ in checkpoint.batches():
            if state == "read" or job is None:
                continue
            status = await asyncio.to_thread(api.status, job)
            if status.state == "running":
                continue
            outcomes: dict[str, Outcome] = {}
            if status.state in ("done", "cancelled"):
                outcomes = dict(await asyncio.to_thread(_read_all, api, job))
            checkpoint.batch_state(tag, "done")
            if setup.handlers:
                await self._tell(
                    setup.handlers,
                    BatchFinished(
                        self.spec.name,
                        self.run_id,
                        job=job,
                        provider=api.name,
                        state=status.state,
                        counts=dict(status.counts),
                    ),
                )
            await self._read(batching, tag, outcomes, status.detail)
            checkpoint.batch_state(tag, "read")
            read += 1
        self._show(setup, checkpoint)
        return read

    async def _read(
        self, batching: _Batching, tag: str, outcomes: dict[str, Outcome], detail: str
    ) -> None:
        """Give each answer to its rows' engine; rows the batch did not answer wait for a retry."""
        keys = [key for key in batching.pending if batching.checkpoint.batch_of(key) == tag]
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(key: str) -> None:
            outcome = outcomes.get(key) or Missed(
                "failed", f"the batch brought no answer ({detail})"
            )
            if isinstance(outcome, Missed):
                return  # left pending: it is retried once every batch has been read
            async with gate:
                rows = batching.pending.pop(key)
                self._finish(batching, key, rows, await self._answer(batching, key, rows, outcome))

        await asyncio.gather(*(one(key) for key in keys))

    async def _answer(
        self, batching: _Batching, key: str, rows: _Pending, outcome: Outcome
    ) -> Row[Any]:
        """The row's call, with the batch's answer as the reply to its first request: a fresh
        call of the row is stepped to that request and sent the answer, and goes on as online
        (a re-ask or a tool round asks the model). An answer the adapter cannot read is asked
        online instead."""
        answered: list[Response] = []

        async def call() -> Result[Any]:
            started = await batching.setup.prepared.abegin(rows.args, dict(rows.kwargs))
            first = await started.astep()
            if not isinstance(first, CallModel):
                assert isinstance(first, Result)
                return first
            reply = _reply(batching.api, outcome, first.request)
            if reply is None:
                return await started.arun(await started.aask(first))
            answered.append(reply)
            return await started.arun(reply)

        row = await self._call(rows.indices[0], rows.items[0], key, call())
        return self._discounted(row, *answered)

    def _discounted(self, row: Row[Any], reply: Response | None = None) -> Row[Any]:
        """``row`` with the batched turn (``reply``, the batch's answer) at the batch price."""
        if reply is None:
            return row
        used = reply.usage
        if used.total_tokens and row.cost is not None:
            full = price(used, self.prepared.plan.model)
            if full is not None:
                row = replace(row, cost=row.cost - full * (1 - BATCH_PRICE))
        return row

    async def _retry(self, batching: _Batching, round_: int) -> None:
        """Rows their batch did not answer: online, or in a follow-up batch while rounds last."""
        keys = list(batching.pending)
        if self.settings.batch_retry == "batch" and round_ <= self.settings.batch_rounds:
            await self._submit(batching, keys, round_)
            return
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(key: str) -> None:
            async with gate:
                rows = batching.pending.pop(key)
                call = batching.setup.prepared.arun(rows.args, dict(rows.kwargs))
                self._finish(
                    batching, key, rows, await self._call(rows.indices[0], rows.items[0], key, call)
                )

        await asyncio.gather(*(one(key) for key in keys))

    # -- rows --
    def _finish(self, batching: _Batching, key: str, rows: _Pending, row: Row[Any]) -> None:
        """Record a key's row, and hold a record for each of its places in the input."""
        _record(batching.checkpoint, key, rows.indices[0], row, batching.setup.reader)
        for position, (index, item) in enumerate(zip(rows.indices, rows.items, strict=True)):
            shared = replace(row, index=index, input=item)
            if position:  # one call answered every row of the key: count its cost once
                shared = replace(
                    shared, usage=type(row.usage)(), cost=0.0 if row.cost is not None else None
                )
            batching.held[index] = shared

    def _all_read(self, checkpoint: Checkpoint) -> bool:
        return all(state == "read" for _, _, _, _, state, _, _ in checkpoint.batches())

    def _show(self, setup: _Setup, checkpoint: Checkpoint) -> None:
        """The batches' states on the progress bar."""
        states: dict[str, int] = {}
        for _, _, _, _, state, _, _ in checkpoint.batches():
            shown = {"intended": "submitting", "submitted": "running", "done": "reading"}.get(
                state, "done"
            )
            states[shown] = states.get(shown, 0) + 1
        setup.progress.describe(
            f"{self.spec.name} (batches: "
            + ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
            + ")"
        )


#: Why an answer may hold no output and still be the model's answer, read as online.
_SAID_WHY = frozenset({"length", "refusal", "content_filter"})


def _reply(api: BatchAPI, outcome: Outcome, request: Request) -> Response | None:
    """The batch's answer to ``request``, read by the provider's adapter as an online reply
    is; None for one to ask online instead: a reply the adapter refuses, or one with no output
    at all and no reason for it (a 200 line with no ``choices`` or ``content``)."""
    adapter = api.model
    try:
        response = adapter.read(adapter.parse, outcome, request)
    except CommandError:
        return None
    if not response.parts and response.finish_reason not in _SAID_WHY:
        return None
    return response


def _read_all(api: BatchAPI, job: str) -> list[tuple[str, Outcome]]:
    return list(api.results(job))


def _chunks(
    requests: list[tuple[str, dict[str, Any]]], api: BatchAPI
) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The requests in batches within the provider's limits on requests and bytes."""
    chunk: list[tuple[str, dict[str, Any]]] = []
    size = 0
    for custom_id, body in requests:
        cost = api.size(body)
        if chunk and (len(chunk) >= api.limits.requests or size + cost > api.limits.bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((custom_id, body))
        size += cost
    if chunk:
        yield chunk


def _tag(run: str, ids: list[str], round_: int) -> str:
    """A batch's name: the same requests of the same run get the same tag in any process."""
    digest = hashlib.sha256((run + "\n" + "\n".join(ids) + f"\n{round_}").encode()).hexdigest()
    return f"alloy-{digest[:32]}"


async def _numbered(inputs: Any) -> Any:
    index = 0
    async for item in _rows_of(inputs):
        yield index, item
        index += 1
