"""The contract every provider module fulfils, plus helpers they share.

A provider module reads its wire body into a :class:`Call`, renders a :class:`Turn` in its own
JSON and streaming formats, and wraps failures in its own error envelope.  The dispatcher in
``_app`` only talks to this interface, so adding an API (with its batch API) is one new module.
"""

from __future__ import annotations

import json
import random
import string
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ._call import Call, Turn
from ._http import Incoming, Outcome, Send
from ._script import APIFamily

if TYPE_CHECKING:
    from ._prompt_cache import PromptCache

#: Why an error is being sent; each provider maps this to its own error type and message.
Reason = Literal[
    "missing_key",
    "auth",
    "rate_limit",
    "overloaded",
    "server",
    "schema",
    "bad_request",
    "not_found",
    "other",
]

_ALNUM = string.ascii_letters + string.digits
_IDS = random.Random()


class BadRequest(Exception):
    """The body is not a request the provider would accept; carries the message and status
    (400, or another 4xx such as Gemini's 403 for a cache it does not know)."""

    def __init__(self, message: str, param: str | None = None, *, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status


class SchemaProblem(BadRequest):
    """A strict schema the provider rejects; ``code`` is OpenAI's error code."""

    def __init__(
        self, message: str, param: str | None = None, code: str = "invalid_json_schema"
    ) -> None:
        super().__init__(message, param)
        self.code = code


@dataclass(frozen=True)
class Failure:
    """An error to send: its status, why, and what the envelope may carry."""

    status: int
    reason: Reason
    message: str | None = None
    param: str | None = None
    code: str | None = None
    retry_after: float | None = None


class EmulatedAPI(ABC):
    """One HTTP API the emulator plays (OpenAI Responses, Chat Completions, Anthropic Messages,
    Gemini, Ollama...): it reads a body, renders a turn and wraps failures in the provider's
    envelope. ``provider`` is the script queue it answers from; ``name`` is the API's own."""

    provider: ClassVar[APIFamily]
    name: ClassVar[str]
    #: The provider's batch API (an ``EmulatedBatchAPI`` subclass), served beside it; a class
    #: named by several APIs is served once.
    batches: ClassVar[type[Any] | None] = None
    #: How its SDKs' base URL ends, and whether they must present a key (read by ``emu.env()``).
    base_path: ClassVar[str] = ""
    needs_key: ClassVar[bool] = True

    def __init__(self, prompt_cache: PromptCache) -> None:
        #: What the emulator's prompt caches hold, shared by its wire APIs (``_prompt_cache``).
        self.prompt_cache = prompt_cache

    @classmethod
    @abstractmethod
    def serves(cls, path: str) -> bool:
        """Whether a POST to ``path`` (after any prefix) is a call of this API."""

    def authorized(self, incoming: Incoming) -> bool:
        """Whether the request carries a usable key (any non-empty one)."""
        auth = incoming.headers.get("authorization", "")
        return auth.lower().startswith("bearer ") and bool(auth[7:].strip())

    @abstractmethod
    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        """Read the body into a :class:`Call`; raise :class:`BadRequest` for invalid bodies."""

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """The strict-schema rule the request breaks, if any (none by default)."""
        return None

    @abstractmethod
    def render(self, call: Call, turn: Turn) -> Outcome:
        """The successful response for ``turn``: JSON, or a stream if ``call.stream``."""

    def error(
        self,
        status: int,
        reason: Reason,
        message: str | None = None,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        retry_after: float | None = None,
    ) -> Send:
        """An error response in this provider's envelope, followed by ``headers``.

        ``retry_after`` is only for envelopes that carry the delay in the body (Gemini's
        ``RetryInfo``); the headers are passed in ``headers``.
        """
        sent = self.envelope(Failure(status, reason, message, param, code, retry_after))
        return replace(sent, headers=(*sent.headers, *headers)) if headers else sent

    @abstractmethod
    def envelope(self, failure: Failure) -> Send:
        """``failure`` in this provider's error envelope, with the provider's own headers."""

    def missing_key(self) -> Send:
        """The answer to a request without credentials (401 unless the provider differs)."""
        return self.error(401, "missing_key")

    @abstractmethod
    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """The frame this provider sends when a stream fails part-way (``sequence`` = its index)."""


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (bodies are untrusted)."""
    return value if isinstance(value, Mapping) else {}


def new_id(prefix: str, length: int = 24, alphabet: str = _ALNUM) -> str:
    """A random id in a provider's style (``call_…``, ``toolu_01…``, ``chatcmpl-…``).

    Ids only need to be unique, not secret, so a plain PRNG is used: drawing each character
    from the OS entropy source would cost a system call per character on every response.
    """
    return prefix + "".join(_IDS.choices(alphabet, k=length))


def count_tokens(value: Any) -> int:
    """A stable token estimate (about four characters per token), at least one."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return max(1, len(text) // 4)


def output_tokens(turn: Turn) -> int:
    """Estimated output tokens of an answer."""
    parts = [turn.text or "", turn.refusal or ""]
    parts += [c.name + c.arguments_json for c in turn.tool_calls]
    return count_tokens("".join(parts))


def pieces(text: str, size: int = 12) -> list[str]:
    """Split text into stream deltas; always at least one piece for non-empty text.

    While a reply is rendered under :func:`splitting`, its splitter decides instead.
    """
    split = _SPLITTING.split
    if split is not None and text:
        return [piece for piece in split(text) if piece]
    return [text[i : i + size] for i in range(0, len(text), size)] or []


Splitter = Callable[[str], Sequence[str]]


class _Splitting(threading.local):
    split: Splitter | None = None


_SPLITTING = _Splitting()


@contextmanager
def splitting(split: Splitter | None) -> Iterator[None]:
    """Render the replies of this thread with ``split`` cutting their streamed text and tool
    arguments into deltas (None: the usual 12 characters)."""
    before = _SPLITTING.split
    _SPLITTING.split = split
    try:
        yield
    finally:
        _SPLITTING.split = before


def request_id() -> str:
    """A request id for the ``x-request-id`` / ``request-id`` headers."""
    return new_id("req_", 24)
