"""Gemini ``generateContent`` / ``streamGenerateContent?alt=sse`` (providers.md 1.3 and 3.4).

Served under ``/v1`` (google-genai 3.4's default) and ``/v1beta`` (every public recording).
Streaming is decided by the path.  Each stream event is ``data: {GenerateContentResponse}``
followed by CRLF CRLF; ``finishReason`` and the full ``usageMetadata`` come on the last one.
Request keys are accepted in both proto-JSON spellings (``parametersJsonSchema`` and
``parameters_json_schema``), as the real API does.  A missing key is a 400 ``API_KEY_INVALID``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from ._api import (
    BadRequest,
    EmulatedAPI,
    Failure,
    SchemaProblem,
    count_tokens,
    new_id,
    output_tokens,
    pieces,
)
from ._batches import JSON, BatchJob, EmulatedBatchAPI, json_body, stamp
from ._call import Call, ReceivedToolResult, ReplyToolCall, ToolDef, Turn
from ._http import Incoming, Outcome, Send, Stream, json_send, sse_frame
from ._schema_rules import gemini_problem

#: The Gemini API's ``/v1beta/models/{model}:generateContent``, and Vertex AI's
#: ``/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:...``
#: (express mode drops ``projects/.../locations/...``).
PATH = re.compile(
    r"/(v1|v1beta|v1alpha|v1beta1)/(?:projects/[^/]+/locations/[^/]+/)?(?:publishers/google/)?"
    r"models/([^/]+?):(generateContent|streamGenerateContent)$"
)
#: Where ``client.caches.create`` makes a context cache.
CACHES_PATH = re.compile(r"/(v1|v1beta|v1alpha)/cachedContents$")
_BESIDE_CACHE = (
    "CachedContent can not be used with GenerateContent request setting system_instruction, "
    "tools or tool_config.\n\nProposed fix: move those values to CachedContent from "
    "GenerateContent request."
)

_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "refusal": "SAFETY"}
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MESSAGES: dict[str, str] = {
    "missing_key": "API key not valid. Please pass a valid API key.",
    "auth": "Request had invalid authentication credentials.",
    "rate_limit": "You exceeded your current quota, please check your plan and billing details.",
    "overloaded": "The model is overloaded. Please try again later.",
    "server": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    "schema": "Invalid JSON payload received. Unknown name \"additionalProperties\" at 'generation_config.response_schema': Cannot find field.",
    "not_found": "models/unknown is not found for API version v1, or is not supported for generateContent.",
    "bad_request": "Request contains an invalid argument.",
    "other": "Request failed.",
}
_B64_STANDARD = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_B64_URLSAFE = re.compile(r"[A-Za-z0-9_-]*={0,2}")


def _get(mapping: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A field in either proto-JSON spelling."""
    return mapping.get(camel, mapping.get(snake))


_CREATE_BATCH = ":batchGenerateContent"


