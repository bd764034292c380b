"""The store behind the providers' batch APIs: files, jobs and their lifecycle, with time
compressed, so the real SDKs drive whole batch flows.

Each provider's emulator module defines its batch API's routes and JSON shapes as a
:class:`EmulatedBatchAPI` (``OpenAIBatches`` in ``_openai``, ``AnthropicBatches`` in ``_anthropic``,
``GeminiBatches`` in ``_gemini``); the :class:`BatchStore` holds what they share: the uploaded
and written files, the jobs, and how a job finishes. Each request of a batch is answered exactly
as the same request sent online would be (its online API reads it, the script's next item or
the default answer, rendered in that API's JSON), so a batch holds only what the online API
accepts. :class:`BatchOptions` sets how long a batch takes and which of its requests fail,
expire, or come back out of order.
"""

from __future__ import annotations

import email.policy
import json
import random
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any, ClassVar, Protocol

from ._api import BadRequest, EmulatedAPI, new_id
from ._call import Call
from ._http import JSON, Incoming, Outcome, Send, json_send
from ._script import Item, Script

JSONL = "application/jsonl"


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
class BatchJob:
    """One batch: its requests as (custom id, body), and once done its results."""

    api: str  #: the name of the batch API that made it (``EmulatedBatchAPI.name``)
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

    def counts(self) -> dict[str, int]:
        """How many results are ok, error, expired and canceled."""
        counts = {"ok": 0, "error": 0, "expired": 0, "canceled": 0}
        for _, kind, _ in self.results:
            counts[kind] += 1
        return counts


class Answering(Protocol):
    """What batches need of the emulator's dispatcher (``_app.App``): its online APIs by name,
    its script, and how it answers one request."""

    @property
    def script(self) -> Script: ...

    def api_named(self, name: str) -> EmulatedAPI: ...

    def apply(self, item: Item | None, api: EmulatedAPI, call: Call) -> Outcome: ...


class EmulatedBatchAPI:
    """One provider's batch API: its routes and JSON shapes over the shared :class:`BatchStore`.

    ``route`` answers the paths it serves (None for any other); ``online`` names the online API
    (``EmulatedAPI.name``) and path that answer a job's requests; ``finished`` runs when a job
    is done or cancelled (OpenAI writes its output files then); ``server_error`` is the body of
    a request the batch failed.
    """

    name: ClassVar[str]
    server_error: ClassVar[dict[str, Any]]

    def __init__(self, store: BatchStore) -> None:
        self.store = store

    def route(self, incoming: Incoming, path: str, method: str) -> Outcome | None:
        raise NotImplementedError

    def online(self, job: BatchJob) -> tuple[str, str]:
        raise NotImplementedError

    def finished(self, job: BatchJob) -> None:
        """Nothing by default."""

    def jobs(self) -> list[BatchJob]:
        """This API's jobs, newest first."""
        mine = [job for job in self.store.jobs.values() if job.api == self.name]
        return sorted(mine, key=lambda job: job.created, reverse=True)

    def job(self, job_id: str) -> BatchJob:
        """A job of this API, or its 404."""
        job = self.store.jobs.get(job_id)
        if job is None or job.api != self.name:
            raise BadRequest(f"No batch found with id '{job_id}'", status=404)
        return job

    def add(self, job: BatchJob) -> BatchJob:
        with self.store.lock:
            self.store.jobs[job.id] = job
        return job


