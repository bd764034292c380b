"""The providers' batch APIs, with time compressed, so the real SDKs drive whole batch flows.

- OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}[/content]``,
  ``POST /v1/batches``, ``GET /v1/batches[/{id}]``, ``POST /v1/batches/{id}/cancel``. The input
  file is JSON Lines of ``{custom_id, method, url, body}``; the output and error files are JSON
  Lines of ``{id, custom_id, response: {status_code, request_id, body}, error}``.
- Anthropic: ``POST /v1/messages/batches`` (``requests: [{custom_id, params}]``),
  ``GET /v1/messages/batches[/{id}]``, ``POST .../{id}/cancel``, and ``GET .../{id}/results``,
  JSON Lines of ``{custom_id, result: {type: succeeded|errored|canceled|expired, ...}}``.
- Gemini: ``POST /v1beta/models/{model}:batchGenerateContent`` with inline requests (``{request,
  metadata: {key}}``), ``GET /v1beta/batches[/{name}]``, ``POST /v1beta/batches/{name}:cancel``;
  the answers come back inline in the batch's ``output`` (or in a responses file), and its
  ``batchStats`` count the requests (``requestCount``, ``successfulRequestCount``,
  ``failedRequestCount``, ``pendingRequestCount``).

Each request of a batch is answered exactly as the same request sent online would be (its wire
API reads it, the script's next item or the default answer, rendered in the wire's JSON), so a
batch holds only what the online API accepts. :class:`BatchOptions` sets how long a batch takes
and which of its requests fail, expire, or come back out of order.
"""

from __future__ import annotations

import email.policy
import json
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any, Protocol

from ._api import BadRequest, WireAPI, new_id
from ._call import Call
from ._http import JSON, Incoming, Outcome, Send, json_send
from ._script import Item, Script

JSONL = "application/jsonl"
_GEMINI_CREATE = ":batchGenerateContent"


@dataclass(frozen=True)
class BatchOptions:
    """How the emulator's batches behave.

    A batch is done ``seconds`` after it was made (looked at after that, it has finished);
    ``fail`` and ``expire`` are the shares of requests answered with a server error or left
    unprocessed when it expired, drawn per request from ``seed``; ``shuffle`` returns results in
    another order than the requests (as the providers say they may). ``malformed`` lines of
    each results file (OpenAI's output and error files, Anthropic's results, Gemini's responses
    file) come back cut off halfway, as a garbled download would, the requests drawn from
    ``seed`` too.
    """

    seconds: float = 0.0
    fail: float = 0.0
    expire: float = 0.0
    shuffle: bool = True
    seed: int = 0
    malformed: int = 0