class GeminiBatches(EmulatedBatchAPI):
    """The Gemini Batch API: ``POST /v1beta/models/{model}:batchGenerateContent`` with inline
    requests (``{request, metadata: {key}}``) or a file of them, ``GET /v1beta/batches[/{name}]``,
    ``POST /v1beta/batches/{name}:cancel``, and the resumable upload and ``:download`` of files.
    The answers come back inline in the batch's ``output`` (or in a responses file), and its
    ``batchStats`` count the requests. Asked after the other batch APIs: its batch paths are
    the least particular."""

    name = "gemini"
    server_error: ClassVar[dict[str, Any]] = {
        "error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}
    }

    def route(self, incoming: Incoming, path: str, method: str) -> Outcome | None:
        if "x-goog-upload-protocol" in incoming.headers or "upload_id" in incoming.query:
            return self._upload(incoming)
        if path.endswith(":download") and "/files/" in path:
            return self.store.file_content(path.split("/")[-1].split(":")[0])
        if path.endswith(_CREATE_BATCH) and method == "POST":
            model = path.split("/")[-1][: -len(_CREATE_BATCH)]
            return self._create(model, json_body(incoming))
        if "/batches" not in path or "/v1" not in path:
            return None
        tail = path.split("/batches", 1)[1].strip("/")
        if not tail:
            return json_send(200, {"operations": [self._json(j) for j in self.jobs()]})
        name, _, action = tail.partition(":")
        job = self.job("batches/" + name)
        if action == "cancel" and method == "POST":
            self.store.cancel(job)
            return json_send(200, {})
        return json_send(200, self._json(job))

    def online(self, job: BatchJob) -> tuple[str, str]:
        return "gemini.generate", f"/v1beta/models/{job.model}:generateContent"

    def _create(self, model: str, body: Mapping[str, Any]) -> Outcome:
        batch = body.get("batch") or {}
        source = batch.get("inputConfig") or batch.get("input_config") or {}
        inline = (source.get("requests") or {}).get("requests")
        file_name = source.get("fileName") or source.get("file_name")
        requests = []
        if isinstance(file_name, str):
            if file_name.removeprefix("files/") not in self.store.files:
                raise BadRequest(f"File {file_name} not found", status=404)
            content = self.store.files[file_name.removeprefix("files/")][2]
            for number, line in enumerate(content.decode().splitlines(), 1):
                if line.strip():
                    item = json.loads(line)
                    requests.append((str(item.get("key", number)), dict(item.get("request") or {})))
        elif isinstance(inline, list) and inline:
            for index, item in enumerate(inline):
                key = str((item.get("metadata") or {}).get("key", index))
                requests.append((key, dict(item.get("request") or {})))
        if not requests:
            raise BadRequest("batch.input_config: inline requests or a file name is required")
        job = BatchJob(self.name, "batches/" + new_id("", 20).lower(), requests, time.time())
        job.model = model.split("/")[-1]
        job.display_name = str(batch.get("displayName") or batch.get("display_name") or "")
        job.input_file_id = file_name if isinstance(file_name, str) else None
        return json_send(200, self._json(self.add(job)))

    def _json(self, job: BatchJob) -> dict[str, Any]:
        self.store.advance(job)
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
            "createTime": stamp(job.created),
            "updateTime": stamp(job.done or job.created),
            "state": state,
            "batchStats": _batch_stats(job),
        }
        if job.done is not None:
            metadata["endTime"] = stamp(job.done)
            if not job.cancelled and job.input_file_id:  # requests in a file, answers in one
                if job.output_file_id is None:
                    lines = "".join(job.line(r[0], _batch_line(r)) for r in job.results)
                    job.output_file_id = self.store.add_file(
                        f"{job.id}.jsonl", "batch_output", lines.encode(), new_id("", 16).lower()
                    )
                metadata["output"] = {"responsesFile": f"files/{job.output_file_id}"}
            elif not job.cancelled:
                answers = [_batch_result(result) for result in job.results]
                metadata["output"] = {"inlinedResponses": {"inlinedResponses": answers}}
        return {"name": job.id, "metadata": metadata, "done": job.done is not None}

    def _upload(self, incoming: Incoming) -> Outcome:
        """The resumable upload: ``start`` answers with an upload URL; ``upload`` sends bytes
        there, and ``finalize`` makes them a file."""
        command = incoming.headers.get("x-goog-upload-command", "")
        store = self.store
        if command == "start":
            upload_id = store.add_file("upload.jsonl", "batch", b"", new_id("", 16).lower())
            url = f"{store.base}/upload/v1beta/files?upload_id={upload_id}"
            return Send(200, b"{}", JSON, (("x-goog-upload-url", url),))
        upload_id = incoming.query_value("upload_id") or ""
        if upload_id not in store.files:
            raise BadRequest("No such upload", status=404)
        name, purpose, content, at = store.files[upload_id]
        with store.lock:
            store.files[upload_id] = (name, purpose, content + incoming.body, at)
        if "finalize" not in command:
            return Send(200, b"", JSON, (("x-goog-upload-status", "active"),))
        file = {
            "name": f"files/{upload_id}",
            "mimeType": "application/jsonl",
            "sizeBytes": str(len(store.files[upload_id][2])),
            "state": "ACTIVE",
            "uri": f"{store.base}/v1beta/files/{upload_id}",
        }
        final = (("x-goog-upload-status", "final"),)
        return Send(200, json.dumps({"file": file}).encode(), JSON, final)


