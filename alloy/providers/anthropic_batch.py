"""Anthropic's Message Batches, the batch API of the Anthropic adapter:
``/v1/messages/batches`` with ``requests: [{custom_id, params}]``; results as JSONL from
``results_url``. At most 100,000 requests or 256 MB ("Batch processing" guide). Batches take no
metadata, so a job is recognised by when it was made and how many requests it holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._renamed import renamed
from ._base import Reply
from .anthropic import AnthropicModel
from .batch_api import BatchAPI, JobStatus, Limits, Missed, Outcome, State, as_mapping, json_lines


class AnthropicBatchAPI(BatchAPI):
    """Anthropic's Message Batches."""

    name = "anthropic"
    adapter = AnthropicModel
    limits = Limits(100_000, 256 * 1024 * 1024 - 1024 * 1024)

    def submit(self, requests: list[tuple[str, dict[str, Any]]], tag: str) -> str:
        client = self.model.client()
        batch = [{"custom_id": c, "params": body} for c, body in requests]
        return str(self.call(client.messages.batches.create, requests=batch).id)

    def find(self, tag: str, requests: int, since: float) -> str | None:
        client = self.model.client()
        for job in self.call(client.messages.batches.list, limit=100):
            made = job.created_at.timestamp()
            counts = job.request_counts
            total = (
                counts.processing
                + counts.succeeded
                + counts.errored
                + counts.canceled
                + counts.expired
            )
            if made >= since - 1 and total == requests:
                return str(job.id)
            if made < since - 3600:
                break
        return None

    def status(self, job: str) -> JobStatus:
        found = self.call(self.model.client().messages.batches.retrieve, job)
        counts = found.request_counts
        tally = {
            "processing": counts.processing,
            "succeeded": counts.succeeded,
            "errored": counts.errored,
            "canceled": counts.canceled,
            "expired": counts.expired,
        }
        state: State = "done" if found.processing_status == "ended" else "running"
        return JobStatus(state, tally, found.processing_status)

    def results(self, job: str) -> Iterator[tuple[str, Outcome]]:
        client = self.model.client()
        raw = self.call(client.messages.batches.with_raw_response.results, job)
        text = self.call(raw.read).decode(errors="replace")  # the results stream, whole
        for custom_id, item in json_lines(text, "custom_id"):
            if isinstance(item, Missed):
                yield custom_id, item
                continue
            result = as_mapping(item.get("result"))
            kind = result.get("type")
            if kind == "succeeded":
                yield custom_id, Reply(result.get("message") or {})
            elif kind == "errored":
                error = as_mapping(as_mapping(result.get("error")).get("error"))
                yield custom_id, Missed("failed", f"{error.get('type')}: {error.get('message')}")
            else:
                yield custom_id, Missed("canceled" if kind == "canceled" else "expired", str(kind))

    def cancel(self, job: str) -> None:
        self.call(self.model.client().messages.batches.cancel, job)


#: The names these had before "wire" was renamed (importable, with a DeprecationWarning).
__getattr__ = renamed(__name__, {"AnthropicWire": "AnthropicBatchAPI"}, globals())

__all__ = ["AnthropicBatchAPI"]
