"""Claude on Vertex AI and on Amazon Bedrock: Anthropic's Messages body at the clouds' paths.

* **Vertex AI** (``anthropic.AnthropicVertex``): ``POST /v1/projects/{project}/locations/
  {region}/publishers/anthropic/models/{model}:rawPredict`` for a whole reply and
  ``:streamRawPredict`` for Anthropic's SSE stream. The model is in the path, not the body, and
  the body carries ``anthropic_version``; the credential is a Google access token (Bearer).
* **Bedrock Invoke** (``anthropic.AnthropicBedrock``): ``POST /model/{model id}/invoke`` and
  ``/model/{model id}/invoke-with-response-stream``. Neither ``model`` nor ``stream`` is in the
  body (the path says both), ``anthropic_version`` is. A stream is AWS event-stream messages,
  each a ``chunk`` whose payload is ``{"bytes": base64(event JSON)}``; a failure inside it is an
  ``exception`` message. Errors are ``{"message": ...}`` with ``x-amzn-ErrorType``. The
  credential is a Bedrock API key (Bearer) or a SigV4 ``Authorization`` header.

Everything else (what a body may hold, the answers) is the Messages API's, so both subclass
:class:`~._anthropic.AnthropicMessages` and share its queue, ``"anthropic"``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import _eventstream
from ._anthropic import _MESSAGES, AnthropicMessages
from ._api import BadRequest, Failure, new_id
from ._bedrock import STATUS_TYPES
from ._call import Call, Turn
from ._http import Incoming, Outcome, Send, Stream, dumps, json_send

__all__ = ["BEDROCK_PATH", "VERTEX_PATH", "BedrockInvoke", "VertexRawPredict"]

VERTEX_PATH = re.compile(
    r"/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):"
    r"(rawPredict|streamRawPredict)$"
)
BEDROCK_PATH = re.compile(r"/model/([^/]+)/(invoke|invoke-with-response-stream)$")
_SSE_DATA = re.compile(rb"^data: ?(.*)$", re.MULTILINE)


def _versioned(body: Mapping[str, Any]) -> None:
    if not isinstance(body.get("anthropic_version"), str) or not body["anthropic_version"]:
        raise BadRequest("anthropic_version: Field required")
    if "model" in body:
        raise BadRequest("model: Extra inputs are not permitted")


class VertexRawPredict(AnthropicMessages):
    """Claude through Vertex AI's ``:rawPredict`` and ``:streamRawPredict``."""

    name = "anthropic.vertex"

    @classmethod
    def serves(cls, path: str) -> bool:
        return VERTEX_PATH.search(path) is not None

    def authorized(self, incoming: Incoming) -> bool:
        """A Google access token, as ``Authorization: Bearer``."""
        auth = incoming.headers.get("authorization", "")
        return auth.lower().startswith("bearer ") and bool(auth[7:].strip())

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        match = VERTEX_PATH.search(incoming.path)
        assert match is not None  # routed here by this pattern
        _versioned(body)
        stream = match.group(4) == "streamRawPredict"
        if stream != (body.get("stream") is True):
            raise BadRequest(f"stream must be {str(stream).lower()} for :{match.group(4)}")
        return super().inspect({**body, "model": match.group(3)}, incoming)


class BedrockInvoke(AnthropicMessages):
    """Claude through Bedrock's ``InvokeModel`` and ``InvokeModelWithResponseStream``."""

    name = "anthropic.bedrock"

    @classmethod
    def serves(cls, path: str) -> bool:
        return BEDROCK_PATH.search(path) is not None

    def authorized(self, incoming: Incoming) -> bool:
        """A Bedrock API key (``Bearer``) or a SigV4 signature (``AWS4-HMAC-SHA256 ...``)."""
        auth = incoming.headers.get("authorization", "").strip()
        kind, _, rest = auth.partition(" ")
        return kind.lower() in ("bearer", "aws4-hmac-sha256") and bool(rest.strip())

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        match = BEDROCK_PATH.search(incoming.path)
        assert match is not None  # routed here by this pattern
        _versioned(body)
        if "stream" in body:
            raise BadRequest("stream: Extra inputs are not permitted")
        stream = match.group(2) == "invoke-with-response-stream"
        return super().inspect({**body, "model": match.group(1), "stream": stream}, incoming)

    def render(self, call: Call, turn: Turn) -> Outcome:
        """Anthropic's answer; a stream's SSE events re-framed as event-stream chunks."""
        outcome = super().render(call, turn)
        if not isinstance(outcome, Stream):
            return outcome
        frames = tuple(_chunk(frame) for frame in outcome.frames if b"event: ping" not in frame)
        return replace(outcome, frames=frames, content_type=_eventstream.CONTENT_TYPE)

    def envelope(self, failure: Failure) -> Send:
        """``{"message": ...}`` with the exception's name in ``x-amzn-ErrorType``."""
        kind = STATUS_TYPES.get(failure.status, "InternalServerException")
        own = (("x-amzn-errortype", f"{kind}:"), ("x-amzn-requestid", new_id("", 32)))
        body = {"message": failure.message or _MESSAGES[failure.reason]}
        return json_send(failure.status, body, own)

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """An ``exception`` message, which the SDK raises as an in-stream ``error`` event."""
        headers = {
            ":message-type": "exception",
            ":exception-type": "modelStreamErrorException",
            ":content-type": "application/json",
        }
        payload = dumps({"message": message or "The model stream failed"})
        return _eventstream.message(headers, payload)


def _chunk(frame: bytes) -> bytes:
    """One SSE frame's JSON as an event-stream ``chunk``."""
    match = _SSE_DATA.search(frame)
    data = match.group(1).strip() if match else frame
    payload = dumps({"bytes": base64.b64encode(data).decode(), "p": "abcdefghij"})
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return _eventstream.message(headers, payload)