class GeminiGenerate(EmulatedAPI):
    """``/{v1,v1beta}/models/{model}:generateContent`` and ``:streamGenerateContent``, at the
    Gemini API's paths and Vertex AI's."""

    provider = "gemini"
    name = "gemini.generate"
    batches = GeminiBatches

    @classmethod
    def serves(cls, path: str) -> bool:
        return PATH.search(path) is not None

    def authorized(self, incoming: Incoming) -> bool:
        """``x-goog-api-key``, ``?key=`` or an OAuth Bearer token."""
        key = incoming.headers.get("x-goog-api-key") or incoming.query_value("key") or ""
        return bool(key.strip()) or super().authorized(incoming)

    def missing_key(self) -> Send:
        """Gemini answers a missing key with 400 ``API_KEY_INVALID``, not 401."""
        return self.error(400, "missing_key")

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """Model and streaming come from the path; both proto-JSON key spellings are read."""
        match = PATH.search(incoming.path)
        model = match.group(2) if match else "unknown"
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise BadRequest("* GenerateContentRequest.contents: contents is not specified")
        _check_signatures(contents)
        self._check_cached_content(body)
        config = _get(body, "generationConfig", "generation_config") or {}
        thinking = _get(config, "thinkingConfig", "thinking_config") or {}
        budget = _get(thinking, "thinkingBudget", "thinking_budget")
        if budget is not None and _get(thinking, "thinkingLevel", "thinking_level") is not None:
            raise BadRequest("Only one of thinking_budget and thinking_level may be set.")
        json_schema = _get(config, "responseJsonSchema", "response_json_schema")
        openapi = _get(config, "responseSchema", "response_schema")
        schema = (
            json_schema
            if json_schema is not None
            else (openapi_to_json_schema(openapi) if openapi is not None else None)
        )
        tools = tuple(
            ToolDef(d["name"], _declaration_schema(d))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            for d in _get(t, "functionDeclarations", "function_declarations") or []
            if isinstance(d, Mapping) and isinstance(d.get("name"), str)
        )
        return Call(
            api=self.name,
            model=model,
            stream=bool(match and match.group(3) == "streamGenerateContent"),
            body=body,
            schema=schema,
            json_mode=schema is None
            and _get(config, "responseMimeType", "response_mime_type") == "application/json",
            tools=tools,
            forced_tool=_forced(body, tools),
            tool_results=_tool_results(contents),
        )

    def _check_cached_content(self, body: Mapping[str, Any]) -> None:
        """A named cache must exist, and the request may not add what belongs in it."""
        name = _get(body, "cachedContent", "cached_content")
        if name is None:
            return
        if not isinstance(name, str) or self.prompt_cache.tokens_of(name) is None:
            raise BadRequest("CachedContent not found (or permission denied)", status=403)
        beside = ("systemInstruction", "system_instruction", "tools", "toolConfig", "tool_config")
        if any(body.get(key) for key in beside):
            raise BadRequest(_BESIDE_CACHE)

    def create_cache(self, incoming: Incoming, body: Any) -> Send:
        """``POST /{version}/cachedContents``: remember the cache, answer its ``CachedContent``
        (name, model, times and ``usageMetadata.totalTokenCount``)."""
        if not self.authorized(incoming):
            return self.missing_key()
        if not isinstance(body, Mapping) or not isinstance(body.get("model"), str):
            return self.error(400, "bad_request", "* CachedContent.model: model is required")
        held = [body.get(key) for key in ("contents", "systemInstruction", "tools")]
        tokens = sum(count_tokens(value) for value in held if value)
        name = self.prompt_cache.create(max(1, tokens))
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        later = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() + 3600))
        cached = {
            "name": name,
            "model": body["model"],
            "createTime": now,
            "updateTime": now,
            "expireTime": later,
            "usageMetadata": {"totalTokenCount": max(1, tokens)},
        }
        if isinstance(body.get("displayName"), str):
            cached["displayName"] = body["displayName"]
        return json_send(200, cached)

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """Only ``responseJsonSchema`` has the documented keyword list to enforce."""
        config = _get(call.body, "generationConfig", "generation_config") or {}
        json_schema = _get(config, "responseJsonSchema", "response_json_schema")
        if json_schema is None:
            return None
        detail = gemini_problem(json_schema)
        return SchemaProblem(detail) if detail else None

    def render(self, call: Call, turn: Turn) -> Outcome:
        """One response, or SSE chunks with text spread over them and the finish on the last."""
        response_id = new_id("", 22)
        name = _get(call.body, "cachedContent", "cached_content")
        cached = (self.prompt_cache.tokens_of(name) or 0) if isinstance(name, str) else 0
        # The prompt count includes the cached content, as Gemini reports it.
        prompt = count_tokens(call.body.get("contents", [])) + cached
        completion = output_tokens(turn)
        full_usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        }
        if cached:
            full_usage["cachedContentTokenCount"] = cached

        def response(candidate: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
            """A GenerateContentResponse around one candidate."""
            return {
                "candidates": [candidate],
                "usageMetadata": usage,
                "modelVersion": call.model,
                "responseId": response_id,
            }

        calls = [_function_call_part(c) for c in turn.tool_calls]
        if not call.stream:
            text_parts = [{"text": turn.text}] if turn.text is not None else []
            return json_send(200, response(_candidate(turn, [*text_parts, *calls]), full_usage))
        partial_usage = {
            "promptTokenCount": prompt,
            "totalTokenCount": prompt,
            "promptTokensDetails": full_usage["promptTokensDetails"],
        }
        texts = pieces(turn.text or "") if turn.refusal is None else []
        frames = [
            sse_frame(
                response(
                    {"content": {"parts": [{"text": p}], "role": "model"}, "index": 0},
                    partial_usage,
                ),
                crlf=True,
            )
            for p in (texts[:-1] if not calls else texts)
        ]
        last_parts = calls if calls else [{"text": t} for t in texts[-1:]]
        frames.append(sse_frame(response(_candidate(turn, last_parts), full_usage), crlf=True))
        return Stream(200, tuple(frames), content_type="text/event-stream")

    def envelope(self, failure: Failure) -> Send:
        """``{"error": {"code", "message", "status", "details"}}`` as google.rpc.Status."""
        status, reason, retry_after = failure.status, failure.reason, failure.retry_after
        error: dict[str, Any] = {
            "code": status,
            "message": failure.message or _MESSAGES[reason],
            "status": _STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION"),
        }
        if reason == "missing_key":
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ]
        elif reason == "rate_limit":
            delay = retry_after if retry_after is not None else 20
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay:g}s"},
            ]
        return json_send(status, {"error": error})

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """An error object as a data event; the SDK raises it by its ``code``."""
        error = {
            "code": 503,
            "message": message or _MESSAGES["overloaded"],
            "status": "UNAVAILABLE",
        }
        return sse_frame({"error": error}, crlf=True)


