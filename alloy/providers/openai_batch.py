"""OpenAI's Batch API, for the Responses and Chat Completions adapters: a JSONL
file (``custom_id``, ``url``, ``body``) uploaded with ``purpose=batch``, then ``/v1/batches``;
results in an output and an error file. At most 50,000 requests and 200 MB, one model per file
(OpenAI's Batch guide and the ``batches.create`` reference)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .._renamed import renamed
from ._base import Reply, SDKModel
from ._openai_common import OpenAIModel
from .batch_api import BatchAPI, JobStatus, Limits, Missed, Outcome, State, as_mapping, json_lines


class OpenAIBatchAPI(BatchAPI):
    """OpenAI's Batch API, for Chat Completions and Responses."""

    name = "openai"
    adapter = OpenAIModel
    limits = Limits(50_000, 200 * 1024 * 1024 - 1024 * 1024)

    def __init__(self, model: SDKModel, endpoint: str) -> None:
        super().__init__(model)
        self.endpoint = endpoint

    def submit(self, requests: list[tuple[str, dict[str, Any]]], tag: str) -> str:
        client = self.model.client()
        lines = "".join(
            json.dumps({"custom_id": c, "method": "POST", "url": self.endpoint, "body": body})
            + "\n"
            for c, body in requests
        )
        uploaded = self.call(
            client.files.create, file=(f"{tag}.jsonl", lines.encode()), purpose="batch"
        )
        job = self.call(
            client.batches.create,
            input_file_id=uploaded.id,
            endpoint=self.endpoint,
            completion_window="24h",
            metadata={"alloy_batch": tag},
        )
        return str(job.id)

    def find(self, tag: str, requests: int, since: float) -> str | None:
        client = self.model.client()
        for job in self.call(client.batches.list, limit=100):
            if (job.metadata or {}).get("alloy_batch") == tag:
                return str(job.id)
            if job.created_at < since - 3600:
                break
        return None

    def status(self, job: str) -> JobStatus:
        found = self.call(self.model.client().batches.retrieve, job)
        counts = found.request_counts
        tally = {"total": counts.total, "completed": counts.completed, "failed": counts.failed}
        states: dict[str, State] = {
            "completed": "done",
            "expired": "done",
            "cancelled": "cancelled",
            "failed": "failed",
        }
        state = states.get(found.status, "running")
        if state == "cancelled" and (found.output_file_id or found.error_file_id):
            state = "done"  # what ran before the cancel can still be read
        detail = (
            "; ".join(e.message or "" for e in (found.errors.data or [])) if found.errors else ""
        )
        return JobStatus(state, tally, detail or found.status)

    def results(self, job: str) -> Iterator[tuple[str, Outcome]]:
        client = self.model.client()
        found = self.call(client.batches.retrieve, job)
        for file_id in (found.output_file_id, found.error_file_id):
            if not file_id:
                continue
            content = self.call(client.files.content, file_id).text
            for custom_id, item in json_lines(content, "custom_id"):
                if isinstance(item, Missed):
                    yield custom_id, item
                    continue
                response = as_mapping(item.get("response"))
                error = as_mapping(item.get("error"))
                if response.get("status_code") == 200:
                    yield custom_id, Reply(response.get("body") or {}, response.get("request_id"))
                elif error.get("code") == "batch_expired":
                    yield custom_id, Missed("expired", str(error.get("message", "expired")))
                else:
                    body = as_mapping(response.get("body"))
                    message = as_mapping(body.get("error")).get("message") or error.get("message")
                    status = response.get("status_code")
                    yield custom_id, Missed("failed", f"HTTP {status}: {message}")

    def cancel(self, job: str) -> None:
        self.call(self.model.client().batches.cancel, job)


def responses_batch_api(model: SDKModel) -> OpenAIBatchAPI:
    """The batch API of a Responses model (``Provider.batch_api`` of ``openai``)."""
    return OpenAIBatchAPI(model, "/v1/responses")


def chat_batch_api(model: SDKModel) -> OpenAIBatchAPI:
    """The batch API of a Chat Completions model (``Provider.batch_api`` of ``openai-chat``)."""
    return OpenAIBatchAPI(model, "/v1/chat/completions")


#: The names these had before "wire" was renamed (importable, with a DeprecationWarning).
__getattr__ = renamed(
    __name__,
    {
        "OpenAIWire": "OpenAIBatchAPI",
        "responses_wire": "responses_batch_api",
        "chat_wire": "chat_batch_api",
    },
    globals(),
)

__all__ = ["OpenAIBatchAPI", "chat_batch_api", "responses_batch_api"]
