"""Commands inside Ray: a callable for ``ray.data.Dataset.map_batches``, and a budget that keeps
Ray workers together within a provider's rate limits. Needs ``pip install 'alloy[ray]'``.

.. code-block:: python

    from alloy.ray import CommandBatches, RayBudget

    budget = RayBudget()
    labelled = tickets.map_batches(
        CommandBatches,
        fn_constructor_args=(classify,),
        fn_constructor_kwargs={"concurrency": 8, "budget": budget},
        concurrency=2,  # actors
        batch_format="pyarrow",
    )

Ray makes one :class:`CommandBatches` per actor, from the command pickled (see
:mod:`alloy._pickling`). The actor keeps one event loop running for its whole life and runs
each batch on it with the command's ``amap``, so the SDK clients (one per loop) stay warm from
batch to batch, and each row is exactly a call of the command: its re-asks, checks, rails, tools
and the response cache apply as they would in one process.

Rows in: a column per parameter of the command, named after it; other columns pass through.
Results out, in the same order, beside the columns that came in:

* for an output type that is a JSON object (a dataclass, a pydantic model, a TypedDict), one
  column per field, named after it; for any other type, one ``value`` column. Values are as
  JSON has them (a date as its ISO text, a nested object as a dict), so Arrow can hold them;
  :func:`typed` reads a row back as the output type;
* ``ok`` (whether the row succeeded), ``error`` (``"Type: message"`` of a failed row, else
  None), ``attempts``, ``input_tokens`` and ``output_tokens``.

The batch that comes back is a ``pyarrow.Table`` whatever ``batch_format`` the rows came in
(``"pyarrow"``, ``"pandas"`` or ``"numpy"``); Ray Data takes any of them back.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Mapping
from typing import Any

from ._command import Command
from ._output import JsonOutput
from .errors import ConfigurationError
from .rows import Failed, LocalBudget, Row
from .rows._pacer import Limits

try:
    import pyarrow as pa
    import ray
except ImportError:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "alloy.ray needs Ray Data: pip install 'alloy[ray]' (ray[data] and pyarrow)"
    ) from None

__all__ = ["STATUS_COLUMNS", "CommandBatches", "RayBudget", "typed"]

#: The columns saying how each row went, after its result columns.
STATUS_COLUMNS = ("ok", "error", "attempts", "input_tokens", "output_tokens")
_STATUS_TYPES = (pa.bool_(), pa.string(), pa.int64(), pa.int64(), pa.int64())
_NO_DEPS: Any = object()


class CommandBatches:
    """``map_batches``' callable class: runs ``command`` over each batch's rows.

    ``concurrency``, ``rpm``, ``tpm``, ``budget``, ``deps`` and ``errors`` are those of
    :meth:`alloy.Command.map`, for each actor: ``concurrency`` calls at once in each at most
    (fewer after 429s: each actor's runs adapt to the limits the provider keeps), and
    ``budget`` (a :class:`RayBudget`, or an ``alloy.rows.RedisBudget``) shared by all of them.
    Without one, each actor keeps its own, so that its batches one after another keep to the
    limits together (each batch is a run of its own).
    """

    def __init__(
        self,
        command: Command[..., Any],
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        budget: Any = None,
        deps: Any = _NO_DEPS,
        errors: str = "collect",
    ) -> None:
        if not isinstance(command, Command):
            raise ConfigurationError(
                f"CommandBatches runs an alloy command, got {type(command).__name__}"
            )
        self.command = command
        if budget is None:  # the actor's own, so that its batches keep to the limits together
            budget = LocalBudget()
        self.options: dict[str, Any] = {
            "concurrency": concurrency,
            "rpm": rpm,
            "tpm": tpm,
            "budget": budget,
            "errors": errors,
            "progress": False,
        }
        if deps is not _NO_DEPS:
            self.options["deps"] = deps
        command.amap([], **self.options)  # refuses bad options here, in the actor's start
        self.fields = _fields(command)
        clash = set(self.fields) & set(STATUS_COLUMNS)
        if clash:
            raise ConfigurationError(
                f"{command.name}'s output has fields named like the status columns "
                f"({', '.join(sorted(clash))}); wrap it in another type"
            )
        self.parameters = command.__signature__.parameters
        self.required = [
            name
            for name, parameter in self.parameters.items()
            if parameter.default is inspect.Parameter.empty
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]
        from pydantic import TypeAdapter

        self._dump = TypeAdapter(command.output_type.value_type).dump_python
        # One loop for the actor's life: the SDK clients made on it stay warm between batches.
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="alloy-ray-batches", daemon=True
        )
        self._thread.start()

    def __call__(self, batch: Any) -> pa.Table:
        table = _as_table(batch)
        missing = [name for name in self.required if name not in table.column_names]
        if missing:
            raise ConfigurationError(
                f"{self.command.name} needs a column for each of its parameters; the batch has "
                f"none named {', '.join(missing)} (it has {', '.join(table.column_names)})"
            )
        clash = set(table.column_names) & set(self._result_columns)
        if clash:
            raise ConfigurationError(
                f"the batch already has columns named {', '.join(sorted(clash))}, which "
                f"{self.command.name}'s results would replace; rename them first"
            )
        taken = [name for name in table.column_names if name in self.parameters]
        rows = table.select(taken).to_pylist()
        records = asyncio.run_coroutine_threadsafe(self._run(rows), self._loop).result()
        for name, values in self._columns(records).items():
            table = table.append_column(name, values)
        return table

    async def _run(self, rows: list[dict[str, Any]]) -> list[Row[Any]]:
        return list(await self.command.amap(rows, **self.options))

    @property
    def _result_columns(self) -> tuple[str, ...]:
        return (*(self.fields or ("value",)), *STATUS_COLUMNS)

    def _columns(self, records: list[Row[Any]]) -> dict[str, pa.Array]:
        dumped = [self._dump(row.value, mode="json") if row.ok else None for row in records]
        columns: dict[str, pa.Array] = {}
        if self.fields:
            for name in self.fields:
                columns[name] = pa.array([None if d is None else d.get(name) for d in dumped])
        else:
            columns["value"] = pa.array(dumped)
        status = (
            [row.ok for row in records],
            [_error_text(row) for row in records],
            [row.attempts for row in records],
            [row.usage.input_tokens for row in records],
            [row.usage.output_tokens for row in records],
        )
        for name, values, kind in zip(STATUS_COLUMNS, status, _STATUS_TYPES, strict=True):
            columns[name] = pa.array(values, type=kind)
        return columns

    def close(self) -> None:
        """Close the SDK clients made on the actor's loop, and the loop (Ray ends an actor's
        process instead; this is for a CommandBatches made by hand)."""
        loop = self._loop
        if loop.is_closed():
            return
        if loop.is_running():
            asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join()
        loop.close()

    def __del__(self) -> None:
        if (
            getattr(self, "_thread", None) is not None
            and threading.current_thread() is not self._thread
        ):
            self.close()


def typed(command: Command[..., Any], row: Mapping[str, Any]) -> Any:
    """The output value of a result row (a record of the dataset :class:`CommandBatches`
    made), validated again as ``command``'s output type; the row's error if it failed."""
    if not row.get("ok"):
        raise ValueError(f"the row failed: {row.get('error')}")
    fields = _fields(command)
    value = {name: row[name] for name in fields} if fields else row["value"]
    from pydantic import TypeAdapter

    return TypeAdapter(command.output_type.value_type).validate_json(json.dumps(value))


def _fields(command: Command[..., Any]) -> tuple[str, ...]:
    """The output's fields when it is a JSON object with fixed ones; else none (a type sent in
    a ``{"value": ...}`` envelope, text, or a format such as ``YesNo``)."""
    output = command.output_type
    inner = getattr(output, "inner", output)  # criteria wrap the output type
    if not isinstance(inner, JsonOutput) or inner.wrapped:
        return ()
    return tuple(inner.schema.get("properties") or ())


def _as_table(batch: Any) -> pa.Table:
    """A batch in any of Ray Data's formats, as an Arrow table."""
    if isinstance(batch, pa.Table):
        return batch
    if isinstance(batch, Mapping):  # "numpy": a dict of arrays
        return pa.table({name: pa.array(list(values)) for name, values in batch.items()})
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas
        return pa.Table.from_pandas(batch, preserve_index=False)
    raise ConfigurationError(
        f"CommandBatches takes pyarrow, pandas or numpy batches, got {type(batch).__name__}"
    )


