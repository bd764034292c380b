"""What OpenAI's two wire APIs share: Bearer auth, the error envelope and the strict checks.

The envelope is ``{"error": {"message", "type", "param", "code"}}`` with an ``x-request-id``
header (providers.md 5.1); the SDK maps the status to ``BadRequestError``,
``AuthenticationError``, ``RateLimitError``, ``InternalServerError`` and so on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from ._api import BadRequest, EmulatedAPI, Failure, SchemaProblem, count_tokens, new_id, request_id
from ._batches import BatchJob, EmulatedBatchAPI, json_body, multipart
from ._call import Call, ToolDef
from ._http import Incoming, Outcome, Send, json_send, sse_frame
from ._prompt_cache import prefixes
from ._schema_rules import openai_strict_problem

_MESSAGES: dict[str, str] = {
    "missing_key": (
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
        "(with blank username) if you're accessing the API from your browser and are prompted for "
        "a username and password. You can obtain an API key from "
        "https://platform.openai.com/account/api-keys."
    ),
    "auth": (
        "Incorrect API key provided: sk-****. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    ),
    "rate_limit": (
        "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
        "Please try again in 20ms."
    ),
    "overloaded": "The engine is currently overloaded, please try again later",
    "server": "The server had an error while processing your request. Sorry about that!",
    "schema": "Invalid schema for response_format 'response': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    "not_found": "The model does not exist or you do not have access to it.",
    "bad_request": "Invalid request.",
    "other": "The request failed.",
}

_TYPES_CODES: dict[str, tuple[str, str | None]] = {
    "missing_key": ("invalid_request_error", None),
    "auth": ("invalid_request_error", "invalid_api_key"),
    "rate_limit": ("requests", "rate_limit_exceeded"),
    "overloaded": ("server_error", None),
    "server": ("server_error", None),
    "schema": ("invalid_request_error", "invalid_json_schema"),
    "not_found": ("invalid_request_error", "model_not_found"),
    "bad_request": ("invalid_request_error", None),
    "other": ("invalid_request_error", None),
}


#: The longest ``prompt_cache_key`` OpenAI takes.
MAX_PROMPT_CACHE_KEY = 64


class OpenAIBatches(EmulatedBatchAPI):
    """OpenAI's Batch API: ``POST /v1/files`` (multipart, ``purpose=batch``),
    ``GET /v1/files/{id}[/content]``, ``POST /v1/batches``, ``GET /v1/batches[/{id}]`` and
    ``POST /v1/batches/{id}/cancel``. The input file is JSON Lines of ``{custom_id, method, url,
    body}``; the output and error files are JSON Lines of ``{id, custom_id, response:
    {status_code, request_id, body}, error}``."""

    name = "openai"
    server_error: ClassVar[dict[str, Any]] = {
        "error": {
            "message": "The server had an error processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }

    def route(self, incoming: Incoming, path: str, method: str) -> Outcome | None:
        if _google(incoming) or path.endswith(":download"):  # Gemini's, on the same paths
            return None
        if path.endswith("/v1/files") and method == "POST":
            return self._upload(incoming)
        if "/v1/files/" in path and method == "GET":
            file_id = path.split("/")[-2 if path.endswith("/content") else -1]
            if path.endswith("/content"):
                return self.store.file_content(file_id)
            return json_send(200, self._file_json(file_id))
        if not (path.endswith("/v1/batches") or "/v1/batches/batch_" in path):
            return None
        if path.endswith("/v1/batches"):
            if method == "POST":
                return json_send(200, self._json(self._create(json_body(incoming))))
            return json_send(200, self._list(incoming))
        tail = path.split("/v1/batches/", 1)[1].split("/")
        job = self.job(tail[0])
        if len(tail) == 2 and tail[1] == "cancel" and method == "POST":
            self.store.cancel(job)
        return json_send(200, self._json(job))

    def online(self, job: BatchJob) -> tuple[str, str]:
        api = "openai.responses" if job.endpoint == "/v1/responses" else "openai.chat"
        return api, job.endpoint

    def _upload(self, incoming: Incoming) -> Outcome:
        fields = multipart(incoming)
        data = fields.get("file")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if data is None:
            raise BadRequest("'file' is a required property", status=400)
        file_id = self.store.add_file(data[0] or "upload.jsonl", purpose, data[1])
        return json_send(200, self._file_json(file_id))

    def _file_json(self, file_id: str) -> dict[str, Any]:
        name, purpose, content, at = self.store.file(file_id)
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(at),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }

    def _create(self, body: Mapping[str, Any]) -> BatchJob:
        file_id = body.get("input_file_id")
        endpoint = body.get("endpoint")
        if body.get("completion_window") != "24h":
            raise BadRequest("completion_window must be '24h'")
        if endpoint not in ("/v1/chat/completions", "/v1/responses"):
            raise BadRequest(f"endpoint {endpoint!r} is not one the emulator batches")
        content = self.store.file(str(file_id))[2]
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        models: set[str] = set()
        for number, line in enumerate(content.decode().splitlines(), 1):
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
        job = BatchJob(self.name, new_id("batch_", 24), requests, time.time(), endpoint=endpoint)
        job.input_file_id, job.metadata = str(file_id), dict(body.get("metadata") or {})
        return self.add(job)

    def _json(self, job: BatchJob) -> dict[str, Any]:
        self.store.advance(job)
        counts = job.counts()
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

    def _list(self, incoming: Incoming) -> dict[str, Any]:
        jobs = self.jobs()
        limit = int(incoming.query_value("limit") or 20)
        after = incoming.query_value("after")
        if after is not None:
            ids = [j.id for j in jobs]
            jobs = jobs[ids.index(after) + 1 :] if after in ids else []
        page = jobs[:limit]
        return {
            "object": "list",
            "data": [self._json(j) for j in page],
            "first_id": page[0].id if page else None,
            "last_id": page[-1].id if page else None,
            "has_more": len(jobs) > limit,
        }

    def finished(self, job: BatchJob) -> None:
        """Write the output and error files of a finished batch."""
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for custom_id, kind, payload in job.results:
            line: dict[str, Any] = {"id": new_id("batch_req_", 24), "custom_id": custom_id}
            if kind in ("expired", "canceled"):
                line["response"] = None
                line["error"] = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the "
                    "completion window expired.",
                }
            else:
                status, body = (200, payload) if kind == "ok" else payload
                line["response"] = {
                    "status_code": status,
                    "request_id": new_id("req_", 24),
                    "body": body,
                }
                line["error"] = None
            (output if kind == "ok" else errors).append(line)
        for lines, attribute in ((output, "output_file_id"), (errors, "error_file_id")):
            if lines:
                content = "".join(job.line(line["custom_id"], line) for line in lines).encode()
                name = f"{job.id}_{attribute}.jsonl"
                setattr(job, attribute, self.store.add_file(name, "batch_output", content))


class OpenAIBase(EmulatedAPI):
    """Shared behaviour of ``/v1/responses`` and ``/v1/chat/completions``."""

    provider = "openai"
    batches = OpenAIBatches
    base_path = "/v1"

    def authorized(self, incoming: Incoming) -> bool:
        """A Bearer key, or on an Azure path (``/openai/...``) also an ``api-key`` header,
        which ``AzureOpenAI`` sends."""
        if is_azure(incoming.path) and incoming.headers.get("api-key", "").strip():
            return True
        return super().authorized(incoming)

    @staticmethod
    def check_azure(incoming: Incoming) -> None:
        """Azure's 404 for a classic path (``/openai/deployments/...``, ``/openai/responses``)
        without ``?api-version=``; the v1 API (``/openai/v1/...``) takes none."""
        classic = is_azure(incoming.path) and not incoming.path.startswith("/openai/v1/")
        if classic and not incoming.query_value("api-version"):
            raise BadRequest("Resource not found", status=404)

    def cached_tokens(self, call: Call, head: Mapping[str, Any], pieces: list[Any]) -> int:
        """Prompt tokens read from the cache: the longest prefix of ``pieces`` (instructions,
        input items, messages) an earlier request under the same ``prompt_cache_key``, model
        and ``head`` (tools, output format) had. Without a key the emulator caches nothing."""
        key = call.body.get("prompt_cache_key")
        if not isinstance(key, str):
            return 0
        seed = {"model": call.model, "prompt_cache_key": key, **head}
        counted = [(piece, count_tokens(piece), True) for piece in pieces]
        return self.prompt_cache.use(prefixes(seed, counted)).read

    def envelope(self, failure: Failure) -> Send:
        """The OpenAI envelope; 5xx errors are always ``server_error``."""
        reason, code = failure.reason, failure.code
        kind, default_code = _TYPES_CODES[reason]
        if failure.status >= 500 and reason not in ("server", "overloaded"):
            kind = "server_error"
        body = {
            "error": {
                "message": failure.message or _MESSAGES[reason],
                "type": kind,
                "param": failure.param,
                "code": code if code is not None else default_code,
            }
        }
        return json_send(failure.status, body, (("x-request-id", request_id()),))

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        # The Chat flavour (``data: {"error": …}``); Responses overrides with an ``error`` event.
        """The Chat Completions flavour, ``data: {"error": …}`` (the SDK raises APIError)."""
        body = {
            "error": {
                "message": message or _MESSAGES["server"],
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        return sse_frame(body)

    @staticmethod
    def strict_problem(
        schema: Mapping[str, Any] | None, name: str | None, param: str, strict: bool
    ) -> SchemaProblem | None:
        """OpenAI's 400 for a ``strict`` response format that breaks the strict rules."""
        if not strict or schema is None:
            return None
        detail = openai_strict_problem(schema)
        if detail is None:
            return None
        return SchemaProblem(
            f"Invalid schema for response_format '{name or 'response'}': {detail}", param
        )

    @staticmethod
    def strict_tool_problem(tools: tuple[ToolDef, ...], param: str) -> SchemaProblem | None:
        """OpenAI's 400 for a ``strict`` function whose parameters break the strict rules."""
        for index, tool in enumerate(tools):
            if not tool.strict:
                continue
            detail = openai_strict_problem(tool.schema)
            if detail is not None:
                return SchemaProblem(
                    f"Invalid schema for function '{tool.name}': {detail}",
                    param.format(index=index),
                    "invalid_function_parameters",
                )
        return None


