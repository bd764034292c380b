"""Gemini's batch mode, the batch API of the Gemini adapter: ``models/{m}:batchGenerateContent``
with inline ``{request, metadata: {key}}`` up to 20 MB ("keep the total request size under
20MB", the Batch API guide), a JSONL file of requests above; answers inline in the finished
batch, or in a responses file."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

from .._renamed import renamed
from ._base import Reply
from .batch_api import BatchAPI, JobStatus, Limits, Missed, Outcome, State, as_mapping, json_lines
from .gemini import GeminiModel


class GeminiBatchAPI(BatchAPI):
    """Gemini's batch mode: inline requests up to 20 MB, a JSONL file of requests above."""

    name = "gemini"
    limits = Limits(1_000_000, 2 * 1024 * 1024 * 1024 - 16 * 1024 * 1024)
    #: Inline requests may take this much in all; more goes in a file.
    inline_bytes = 20 * 1024 * 1024 - 512 * 1024
    adapter = GeminiModel

    def __init__(self, model: GeminiModel) -> None:
        super().__init__(model)
        self.model: GeminiModel = model

    def submit(self, requests: list[tuple[str, dict[str, Any]]], tag: str) -> str:
        client = self.model.client()
        if sum(self.size(body) for _, body in requests) > self.inline_bytes:
            lines = "".join(
                json.dumps({"key": custom_id, "request": self.rest_request(body)}) + "\n"
                for custom_id, body in requests
            )
            uploaded = self.call(
                client.files.upload,
                file=io.BytesIO(lines.encode()),
                config={"mime_type": "application/jsonl", "display_name": tag},
            )
            src: Any = uploaded.name
        else:
            arguments = self.model.sdk_arguments
            src = []
            for custom_id, body in requests:
                given = arguments(body)
                item = {"contents": given["contents"], "metadata": {"key": custom_id}}
                if "config" in given:
                    item["config"] = given["config"]
                src.append(item)
        job = self.call(
            client.batches.create, model=self.model.model_id, src=src, config={"display_name": tag}
        )
        return str(job.name)

    def rest_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """A ``GenerateContentRequest`` as the REST API reads it, for a line of a batch file:
        the SDK's own models dumped by their wire names (``responseJsonSchema``...), with the
        config's request-level fields (system instruction, tools, cached content) lifted out of
        ``generationConfig`` as the SDK lifts them for an online call."""
        from google.genai import types

        given = self.model.sdk_arguments(body)
        contents = given["contents"]
        if isinstance(contents, str):  # a prompt of one text, which the SDK makes a user turn
            contents = {"role": "user", "parts": [{"text": contents}]}
        turns = contents if isinstance(contents, list) else [contents]
        request: dict[str, Any] = {
            "contents": [
                types.Content.model_validate(turn).model_dump(
                    by_alias=True, exclude_none=True, mode="json"
                )
                for turn in turns
            ]
        }
        config = given.get("config")
        if config is None:
            return request
        generation = types.GenerateContentConfig.model_validate(config).model_dump(
            by_alias=True, exclude_none=True, mode="json"
        )
        for client_only in ("httpOptions", "automaticFunctionCalling", "shouldReturnHttpResponse"):
            generation.pop(client_only, None)
        system = generation.pop("systemInstruction", None)
        if isinstance(system, str):
            system = {"parts": [{"text": system}], "role": "user"}
        if system is not None:
            request["systemInstruction"] = system
        for lifted in ("tools", "toolConfig", "safetySettings", "cachedContent", "labels"):
            if lifted in generation:
                request[lifted] = generation.pop(lifted)
        if generation:
            request["generationConfig"] = generation
        return request

    def find(self, tag: str, requests: int, since: float) -> str | None:
        client = self.model.client()
        for job in self.call(client.batches.list, config={"page_size": 100}):
            if job.display_name == tag:
                return str(job.name)
        return None

    def status(self, job: str) -> JobStatus:
        """The job's state and its ``batchStats``, read from the batch as the long-running
        operation it is: the SDK's ``BatchJob`` leaves the counts out."""
        found = self.call(self.model.client().operations.get, _batch_operation()(name=job))
        metadata = as_mapping(found.metadata)
        state_name = str(metadata.get("state", ""))
        states: dict[str, State] = {
            "SUCCEEDED": "done",
            "CANCELLED": "cancelled",
            "FAILED": "failed",
            "EXPIRED": "failed",
        }
        state = states.get(state_name.rpartition("_STATE_")[2], "running")
        stats = as_mapping(metadata.get("batchStats"))
        counts = {
            shown: _count(stats.get(field))
            for shown, field in (
                ("total", "requestCount"),
                ("succeeded", "successfulRequestCount"),
                ("failed", "failedRequestCount"),
                ("pending", "pendingRequestCount"),
            )
        }
        return JobStatus(state, counts, state_name)

    def results(self, job: str) -> Iterator[tuple[str, Outcome]]:
        client = self.model.client()
        found = self.call(client.batches.get, name=job)
        if found.dest is not None and found.dest.file_name:
            yield from self._file_results(found.dest.file_name)
            return
        answers = (found.dest.inlined_responses if found.dest else None) or []
        for answer in answers:
            key = str((answer.metadata or {}).get("key"))
            if answer.response is not None:
                yield key, Reply(answer.response)
            else:
                error = answer.error
                message = getattr(error, "message", None) or str(error)
                yield key, Missed("failed", message)

    def _file_results(self, name: str) -> Iterator[tuple[str, Outcome]]:
        """The lines of a batch's responses file: a response, or an error, by key."""
        from google.genai import types

        data = self.call(self.model.client().files.download, file=name)
        for key, item in json_lines(data.decode(errors="replace"), "key"):
            if isinstance(item, Missed):
                yield key, item
            elif item.get("response") is not None:
                try:
                    response = types.GenerateContentResponse.model_validate(item["response"])
                except ValueError:  # pydantic's ValidationError: not a response the SDK reads
                    yield key, Missed("failed", "its answer is not a response the SDK can read")
                    continue
                yield key, Reply(response)
            else:
                error = item.get("error") or {}
                message = error.get("message", error) if isinstance(error, Mapping) else error
                yield key, Missed("failed", str(message))

    def cancel(self, job: str) -> None:
        self.call(self.model.client().batches.cancel, name=job)


@functools.cache
def _batch_operation() -> Any:
    """A Gemini batch as a long-running operation of the SDK (``operations.get`` fetches it
    by name), its metadata kept whole."""
    from google.genai import types

    class BatchOperation(types.GenerateVideosOperation):
        @classmethod
        def from_api_response(cls, api_response: Any, is_vertex_ai: bool = False) -> Any:
            found = as_mapping(api_response)
            kept = {name: found.get(name) for name in ("name", "metadata", "done")}
            return cls.model_validate(kept)

    return BatchOperation


def _count(value: Any) -> int:
    """An int64 count as Gemini's JSON gives it (a string; left out when 0)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


#: The names these had before "wire" was renamed (importable, with a DeprecationWarning).
__getattr__ = renamed(__name__, {"GeminiWire": "GeminiBatchAPI"}, globals())

__all__ = ["GeminiBatchAPI"]
