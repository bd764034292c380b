"""The dispatcher: route a request, record it, check it, and pick the scripted answer.

Order of decisions for a provider route, mirroring a real service:

1. record the request (always, even when it fails below);
2. credentials (the provider's 401, Gemini's 400 ``API_KEY_INVALID``);
3. body parsing and required fields (the provider's 400);
4. a fault-naming model (``error-429``…), for clients that cannot reach the script;
5. the next queued item: a fault is applied as-is, while a reply is only used once the
   request's strict schemas pass (otherwise the provider's 400, and the reply stays queued);
6. nothing queued: the default answer (forced tool call, schema-valid value, or text).
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from math import ceil
from typing import Any
from urllib.parse import unquote

from ._anthropic import AnthropicMessages
from ._anthropic_clouds import BedrockInvoke, VertexRawPredict
from ._api import BadRequest, EmulatedAPI, Reason, Splitter, count_tokens, output_tokens, splitting
from ._batches import BatchStore
from ._bedrock import BedrockConverse
from ._call import Call, Turn
from ._gemini import CACHES_PATH as GEMINI_CACHES_PATH
from ._gemini import GeminiGenerate
from ._http import Drop, Incoming, Outcome, Send, Stream, json_send
from ._limits import Limits
from ._ollama import VERSION, OllamaChat, tags
from ._openai_chat import OpenAIChat
from ._openai_responses import OpenAIResponses
from ._personas import Persona
from ._prompt_cache import PromptCache
from ._script import (
    DEFAULT_TEXT,
    APIFamily,
    CutStream,
    Disconnect,
    HttpError,
    Item,
    Mutated,
    Overloaded,
    RateLimited,
    RecordedRequest,
    ReplyAuto,
    ReplyRaw,
    SchemaRejected,
    Script,
    Slow,
    StreamError,
    Unauthorized,
    reaches_model,
    resolve_turn,
)

_FAULT_MODEL = re.compile(r"^error-(\d{3})$")

#: The HTTP APIs the emulator serves, in the order they are asked whether they serve a path;
#: each module brings its API, and the API names its batch API.
APIS: tuple[type[EmulatedAPI], ...] = (
    OpenAIResponses,
    OpenAIChat,
    AnthropicMessages,
    VertexRawPredict,
    BedrockInvoke,
    GeminiGenerate,
    OllamaChat,
    BedrockConverse,
)


class App:
    """Everything the emulator does, minus the sockets (see ``_server``)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        strict_schemas: bool = True,
        default_text: str = DEFAULT_TEXT,
        apis: Sequence[type[EmulatedAPI]] = (),
    ) -> None:
        classes = (*apis, *APIS)  # the caller's first: they may claim any path
        self.script = Script(dict.fromkeys(api.provider for api in classes))
        #: How streamed text and tool arguments are cut into deltas (None: 12 characters).
        self.split: Splitter | None = None
        self.seed = seed
        self.strict_schemas = strict_schemas
        self.default_text = default_text
        self.prompt_cache = PromptCache()
        self.apis = tuple(api(self.prompt_cache) for api in classes)
        #: Per API family: how its SDKs' base URL ends, and whether they present a key.
        self.base_paths: dict[str, tuple[str, bool]] = {
            api.provider: (api.base_path, api.needs_key) for api in reversed(classes)
        }
        #: Per API family, the rate limits it keeps to (``Emulator.rate_limit``); none by default.
        self.limits: dict[APIFamily, Limits] = {}
        #: Whether default answers differ per request (``Emulator.vary_answers``).
        self.vary = False
        #: The batch APIs' files and jobs (``_batches``), asked in this order.
        batches = dict.fromkeys(api.batches for api in classes if api.batches is not None)
        self.batches = BatchStore(self, batches)
        #: The endpoint whose quirks the emulator plays (``Emulator.persona``); None: none.
        self.persona: Persona | None = None

    # -- routing ---------------------------------------------------------------------------

    def api_named(self, name: str) -> EmulatedAPI:
        """The online API called ``name`` (``EmulatedAPI.name``)."""
        return next(api for api in self.apis if api.name == name)

    def route(self, method: str, path: str) -> EmulatedAPI | None:
        """The API serving ``POST path`` (a path prefix before ``/v1`` is allowed)."""
        if method != "POST":
            return None
        return next((api for api in self.apis if api.serves(path)), None)

    def handle(self, incoming: Incoming) -> Outcome:
        """Answer one request."""
        incoming = replace(incoming, path=unquote(incoming.path))
        batch = self.batches.route(incoming)
        if batch is not None:
            name, outcome = batch
            body = (
                _parse(incoming.body)[0]
                if "multipart" not in incoming.headers.get("content-type", "")
                else None
            )
            provider = name if name in ("openai", "anthropic", "gemini") else None
            self._record(incoming, provider, f"{name}.batches", body, None)  # type: ignore[arg-type]
            return outcome
        api = self.route(incoming.method, incoming.path)
        if api is None:
            return self._info(incoming)
        body, parse_error = _parse(incoming.body)
        call: Call | None = None
        bad: BadRequest | None = None
        if parse_error is None:
            try:
                call = api.inspect(body, incoming)
            except BadRequest as exc:
                bad = exc
        self._record(incoming, api.provider, api.name, body, call)
        if not api.authorized(incoming):
            return api.missing_key()
        if parse_error is not None:
            return api.error(400, "bad_request", parse_error)
        if bad is not None or call is None:
            message = bad.message if bad else "Invalid request."
            status = bad.status if bad else 400
            return api.error(status, "bad_request", message, param=bad.param if bad else None)
        persona = self.persona
        if persona is not None and persona.api == api.name:
            refusal = persona.refusal(call, incoming)
            if refusal is not None:
                return api.error(
                    refusal.status,
                    "bad_request",
                    refusal.message,
                    param=refusal.param,
                    code=refusal.code,
                )
            call = persona.reshape(call)
        key = presented_key(incoming)
        limits = self.limits.get(api.provider)
        if limits is None:
            return self._answer(api, call, key, None)
        tokens = count_tokens(call.body)
        wait = limits.admit(tokens)
        if wait > 0:
            return api.error(
                429,
                "rate_limit",
                f"Rate limit reached for {call.model}. Please try again in {wait:.3f}s.",
                headers=(*limits.headers(api.provider), *_retry_headers(wait, ceil(wait * 1000))),
                retry_after=wait,
            )
        turns: list[Turn] = []
        outcome = self._answer(api, call, key, turns)
        limits.charge(tokens + sum(output_tokens(turn) for turn in turns))
        if isinstance(outcome, (Send, Stream)):
            outcome = replace(outcome, headers=(*outcome.headers, *limits.headers(api.provider)))
        return outcome

    def _answer(self, api: EmulatedAPI, call: Call, key: str, turns: list[Turn] | None) -> Outcome:
        """A fault its model names, else the next queued item (or the default answer)."""
        fault = _fault_for_model(call.model)
        if fault is not None:
            return self.apply(fault, api, call, key, turns)
        problem = api.schema_problem(call) if self.strict_schemas else None
        item = self.script.take(api.provider, keep_replies=problem is not None)
        if problem is not None and reaches_model(item):
            return api.error(400, "schema", problem.message, param=problem.param, code=problem.code)
        return self.apply(item, api, call, key, turns)

    # -- applying scripted items -------------------------------------------------------------

    def apply(
        self,
        item: Item | None,
        api: EmulatedAPI,
        call: Call,
        key: str = "",
        turns: list[Turn] | None = None,
    ) -> Outcome:
        """The outcome of one queued reply or fault (``None`` is the default answer).

        ``key`` is the API key the request presented, repeated in messages of faults made
        with ``echo_key=True``; the answer given is appended to ``turns`` when one is passed.
        """
        if item is None:
            item = ReplyAuto()
        message = _echoed(item, key)
        if isinstance(item, ReplyRaw):
            if item.frames is not None:
                return Stream(item.status, item.frames, item.content_type, item.headers)
            return Send(item.status, item.body, item.content_type, item.headers)
        if isinstance(item, HttpError):
            return api.error(
                item.status,
                _reason(item.status),
                message,
                headers=(*_retry_headers(item.retry_after, item.retry_after_ms), *item.headers),
                retry_after=item.retry_after,
            )
        if isinstance(item, RateLimited):
            # Gemini carries the delay in the body (RetryInfo), not in headers: give it the same wait.
            delay = item.retry_after
            if delay is None and item.retry_after_ms is not None:
                delay = item.retry_after_ms / 1000
            return api.error(
                429,
                "rate_limit",
                message,
                headers=_retry_headers(item.retry_after, item.retry_after_ms),
                retry_after=delay,
            )
        if isinstance(item, Overloaded):
            status = 529 if api.provider == "anthropic" else 503
            return api.error(
                status,
                "overloaded",
                message,
                headers=_retry_headers(None, item.retry_after_ms),
            )
        if isinstance(item, Unauthorized):
            return api.error(401, "auth", message)
        if isinstance(item, SchemaRejected):
            param = {
                "openai.responses": "text.format.schema",
                "openai.chat": "response_format",
            }.get(api.name)
            return api.error(
                400,
                "schema",
                message,
                param=param,
                code="invalid_json_schema" if param else None,
            )
        if isinstance(item, Disconnect):
            return Drop()
        if isinstance(item, Slow):
            inner = self.apply(item.then, api, call, key, turns)
            return replace(inner, delay=inner.delay + item.seconds)
        if isinstance(item, CutStream):
            inner = self.apply(item.reply, api, call, key, turns)
            if isinstance(inner, Stream):
                return replace(inner, cut_after=item.after)
            return replace(inner, cut=True) if isinstance(inner, Send) else inner
        if isinstance(item, Mutated):
            inner = self.apply(item.reply, api, call, key, turns)
            if isinstance(inner, Stream):
                return replace(inner, frames=tuple(item.mutate(inner.frames)))
            if isinstance(inner, Send):
                return replace(inner, body=b"".join(item.mutate((inner.body,))))
            return inner
        if isinstance(item, StreamError):
            inner = self.apply(item.reply, api, call, key, turns)
            if not isinstance(inner, Stream):
                return api.error(500, "server", message)
            head = inner.frames[: item.after]
            return replace(inner, frames=(*head, api.stream_error(message, len(head))))
        turn = resolve_turn(item, call, seed=self.seed_for(call), default_text=self.default_text)
        if turns is not None:
            turns.append(turn)
        with splitting(self.split):
            return api.render(call, turn)

    def seed_for(self, call: Call) -> int:
        """The seed of a default answer: the emulator's, or (``vary_answers``) one drawn from
        the request's body, so each request gets its own answer and the same request the same
        one, sent online or in a batch."""
        if not self.vary:
            return self.seed
        text = json.dumps(call.body, sort_keys=True, default=str)
        return self.seed ^ zlib.crc32(text.encode())

    # -- everything that is not a model call --------------------------------------------------

    def _info(self, incoming: Incoming) -> Outcome:
        """Health and listing endpoints, and a 404 in the right dialect for anything else."""
        path, method = incoming.path, incoming.method
        provider: APIFamily | None = None
        outcome: Outcome
        described = self.persona.describe(method, path) if self.persona is not None else None
        if described is not None:
            outcome = described
        elif method == "GET" and path.endswith("/api/tags"):
            provider, outcome = "ollama", json_send(200, tags())
        elif method == "GET" and path.endswith("/api/version"):
            provider, outcome = "ollama", json_send(200, {"version": VERSION})
        elif method in ("GET", "HEAD") and path in ("", "/"):
            provider, outcome = (
                "ollama",
                Send(200, b"Ollama is running", "text/plain; charset=utf-8"),
            )
        elif method == "GET" and path == "/_alloy/limits":
            outcome = json_send(200, self.limit_counts())
        elif method == "GET" and re.search(r"/v1/models/?$", path):
            provider, outcome = "openai", json_send(200, _model_list())
        elif method == "POST" and GEMINI_CACHES_PATH.search(path):
            provider, outcome = (
                "gemini",
                self._gemini.create_cache(incoming, _parse(incoming.body)[0]),
            )
        elif path.startswith("/api/"):
            outcome = Send(404, b"404 page not found", "text/plain")
        else:
            outcome = json_send(
                404,
                {
                    "error": {
                        "message": f"Unknown request URL: {method} {path}. Please check the URL for typos.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "unknown_url",
                    }
                },
            )
        body, _ = _parse(incoming.body)
        self._record(incoming, provider, None, body, None)
        return outcome

    @property
    def _gemini(self) -> GeminiGenerate:
        gemini = self.api_named(GeminiGenerate.name)
        assert isinstance(gemini, GeminiGenerate)
        return gemini

    def limit_counts(self) -> dict[str, dict[str, Any]]:
        """Per rate-limited API family: its limits and the requests it admitted and refused (served
        at ``GET /_alloy/limits``, for a client in another process, such as a benchmark)."""
        return {
            family: {
                "rpm": limits.rpm,
                "tpm": limits.tpm,
                "admitted": limits.admitted,
                "refused": limits.refused,
            }
            for family, limits in self.limits.items()
        }

    def _record(
        self,
        incoming: Incoming,
        provider: APIFamily | None,
        api: str | None,
        body: Any,
        call: Call | None,
    ) -> None:
        """Append to the request log (the test's view of what was sent)."""
        self.script.record(
            RecordedRequest(
                provider=provider,
                api=api,
                method=incoming.method,
                path=incoming.path,
                query={k: list(v) for k, v in incoming.query.items()},
                headers=dict(incoming.headers),
                body=body,
                raw_body=incoming.body,
                call=call,
                received_at=time.time(),
            )
        )