def is_azure(path: str) -> bool:
    """Whether ``path`` is one of Azure OpenAI's (classic or v1), which start with ``/openai/``."""
    return path.startswith("/openai/")


def check_prompt_cache_key(body: Mapping[str, Any]) -> None:
    """OpenAI's 400 for a ``prompt_cache_key`` that is not a string of at most 64 characters."""
    key = body.get("prompt_cache_key")
    if key is None:
        return
    if not isinstance(key, str):
        raise BadRequest(
            "Invalid type for 'prompt_cache_key': expected a string.", "prompt_cache_key"
        )
    if len(key) > MAX_PROMPT_CACHE_KEY:
        raise BadRequest(
            f"Invalid 'prompt_cache_key': string too long. Expected a string with maximum "
            f"length {MAX_PROMPT_CACHE_KEY}, but got a string with length {len(key)} instead.",
            "prompt_cache_key",
        )


def forced_tool(choice: Any, tools: tuple[ToolDef, ...]) -> str | None:
    """The tool a ``tool_choice`` forces: ``"required"`` means the first offered tool."""
    if choice == "required":
        return tools[0].name if tools else None
    if isinstance(choice, Mapping):
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        if choice.get("mode") == "required" and isinstance(choice.get("tools"), list):
            names = [t.get("name") for t in choice["tools"] if isinstance(t, Mapping)]
            return next((n for n in names if isinstance(n, str)), None)
    return None


def _google(incoming: Incoming) -> bool:
    """Whether a request comes from google-genai (a Google key, or its resumable upload)."""
    headers, query = incoming.headers, incoming.query
    return any(name in headers for name in ("x-goog-api-key", "x-goog-upload-protocol")) or any(
        name in query for name in ("key", "upload_id")
    )
