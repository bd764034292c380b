"""The providers' batch APIs, each through its official SDK: submit, find, poll, read, cancel.

A request goes into a batch exactly as the adapter builds it for an online call
(``SDKModel.build``), and each answer is read by the adapter's own ``parse``: the body sent and
the reading of the reply are the online call's. What differs per provider is only the envelope:

================  ==========================================  ==============================
provider          envelope                                    per batch at most
================  ==========================================  ==============================
OpenAI            a JSONL file (``custom_id``, ``url``,       50,000 requests, 200 MB, one
                  ``body``) uploaded with ``purpose=batch``,  model per file
                  then ``/v1/batches``; results in an output
                  and an error file
Anthropic         ``/v1/messages/batches`` with ``requests:   100,000 requests, 256 MB
                  [{custom_id, params}]``; results as JSONL
                  from ``results_url``
Gemini            ``models/{m}:batchGenerateContent`` with    20 MB of inline requests
                  inline ``{request, metadata: {key}}``;
                  answers inline in the finished batch
================  ==========================================  ==============================

Sources: OpenAI's Batch guide and the ``batches.create`` reference ("up to 50,000 requests, and
can be up to 200 MB in size"); Anthropic's "Batch processing" guide ("100,000 Message requests
or 256 MB in size, whichever is reached first"); Gemini's "Batch API" guide (inline requests
"keep the total request size under 20MB"). Each bills batched tokens at half the online price.

Every job carries a tag of the run (OpenAI metadata, Gemini display name; Anthropic batches take
no metadata, so a job is recognised there by when it was made and how many requests it holds),
so a process that died between submitting and recording a job finds it instead of submitting
the same requests twice.
"""

from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigurationError
from ..providers._base import Reply, SDKModel
from ..providers.gemini import GeminiModel

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


class Wire:
    """One provider's batch API; subclasses supply the envelope."""

    name: str
    limits: Limits

    def __init__(self, model: SDKModel) -> None:
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


class OpenAIWire(Wire):
    """OpenAI's Batch API, for Chat Completions and Responses."""

    name = "openai"
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
                response = _mapping(item.get("response"))
                error = _mapping(item.get("error"))
                if response.get("status_code") == 200:
                    yield custom_id, Reply(response.get("body") or {}, response.get("request_id"))
                elif error.get("code") == "batch_expired":
                    yield custom_id, Missed("expired", str(error.get("message", "expired")))
                else:
                    body = _mapping(response.get("body"))
                    message = _mapping(body.get("error")).get("message") or error.get("message")
                    status = response.get("status_code")
                    yield custom_id, Missed("failed", f"HTTP {status}: {message}")

    def cancel(self, job: str) -> None:
        self.call(self.model.client().batches.cancel, job)


class AnthropicWire(Wire):
    """Anthropic's Message Batches."""

    name = "anthropic"
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
            result = _mapping(item.get("result"))
            kind = result.get("type")
            if kind == "succeeded":
                yield custom_id, Reply(result.get("message") or {})
            elif kind == "errored":
                error = _mapping(_mapping(result.get("error")).get("error"))
                yield custom_id, Missed("failed", f"{error.get('type')}: {error.get('message')}")
            else:
                yield custom_id, Missed("canceled" if kind == "canceled" else "expired", str(kind))

    def cancel(self, job: str) -> None:
        self.call(self.model.client().messages.batches.cancel, job)


class GeminiWire(Wire):
    """Gemini's batch mode: inline requests up to 20 MB, a JSONL file of requests above."""

    name = "gemini"
    limits = Limits(1_000_000, 2 * 1024 * 1024 * 1024 - 16 * 1024 * 1024)
    #: Inline requests may take this much in all; more goes in a file.
    inline_bytes = 20 * 1024 * 1024 - 512 * 1024

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
        metadata = _mapping(found.metadata)
        state_name = str(metadata.get("state", ""))
        states: dict[str, State] = {
            "SUCCEEDED": "done",
            "CANCELLED": "cancelled",
            "FAILED": "failed",
            "EXPIRED": "failed",
        }
        state = states.get(state_name.rpartition("_STATE_")[2], "running")
        stats = _mapping(metadata.get("batchStats"))
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


@functools.cache
def _batch_operation() -> Any:
    """A Gemini batch as a long-running operation of the SDK (``operations.get`` fetches it
    by name), its metadata kept whole."""
    from google.genai import types

    class BatchOperation(types.GenerateVideosOperation):
        @classmethod
        def from_api_response(cls, api_response: Any, is_vertex_ai: bool = False) -> Any:
            found = _mapping(api_response)
            kept = {name: found.get(name) for name in ("name", "metadata", "done")}
            return cls.model_validate(kept)

    return BatchOperation


def _count(value: Any) -> int:
    """An int64 count as Gemini's JSON gives it (a string; left out when 0)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a field of the wrong shape)."""
    return value if isinstance(value, Mapping) else {}


def wire_for(model: Any) -> Wire:
    """The batch API of ``model``'s provider; ConfigurationError naming why there is none."""
    provider = getattr(model, "provider", None)
    if isinstance(model, SDKModel):
        if provider == "openai-chat":
            return OpenAIWire(model, "/v1/chat/completions")
        if provider == "openai":
            return OpenAIWire(model, "/v1/responses")
        if provider == "anthropic":
            return AnthropicWire(model)
        if isinstance(model, GeminiModel):
            return GeminiWire(model)
    name = getattr(model, "name", type(model).__name__)
    raise ConfigurationError(
        f"mode='batch': {name} has no batch API (OpenAI, Anthropic and Gemini have one; "
        "Ollama and local models do not). Use mode='online' (or mode='auto', which runs such "
        "a model online)."
    )