def _error_text(row: Row[Any]) -> str | None:
    if not isinstance(row, Failed):
        return None
    return f"{type(row.error).__name__}: {row.error}"


class RayBudget:
    """A budget (see :class:`alloy.rows.Budget`) kept in a Ray actor that takes no CPU.

    Made in the driver and handed to :class:`CommandBatches` (or to any ``map`` running in a
    Ray task), it keeps every worker's calls together within one allowance per model. With a
    ``name``, the actor is found by it (made if there is none), so separate jobs on the cluster
    can share it. A reservation waits for the actor's answer; giving back, capping and pausing
    are sent without waiting (an actor runs one caller's calls in the order sent).
    """

    def __init__(self, name: str | None = None) -> None:
        options: dict[str, Any] = {"num_cpus": 0, "max_concurrency": 1}
        if name is not None:
            options.update(name=name, get_if_exists=True)
        actor: Any = ray.remote(LocalBudget)  # one allowance, in the actor every pacer asks
        self.name = name
        self._actor = actor.options(**options).remote()

    def __repr__(self) -> str:
        return f"<RayBudget {self.name!r}>" if self.name else "<RayBudget>"

    def take(self, model: str, limits: Limits, tokens: float, burst: float) -> float:
        wait: float = ray.get(self._actor.take.remote(model, limits, tokens, burst))
        return wait

    def give(self, model: str, tokens: float) -> None:
        self._actor.give.remote(model, tokens)

    def cap(self, model: str, left: Limits, since: float) -> None:
        self._actor.cap.remote(model, left, since)

    def pause(self, model: str, seconds: float) -> None:
        self._actor.pause.remote(model, seconds)
