"""What a provider's batch API is: the :class:`BatchAPI` base and the values it gives.

A provider with a batch API names it in its descriptor (``Provider.batch_api``, a
``"module:function"`` taking the model and returning a :class:`BatchAPI`), beside its factory
and dialect; it lives beside its adapter (``openai_batch``, ``anthropic_batch``,
``gemini_batch``). :mod:`alloy.batch` finds it through the descriptor and knows no provider.

A request goes into a batch exactly as the adapter builds it for an online call
(``SDKModel.build``), and each answer is read by the adapter's own ``parse``: the body sent and
the reading of the reply are the online call's. What differs per provider is only the envelope,
and how much one batch may hold (:class:`Limits`); each batch API's module says what its
provider's are, and where that is documented. Each provider bills batched tokens at half the online price.

Every job carries a tag of the run (OpenAI metadata, Gemini display name; Anthropic batches take
no metadata, so a job is recognised there by when it was made and how many requests it holds),
so a process that died between submitting and recording a job finds it instead of submitting
the same requests twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..errors import ConfigurationError
from ._base import Reply, SDKModel

#: What batched tokens cost, against the online price (each provider's batch discount).
BATCH_PRICE = 0.5

State = Literal["running", "done", "cancelled", "failed"]


@dataclass(frozen=True)
class Limits:
    """The most one batch may hold: requests, and bytes of requests."""

    requests: int
    bytes: int


@dataclass(frozen=True)
class JobStatus:
    """Where a job is: ``running``, ``done`` (its results can be read), ``cancelled`` or
    ``failed`` (the provider refused it whole); ``counts`` as the provider gives them."""

    state: State
    counts: Mapping[str, int]
    detail: str = ""


@dataclass(frozen=True)
class Missed:
    """A request of a batch that brought no answer: ``failed`` (an error), ``expired`` (not
    run in time) or ``canceled``, with what the provider said."""

    kind: Literal["failed", "expired", "canceled"]
    message: str


Outcome = Reply | Missed


class BatchAPI:
    """One provider's batch API; subclasses supply the envelope."""

    name: str
    limits: Limits
    #: The adapter whose models it batches (their ``build`` and ``parse`` are its bodies').
    adapter: ClassVar[type[SDKModel]] = SDKModel

    def __init__(self, model: SDKModel) -> None:
        if not isinstance(model, self.adapter):  # a stand-in named after the provider, say
            name = getattr(model, "name", type(model).__name__)
            raise ConfigurationError(
                f"mode='batch': {name} has no batch API: {type(self).__name__} batches the "
                f"requests of {self.adapter.__name__} models, and it is a "
                f"{type(model).__name__}. Use mode='online'."
            )
        self.model = model

    def size(self, body: dict[str, Any]) -> int:
        """Bytes one request takes in a batch (its JSON, as near as matters)."""
        return len(json.dumps(body, default=str)) + 128

    def submit(self, requests: list[tuple[str, dict[str, Any]]], tag: str) -> str:
        raise NotImplementedError

    def find(self, tag: str, requests: int, since: float) -> str | None:
        """The job a process submitted for ``tag`` before dying, if the provider has it."""
        raise NotImplementedError

    def status(self, job: str) -> JobStatus:
        raise NotImplementedError

    def results(self, job: str) -> Iterator[tuple[str, Outcome]]:
        raise NotImplementedError

    def cancel(self, job: str) -> None:
        raise NotImplementedError

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """An SDK call, its failures as alloy's errors (nothing chained, keys redacted)."""
        return self.model.call(fn, *args, **kwargs)


def json_lines(text: str, key: str) -> Iterator[tuple[str, Mapping[str, Any] | Missed]]:
    """The lines of a results file as (custom id, the line's object). A line that is not a
    JSON object costs only its own row: it comes as a ``Missed`` for the id it names, so that
    row alone is asked again (a line that names no id is left out, and its row, unanswered,
    is asked again too)."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if isinstance(item, Mapping) and item.get(key) is not None:
            yield str(item[key]), item
            continue
        named = re.search(rf'"{key}"\s*:\s*"([^"]*)"', line)
        if named is not None:
            yield named.group(1), Missed("failed", f"line {number} of the results is not JSON")


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a field of the wrong shape)."""
    return value if isinstance(value, Mapping) else {}


__all__ = [
    "BATCH_PRICE",
    "JobStatus",
    "Limits",
    "Missed",
    "Outcome",
    "State",
    "BatchAPI",
    "as_mapping",
    "json_lines",
]