def _candidate(turn: Turn, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A candidate; a refusal is a SAFETY stop without content, an empty answer has no parts."""
    if turn.refusal is not None:
        return {
            "finishReason": "SAFETY",
            "index": 0,
            "safetyRatings": [
                {
                    "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                    "probability": "HIGH",
                    "blocked": True,
                }
            ],
        }
    content: dict[str, Any] = {"role": "model"}
    if parts:
        content["parts"] = parts
    return {"content": content, "finishReason": _FINISH[turn.stop], "index": 0}


def _function_call_part(call: ReplyToolCall) -> dict[str, Any]:
    """A ``functionCall`` part; ``id`` and ``thoughtSignature`` only when scripted."""
    function: dict[str, Any] = {"name": call.name, "args": call.args}
    if call.id:
        function["id"] = call.id
    part: dict[str, Any] = {"functionCall": function}
    if call.signature is not None:
        part["thoughtSignature"] = base64.b64encode(call.signature).decode()
    return part


def _declaration_schema(declaration: Mapping[str, Any]) -> Mapping[str, Any]:
    """The JSON Schema of a declaration, whichever of its three spellings was sent."""
    json_schema = _get(declaration, "parametersJsonSchema", "parameters_json_schema")
    if isinstance(json_schema, Mapping):
        return json_schema
    openapi = declaration.get("parameters")
    return openapi_to_json_schema(openapi) if isinstance(openapi, Mapping) else {}


def _forced(body: Mapping[str, Any], tools: tuple[ToolDef, ...]) -> str | None:
    """``functionCallingConfig.mode: ANY`` forces a call (to the first allowed function)."""
    config = _get(body, "toolConfig", "tool_config") or {}
    calling = _get(config, "functionCallingConfig", "function_calling_config") or {}
    if not isinstance(calling, Mapping) or str(calling.get("mode", "")).upper() != "ANY":
        return None
    allowed = _get(calling, "allowedFunctionNames", "allowed_function_names") or []
    if allowed:
        return str(allowed[0])
    return tools[0].name if tools else None


def _tool_results(contents: list[Any]) -> tuple[ReceivedToolResult, ...]:
    """``functionResponse`` parts across all turns."""
    results = []
    for content in contents:
        for part in (content.get("parts") or []) if isinstance(content, Mapping) else []:
            response = (
                _get(part, "functionResponse", "function_response")
                if isinstance(part, Mapping)
                else None
            )
            if isinstance(response, Mapping):
                results.append(
                    ReceivedToolResult(
                        response.get("id"), response.get("name"), response.get("response")
                    )
                )
    return tuple(results)


def _check_signatures(contents: list[Any]) -> None:
    """Reject a ``thoughtSignature`` that is not base64 (standard or URL-safe alphabet)."""
    for ci, content in enumerate(contents):
        for pi, part in enumerate(
            (content.get("parts") or []) if isinstance(content, Mapping) else []
        ):
            signature = (
                _get(part, "thoughtSignature", "thought_signature")
                if isinstance(part, Mapping)
                else None
            )
            if signature is not None and not _is_base64(signature):
                raise BadRequest(
                    f"Invalid value at 'contents[{ci}].parts[{pi}].thought_signature' (TYPE_BYTES), "
                    f'Base64 decoding failed for "{signature}"'
                )


def _is_base64(value: Any) -> bool:
    """Whether ``value`` decodes as base64 in the standard or the URL-safe alphabet."""
    if not isinstance(value, str):
        return False
    for pattern, decode in (
        (_B64_STANDARD, base64.b64decode),
        (_B64_URLSAFE, base64.urlsafe_b64decode),
    ):
        if pattern.fullmatch(value):
            try:
                decode(value + "=" * (-len(value) % 4))
            except (binascii.Error, ValueError):
                continue
            return True
    return False


_OPENAPI_KEYS = {
    "any_of": "anyOf",
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "additional_properties": "additionalProperties",
    "property_ordering": "propertyOrdering",
}


def openapi_to_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset ``Schema`` (``STRING``, ``nullable``, snake_case) as JSON Schema."""
    if isinstance(schema, list):
        return [openapi_to_json_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = str(_OPENAPI_KEYS.get(raw_key, raw_key))
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key in ("properties", "defs", "$defs"):
            out["$defs" if key == "defs" else key] = {
                name: openapi_to_json_schema(sub) for name, sub in (value or {}).items()
            }
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = openapi_to_json_schema(value)
        elif key == "nullable":
            continue
        else:
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _batch_stats(job: BatchJob) -> dict[str, str]:
    """A batch's ``batchStats``: int64 counts as JSON strings, zeros left out (proto3 JSON);
    requests not yet answered, or never run in a cancelled batch, are pending."""
    counts = job.counts()
    answered = counts["ok"] + counts["error"] + counts["expired"]
    stats = {
        "requestCount": len(job.requests),
        "successfulRequestCount": counts["ok"],
        "failedRequestCount": counts["error"] + counts["expired"],
        "pendingRequestCount": len(job.requests) - answered,
    }
    return {name: str(count) for name, count in stats.items() if count}


def _batch_result(result: tuple[str, str, Any]) -> dict[str, Any]:
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


def _batch_line(result: tuple[str, str, Any]) -> dict[str, Any]:
    """A line of an output file: the request's key, and its response or error."""
    line = _batch_result(result)
    line.pop("metadata", None)
    return {"key": result[0], **line}