class BatchStore:
    """Every batch and file the emulator holds, and the batch APIs that serve them."""

    def __init__(self, app: Answering, apis: Iterable[type[EmulatedBatchAPI]]) -> None:
        self.app = app
        self.options = BatchOptions()
        self.files: dict[str, tuple[str, str, bytes, float]] = {}  # id: name, purpose, bytes, at
        self.jobs: dict[str, BatchJob] = {}
        self.lock = threading.RLock()
        self.base = "http://127.0.0.1"  # where results are fetched from (the Host asked)
        #: Asked in this order; each answers only the paths it serves.
        self.apis: Sequence[EmulatedBatchAPI] = tuple(api(self) for api in apis)
        self._by_name = {api.name: api for api in self.apis}

    def reset(self) -> None:
        with self.lock:
            self.files.clear()
            self.jobs.clear()
            self.options = BatchOptions()

    def route(self, incoming: Incoming) -> tuple[str, Outcome] | None:
        """The batch API's name and its answer for a batch or file endpoint; None for any
        other path."""
        path, method = incoming.path.rstrip("/"), incoming.method
        self.base = f"http://{incoming.headers.get('host', '127.0.0.1')}"
        for api in self.apis:
            try:
                outcome = api.route(incoming, path, method)
            except BadRequest as exc:
                return "batch", json_send(exc.status, {"error": {"message": exc.message}})
            if outcome is not None:
                return api.name, outcome
        return None

    # -- files ---------------------------------------------------------------------------------

    def add_file(self, name: str, purpose: str, content: bytes, file_id: str = "") -> str:
        file_id = file_id or new_id("file-", 24)
        with self.lock:
            self.files[file_id] = (name, purpose, content, time.time())
        return file_id

    def file(self, file_id: str) -> tuple[str, str, bytes, float]:
        """A file, or its 404."""
        if file_id not in self.files:
            raise BadRequest(f"No such File object: {file_id}", status=404)
        return self.files[file_id]

    def file_content(self, file_id: str) -> Outcome:
        return Send(200, self.file(file_id)[2], JSONL)

    # -- the lifecycle -------------------------------------------------------------------------

    def cancel(self, job: BatchJob) -> None:
        with self.lock:
            if job.done is None:
                job.cancelled = True
                job.done = time.time()
                job.results = [(custom_id, "canceled", None) for custom_id, _ in job.requests]
                self._by_name[job.api].finished(job)

    def advance(self, job: BatchJob) -> None:
        """Finish the batch once its time has come: answer every request, in some order."""
        with self.lock:
            if job.done is not None or time.time() < job.created + self.options.seconds:
                return
            options = self.options
            api = self._by_name[job.api]
            chance = random.Random(f"{options.seed}:{job.id}")
            results: list[tuple[str, str, Any]] = []
            for custom_id, body in job.requests:
                draw = chance.random()
                if draw < options.expire:
                    results.append((custom_id, "expired", None))
                elif draw < options.expire + options.fail:
                    results.append((custom_id, "error", (500, api.server_error)))
                else:
                    results.append((custom_id, *self._answer(api, job, body)))
            if options.shuffle:
                chance.shuffle(results)
            if options.malformed:
                picked = chance.sample(results, min(options.malformed, len(results)))
                job.malformed = {custom_id for custom_id, _, _ in picked}
            job.results = results
            job.done = time.time()
            api.finished(job)

    def _answer(
        self, batch: EmulatedBatchAPI, job: BatchJob, body: dict[str, Any]
    ) -> tuple[str, Any]:
        """What the online API answers to ``body``: (ok, body) or (error, (status, body))."""
        name, path = batch.online(job)
        api = self.app.api_named(name)
        try:
            call = api.inspect(body, Incoming("POST", path, {}, {}, b""))
        except BadRequest as exc:
            sent = api.error(exc.status, "bad_request", exc.message, param=exc.param)
            return "error", (sent.status, json.loads(sent.body))
        item = self.app.script.take(api.provider, keep_replies=False)
        outcome = self.app.apply(item, api, call)
        if not isinstance(outcome, Send) or outcome.cut:
            return "error", (500, batch.server_error)
        answer = json.loads(outcome.body) if outcome.body else {}
        if outcome.status != 200:
            return "error", (outcome.status, answer)
        return "ok", answer


def stamp(at: float) -> str:
    """A time as the RFC 3339 string the APIs give."""
    return datetime.fromtimestamp(at, timezone.utc).isoformat().replace("+00:00", "Z")


def json_body(incoming: Incoming) -> dict[str, Any]:
    """The request's JSON object, or the 400 for a body that is not one."""
    try:
        value = json.loads(incoming.body or b"{}")
    except ValueError as exc:
        raise BadRequest(f"We could not parse the JSON body of your request. ({exc})") from None
    if not isinstance(value, dict):
        raise BadRequest("The request body must be a JSON object.")
    return value


def multipart(incoming: Incoming) -> dict[str, tuple[str | None, bytes]]:
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


__all__ = ["JSON", "JSONL", "EmulatedBatchAPI", "BatchOptions", "BatchStore", "BatchJob"]