@dataclass
class _Job:
    wire: str
    id: str
    requests: list[tuple[str, dict[str, Any]]]
    created: float
    endpoint: str = ""
    model: str = ""
    input_file_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    display_name: str = ""
    cancelled: bool = False
    done: float | None = None
    #: (custom_id, kind, payload): kind is ok, error or expired; canceled for a cancelled batch.
    results: list[tuple[str, str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    #: The custom ids whose line of a results file comes back cut off (``malformed``).
    malformed: set[str] = field(default_factory=set)

    def line(self, custom_id: str, value: dict[str, Any]) -> str:
        """One line of a results file: ``value`` as JSON, cut off halfway if it is malformed."""
        text = json.dumps(value)
        return (text[: len(text) // 2] if custom_id in self.malformed else text) + "\n"


class Answering(Protocol):
    """What batches need of the emulator's dispatcher (``_app.App``): its wire APIs, its
    script, and how it answers one request."""

    @property
    def script(self) -> Script: ...

    @property
    def anthropic(self) -> WireAPI: ...

    @property
    def gemini(self) -> WireAPI: ...

    @property
    def openai_chat(self) -> WireAPI: ...

    @property
    def openai_responses(self) -> WireAPI: ...

    def apply(self, item: Item | None, api: WireAPI, call: Call) -> Outcome: ...


class Batches:
    """Every batch and file the emulator holds, and the routes that serve them."""

    def __init__(self, app: Answering) -> None:
        self.app = app
        self.options = BatchOptions()
        self.files: dict[str, tuple[str, str, bytes, float]] = {}  # id: name, purpose, bytes, at
        self.jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._base = "http://127.0.0.1"  # where results are fetched from (the Host asked)

    def reset(self) -> None:
        with self._lock:
            self.files.clear()
            self.jobs.clear()
            self.options = BatchOptions()

    # -- routing -------------------------------------------------------------------------

    def route(self, incoming: Incoming) -> tuple[str, Outcome] | None:
        """The wire and the answer for a batch or file endpoint; None for any other path."""
        path, method = incoming.path.rstrip("/"), incoming.method
        parts = path.split("/")
        self._base = f"http://{incoming.headers.get('host', '127.0.0.1')}"
        try:
            if "x-goog-upload-protocol" in incoming.headers or "upload_id" in incoming.query:
                return "gemini", self._gemini_upload(incoming)
            if path.endswith(":download") and "/files/" in path:
                return "gemini", self._file_content(parts[-1].split(":")[0])
            if path.endswith("/v1/files") and method == "POST":
                return "openai", self._upload(incoming)
            if "/v1/files/" in path and method == "GET":
                if path.endswith("/content"):
                    return "openai", self._file_content(parts[-2])
                return "openai", self._file_object(parts[-1])
            if "/v1/messages/batches" in path:
                return "anthropic", self._anthropic(incoming, path, method)
            google = "x-goog-api-key" in incoming.headers or incoming.query_value("key")
            if (path.endswith("/v1/batches") or "/v1/batches/batch_" in path) and not google:
                return "openai", self._openai(incoming, path, method)
            if path.endswith(_GEMINI_CREATE) and method == "POST":
                model = parts[-1][: -len(_GEMINI_CREATE)]
                return "gemini", self._gemini_create(model, _json(incoming))
            if "/batches" in path and "/v1" in path:
                return "gemini", self._gemini(path, method)
        except BadRequest as exc:
            return "batch", json_send(exc.status, {"error": {"message": exc.message}})
        return None

    # -- OpenAI --------------------------------------------------------------------------

    def _upload(self, incoming: Incoming) -> Outcome:
        fields = _multipart(incoming)
        data = fields.get("file")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if data is None:
            raise BadRequest("'file' is a required property", status=400)
        file_id = new_id("file-", 24)
        with self._lock:
            self.files[file_id] = (data[0] or "upload.jsonl", purpose, data[1], time.time())
        return json_send(200, self._file_json(file_id))

    def _file_json(self, file_id: str) -> dict[str, Any]:
        name, purpose, content, at = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(at),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }

    def _file_object(self, file_id: str) -> Outcome:
        if file_id not in self.files:
            raise BadRequest(f"No such File object: {file_id}", status=404)
        return json_send(200, self._file_json(file_id))

    def _file_content(self, file_id: str) -> Outcome:
        if file_id not in self.files:
            raise BadRequest(f"No such File object: {file_id}", status=404)
        return Send(200, self.files[file_id][2], JSONL)

    def _openai(self, incoming: Incoming, path: str, method: str) -> Outcome:
        if path.endswith("/v1/batches"):
            if method == "POST":
                return json_send(200, self._openai_json(self._openai_create(_json(incoming))))
            return json_send(200, self._openai_list(incoming))
        tail = path.split("/v1/batches/", 1)[1].split("/")
        job = self._job(tail[0], "openai")
        if len(tail) == 2 and tail[1] == "cancel" and method == "POST":
            self._cancel(job)
        return json_send(200, self._openai_json(job))

    def _openai_create(self, body: Mapping[str, Any]) -> _Job:
        file_id = body.get("input_file_id")
        endpoint = body.get("endpoint")
        if body.get("completion_window") != "24h":
            raise BadRequest("completion_window must be '24h'")
        if endpoint not in ("/v1/chat/completions", "/v1/responses"):
            raise BadRequest(f"endpoint {endpoint!r} is not one the emulator batches")
        if not isinstance(file_id, str) or file_id not in self.files:
            raise BadRequest(f"No such File object: {file_id}", status=404)
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        models: set[str] = set()
        for number, line in enumerate(self.files[file_id][2].decode().splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            custom_id = item.get("custom_id")
            if item.get("url") != endpoint or item.get("method") != "POST":
                raise BadRequest(f"line {number}: url must be {endpoint} and method POST")
            if not isinstance(custom_id, str) or custom_id in seen:
                raise BadRequest(f"line {number}: custom_id must be unique in a batch")
            seen.add(custom_id)
            models.add(str(item.get("body", {}).get("model")))
            requests.append((custom_id, item.get("body") or {}))
        if len(models) > 1:
            raise BadRequest(f"a batch file may name one model, this one names {sorted(models)}")
        if len(requests) > 50_000:
            raise BadRequest("a batch may hold 50,000 requests at most")
        metadata = body.get("metadata") or {}
        job = _Job(
            "openai",
            new_id("batch_", 24),
            requests,
            time.time(),
            endpoint=endpoint,
            input_file_id=file_id,
            metadata=dict(metadata),
        )
        with self._lock:
            self.jobs[job.id] = job
        return job

    def _openai_json(self, job: _Job) -> dict[str, Any]:
        self._advance(job)
        counts = _counts(job)
        if job.cancelled:
            status = "cancelled"
        elif job.done is None:
            status = "in_progress"
        elif job.results and all(kind == "expired" for _, kind, _ in job.results):
            status = "expired"
        else:
            status = "completed"
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": job.endpoint,
            "errors": None,
            "input_file_id": job.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id,
            "created_at": int(job.created),
            "in_progress_at": int(job.created),
            "expires_at": int(job.created) + 86400,
            "completed_at": int(job.done) if job.done and not job.cancelled else None,
            "cancelled_at": int(job.done) if job.cancelled and job.done else None,
            "request_counts": {
                "total": len(job.requests),
                "completed": counts["ok"],
                "failed": counts["error"] + counts["expired"],
            },
            "metadata": job.metadata or None,
        }

    def _openai_list(self, incoming: Incoming) -> dict[str, Any]:
        jobs = [j for j in self.jobs.values() if j.wire == "openai"]
        jobs.sort(key=lambda j: j.created, reverse=True)
        limit = int(incoming.query_value("limit") or 20)
        after = incoming.query_value("after")
        if after is not None:
            ids = [j.id for j in jobs]
            jobs = jobs[ids.index(after) + 1 :] if after in ids else []
        page = jobs[:limit]
        return {
            "object": "list",
            "data": [self._openai_json(j) for j in page],
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
            "has_more": len(jobs) > limit,
        }

    def _openai_files(self, job: _Job) -> None:
        """Write the output and error files of a finished OpenAI batch."""
        output, errors = [], []
        for custom_id, kind, payload in job.results:
            line: dict[str, Any] = {"id": new_id("batch_req_", 24), "custom_id": custom_id}
            if kind == "ok":
                line["response"] = {
                    "status_code": 200,
                    "request_id": new_id("req_", 24),
                    "body": payload,
                }
                line["error"] = None
                output.append(line)
            elif kind == "error":
                line["response"] = {
                    "status_code": payload[0],
                    "request_id": new_id("req_", 24),
                    "body": payload[1],
                }
                line["error"] = None
                errors.append(line)
            else:
                line["response"] = None
                line["error"] = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the "
                    "completion window expired.",
                }
                errors.append(line)
        for lines, attribute in ((output, "output_file_id"), (errors, "error_file_id")):
            if lines:
                file_id = new_id("file-", 24)
                content = "".join(job.line(line["custom_id"], line) for line in lines).encode()
                self.files[file_id] = (
                    f"{job.id}_{attribute}.jsonl",
                    "batch_output",
                    content,
                    time.time(),
                )
                setattr(job, attribute, file_id)

    # -- Anthropic -----------------------------------------------------------------------

    def _anthropic(self, incoming: Incoming, path: str, method: str) -> Outcome:
        if path.endswith("/v1/messages/batches"):
            if method == "POST":
                return json_send(200, self._anthropic_json(self._anthropic_create(_json(incoming))))
            jobs = sorted(
                (j for j in self.jobs.values() if j.wire == "anthropic"),
                key=lambda j: j.created,
                reverse=True,
            )
            data = [
                self._anthropic_json(j) for j in jobs[: int(incoming.query_value("limit") or 20)]
            ]
            return json_send(
                200,
                {
                    "data": data,
                    "has_more": len(jobs) > len(data),
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                },
            )
        tail = path.split("/v1/messages/batches/", 1)[1].split("/")
        job = self._job(tail[0], "anthropic")
        if len(tail) == 2 and tail[1] == "cancel" and method == "POST":
            self._cancel(job)
        if len(tail) == 2 and tail[1] == "results":
            self._advance(job)
            if job.done is None:
                raise BadRequest(f"Batch {job.id} is still processing", status=404)
            lines = "".join(job.line(r[0], _anthropic_result(r)) for r in job.results)
            return Send(200, lines.encode(), "application/binary")
        return json_send(200, self._anthropic_json(job))

    def _anthropic_create(self, body: Mapping[str, Any]) -> _Job:
        items = body.get("requests")
        if not isinstance(items, list) or not items:
            raise BadRequest("requests: Field required")
        if len(items) > 100_000:
            raise BadRequest("requests: a batch may hold 100,000 requests at most")
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for item in items:
            custom_id = item.get("custom_id") if isinstance(item, Mapping) else None
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 64 or custom_id in seen:
                raise BadRequest("custom_id must be 1 to 64 characters and unique in a batch")
            seen.add(custom_id)
            requests.append((custom_id, dict(item.get("params") or {})))
        job = _Job("anthropic", new_id("msgbatch_", 24), requests, time.time())
        with self._lock:
            self.jobs[job.id] = job
        return job

    def _anthropic_json(self, job: _Job) -> dict[str, Any]:
        self._advance(job)
        counts = _counts(job)
        ended = job.done is not None
        return {
            "id": job.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(job.requests),
                "succeeded": counts["ok"],
                "errored": counts["error"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "ended_at": _stamp(job.done) if job.done is not None else None,
            "created_at": _stamp(job.created),
            "expires_at": _stamp(job.created + 86400),
            "archived_at": None,
            "cancel_initiated_at": _stamp(job.done) if job.cancelled and job.done else None,
            "results_url": (
                f"{self._base}/v1/messages/batches/{job.id}/results" if ended else None
            ),
        }

    # -- Gemini --------------------------------------------------------------------------

    def _gemini_create(self, model: str, body: Mapping[str, Any]) -> Outcome:
        batch = body.get("batch") or {}
        source = batch.get("inputConfig") or batch.get("input_config") or {}
        inline = (source.get("requests") or {}).get("requests")
        file_name = source.get("fileName") or source.get("file_name")
        requests = []
        if isinstance(file_name, str):
            file_id = file_name.removeprefix("files/")
            if file_id not in self.files:
                raise BadRequest(f"File {file_name} not found", status=404)
            for number, line in enumerate(self.files[file_id][2].decode().splitlines(), 1):
                if line.strip():
                    item = json.loads(line)
                    requests.append((str(item.get("key", number)), dict(item.get("request") or {})))
        elif isinstance(inline, list) and inline:
            for index, item in enumerate(inline):
                key = str((item.get("metadata") or {}).get("key", index))
                requests.append((key, dict(item.get("request") or {})))
        if not requests:
            raise BadRequest("batch.input_config: inline requests or a file name is required")
        name = batch.get("displayName") or batch.get("display_name") or ""
        job = _Job(
            "gemini",
            "batches/" + new_id("", 20).lower(),
            requests,
            time.time(),
            model=model.split("/")[-1],
            display_name=str(name),
            input_file_id=file_name if isinstance(file_name, str) else None,
        )
        with self._lock:
            self.jobs[job.id] = job
        return json_send(200, self._gemini_json(job))

    def _gemini(self, path: str, method: str) -> Outcome:
        tail = path.split("/batches", 1)[1].strip("/")
        if not tail:
            jobs = sorted(
                (j for j in self.jobs.values() if j.wire == "gemini"),
                key=lambda j: j.created,
                reverse=True,
            )
            return json_send(200, {"operations": [self._gemini_json(j) for j in jobs]})
        name, _, action = tail.partition(":")
        job = self._job("batches/" + name, "gemini")
        if action == "cancel" and method == "POST":
            self._cancel(job)
            return json_send(200, {})
        return json_send(200, self._gemini_json(job))

    def _gemini_json(self, job: _Job) -> dict[str, Any]:
        self._advance(job)
        if job.cancelled:
            state = "BATCH_STATE_CANCELLED"
        elif job.done is None:
            state = "BATCH_STATE_RUNNING"
        else:
            state = "BATCH_STATE_SUCCEEDED"
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "name": job.id,
            "model": f"models/{job.model}",
            "displayName": job.display_name,
            "createTime": _stamp(job.created),
            "updateTime": _stamp(job.done or job.created),
            "state": state,
            "batchStats": _gemini_stats(job),
        }
        if job.done is not None:
            metadata["endTime"] = _stamp(job.done)
            if not job.cancelled and job.input_file_id:  # requests in a file, answers in one
                if job.output_file_id is None:
                    lines = "".join(job.line(r[0], _gemini_line(r)) for r in job.results)
                    file_id = new_id("", 16).lower()
                    with self._lock:
                        self.files[file_id] = (
                            f"{job.id}.jsonl",
                            "batch_output",
                            lines.encode(),
                            time.time(),
                        )
                    job.output_file_id = file_id
                metadata["output"] = {"responsesFile": f"files/{job.output_file_id}"}
            elif not job.cancelled:
                metadata["output"] = {
                    "inlinedResponses": {
                        "inlinedResponses": [_gemini_result(result) for result in job.results]
                    }
                }
        return {"name": job.id, "metadata": metadata, "done": job.done is not None}

    def _gemini_upload(self, incoming: Incoming) -> Outcome:
        """Gemini's resumable upload: ``start`` answers with an upload URL; ``upload`` sends
        bytes there, and ``finalize`` makes them a file."""
        command = incoming.headers.get("x-goog-upload-command", "")
        if command == "start":
            upload_id = new_id("", 16).lower()
            with self._lock:
                self.files[upload_id] = ("upload.jsonl", "batch", b"", time.time())
            url = f"{self._base}/upload/v1beta/files?upload_id={upload_id}"
            return Send(200, b"{}", JSON, (("x-goog-upload-url", url),))
        upload_id = incoming.query_value("upload_id") or ""
        if upload_id not in self.files:
            raise BadRequest("No such upload", status=404)
        name, purpose, content, at = self.files[upload_id]
        with self._lock:
            self.files[upload_id] = (name, purpose, content + incoming.body, at)
        if "finalize" not in command:
            return Send(200, b"", JSON, (("x-goog-upload-status", "active"),))
        size = len(self.files[upload_id][2])
        file = {
            "name": f"files/{upload_id}",
            "mimeType": "application/jsonl",
            "sizeBytes": str(size),
            "state": "ACTIVE",
            "uri": f"{self._base}/v1beta/files/{upload_id}",
        }
        return Send(
            200, json.dumps({"file": file}).encode(), JSON, (("x-goog-upload-status", "final"),)
        )

    # -- answering -----------------------------------------------------------------------

    def _job(self, job_id: str, wire: str) -> _Job:
        job = self.jobs.get(job_id)
        if job is None or job.wire != wire:
            raise BadRequest(f"No batch found with id '{job_id}'", status=404)
        return job

    def _cancel(self, job: _Job) -> None:
        with self._lock:
            if job.done is None:
                job.cancelled = True
                job.done = time.time()
                job.results = [(custom_id, "canceled", None) for custom_id, _ in job.requests]
                if job.wire == "openai":
                    self._openai_files(job)

    def _advance(self, job: _Job) -> None:
        """Finish the batch once its time has come: answer every request, in some order."""
        with self._lock:
            if job.done is not None or time.time() < job.created + self.options.seconds:
                return
            options = self.options
            chance = random.Random(f"{options.seed}:{job.id}")
            results: list[tuple[str, str, Any]] = []
            for custom_id, body in job.requests:
                draw = chance.random()
                if draw < options.expire:
                    results.append((custom_id, "expired", None))
                elif draw < options.expire + options.fail:
                    results.append((custom_id, "error", (500, _server_error(job.wire))))
                else:
                    results.append(self._answer(job, custom_id, body))
            if options.shuffle:
                chance.shuffle(results)
            if options.malformed:
                picked = chance.sample(results, min(options.malformed, len(results)))
                job.malformed = {custom_id for custom_id, _, _ in picked}
            job.results = results
            job.done = time.time()
            if job.wire == "openai":
                self._openai_files(job)

    def _answer(self, job: _Job, custom_id: str, body: dict[str, Any]) -> tuple[str, str, Any]:
        """What the online API answers to ``body``: (custom_id, ok, body) or an error."""
        app = self.app
        api, path = self._wire_api(job)
        try:
            call = api.inspect(body, Incoming("POST", path, {}, {}, b""))
        except BadRequest as exc:
            sent = api.error(exc.status, "bad_request", exc.message, param=exc.param)
            return custom_id, "error", (sent.status, json.loads(sent.body))
        item = app.script.take(api.provider, keep_replies=False)
        outcome = app.apply(item, api, call)
        if not isinstance(outcome, Send) or outcome.cut:
            return custom_id, "error", (500, _server_error(job.wire))
        answer = json.loads(outcome.body) if outcome.body else {}
        if outcome.status != 200:
            return custom_id, "error", (outcome.status, answer)
        return custom_id, "ok", answer

    def _wire_api(self, job: _Job) -> tuple[WireAPI, str]:
        app = self.app
        if job.wire == "anthropic":
            return app.anthropic, "/v1/messages"
        if job.wire == "gemini":
            return app.gemini, f"/v1beta/models/{job.model}:generateContent"
        if job.endpoint == "/v1/responses":
            return app.openai_responses, job.endpoint
        return app.openai_chat, job.endpoint


def _counts(job: _Job) -> dict[str, int]:
    counts = {"ok": 0, "error": 0, "expired": 0, "canceled": 0}
    for _, kind, _ in job.results:
        counts[kind] += 1
    return counts


def _gemini_stats(job: _Job) -> dict[str, str]:
    """A Gemini batch's ``batchStats``: int64 counts as JSON strings, zeros left out (proto3
    JSON); requests not yet answered, or never run in a cancelled batch, are pending."""
    counts = _counts(job)
    stats = {
        "requestCount": len(job.requests),
        "successfulRequestCount": counts["ok"],
        "failedRequestCount": counts["error"] + counts["expired"],
        "pendingRequestCount": len(job.requests)
        - counts["ok"]
        - counts["error"]
        - counts["expired"],
    }
    return {name: str(count) for name, count in stats.items() if count}


def _anthropic_result(result: tuple[str, str, Any]) -> dict[str, Any]:
    custom_id, kind, payload = result
    if kind == "ok":
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": payload}}
    if kind == "error":
        return {"custom_id": custom_id, "result": {"type": "errored", "error": payload[1]}}
    return {"custom_id": custom_id, "result": {"type": kind}}


def _gemini_result(result: tuple[str, str, Any]) -> dict[str, Any]:
    key, kind, payload = result
    found: dict[str, Any] = {"metadata": {"key": key}}
    if kind == "ok":
        found["response"] = payload
    elif kind == "error":
        error = payload[1].get("error", {}) if isinstance(payload[1], Mapping) else {}
        found["error"] = {"code": payload[0], "message": error.get("message", "error")}
    else:
        found["error"] = {"code": 504, "message": "The request expired before it was processed."}
    return found


def _gemini_line(result: tuple[str, str, Any]) -> dict[str, Any]:
    """A line of a Gemini output file: the request's key, and its response or error."""
    line = _gemini_result(result)
    line.pop("metadata", None)
    return {"key": result[0], **line}


def _server_error(wire: str) -> dict[str, Any]:
    if wire == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    if wire == "gemini":
        return {
            "error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}
        }
    return {
        "error": {
            "message": "The server had an error processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat().replace("+00:00", "Z")


def _json(incoming: Incoming) -> dict[str, Any]:
    try:
        value = json.loads(incoming.body or b"{}")
    except ValueError as exc:
        raise BadRequest(f"We could not parse the JSON body of your request. ({exc})") from None
    if not isinstance(value, dict):
        raise BadRequest("The request body must be a JSON object.")
    return value


def _multipart(incoming: Incoming) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a ``multipart/form-data`` body: name -> (filename, bytes)."""
    kind = incoming.headers.get("content-type", "")
    if not kind.startswith("multipart/form-data"):
        raise BadRequest("Expected a multipart/form-data body", status=400)
    message = BytesParser(policy=email.policy.default).parsebytes(
        f"Content-Type: {kind}\r\nMIME-Version: 1.0\r\n\r\n".encode() + incoming.body
    )
    fields: dict[str, tuple[str | None, bytes]] = {}
    assert isinstance(message, EmailMessage)
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields


__all__ = ["JSON", "BatchOptions", "Batches"]