def _parse(raw: bytes) -> tuple[Any, str | None]:
    """The JSON body and ``None``, or ``None`` and a parse error message (empty body → ``{}``)."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"We could not parse the JSON body of your request. ({exc})"
    if not isinstance(value, Mapping):
        return value, "The request body must be a JSON object."
    return value, None


def presented_key(incoming: Incoming) -> str:
    """The API key a request carries, in whichever place its SDK puts it ('' for none)."""
    headers = incoming.headers
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    for name in ("x-api-key", "x-goog-api-key", "api-key"):
        if headers.get(name):
            return headers[name]
    keys = incoming.query.get("key") or []
    return keys[0] if keys else ""


def _echoed(item: Item, key: str) -> str | None:
    """The message of a fault, repeating the presented key when the fault echoes it."""
    message: str | None = getattr(item, "message", None)
    if not getattr(item, "echo_key", False):
        return message
    return f"{message or 'The request failed'}. Incorrect API key provided: {key}"


def _fault_for_model(model: str) -> Item | None:
    """``model="error-429"`` and friends: faults for clients that cannot queue them."""
    match = _FAULT_MODEL.match(model)
    if not match:
        return None
    status = int(match.group(1))
    if status == 429:
        return RateLimited()
    if status == 401:
        return Unauthorized()
    if status == 400:
        return SchemaRejected()
    if status == 529:
        return Overloaded()
    return HttpError(status)


def _reason(status: int) -> Reason:
    """The error flavour a bare status stands for."""
    reasons: dict[int, Reason] = {
        400: "bad_request",
        401: "auth",
        404: "not_found",
        429: "rate_limit",
        503: "overloaded",
        529: "overloaded",
    }
    return reasons.get(status, "server" if status >= 500 else "other")


def _retry_headers(seconds: float | None, millis: int | None) -> tuple[tuple[str, str], ...]:
    """``retry-after-ms`` / ``retry-after`` headers, as both SDKs read them."""
    headers: list[tuple[str, str]] = []
    if millis is not None:
        headers.append(("retry-after-ms", str(millis)))
    if seconds is not None:
        headers.append(("retry-after", f"{seconds:g}"))
    return tuple(headers)


def _model_list() -> dict[str, Any]:
    """``GET /v1/models`` in OpenAI's list format."""
    models = ("gpt-4o", "gpt-4o-mini", "gpt-5-mini")
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": 1715367049, "owned_by": "system"}
            for m in models
        ],
    }
