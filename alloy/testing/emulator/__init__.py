"""A local provider emulator the real SDKs talk to over HTTP.

It serves OpenAI Responses and Chat Completions, Anthropic Messages, Gemini
``generateContent``/``streamGenerateContent`` and Ollama ``/api/chat`` on 127.0.0.1, in each
provider's exact wire format (JSON, SSE, NDJSON, error envelopes), so adapters and users' tests
exercise the unmodified ``openai``, ``anthropic``, ``google-genai`` and ``ollama`` clients
without a network::

    from alloy.testing.emulator import Emulator, Json, RateLimited

    with Emulator() as emu:
        emu.push("openai", RateLimited(), Json({"city": "Paris"}))
        client = openai.OpenAI(base_url=emu.openai_base_url, api_key="test")
        ...
        assert emu.last_request("openai").retry_count == 1

With nothing queued it answers with a forced tool call (``tool_choice``), a value sampled from
the request's schema, or text.  Queue :class:`Text`, :class:`Json`, :class:`ToolCalls`,
:class:`Refusal`, :class:`MaxTokens`, :class:`MalformedJson`, :class:`Empty` replies, or faults:
:class:`RateLimited`, :class:`HttpError`, :class:`Overloaded`, :class:`Unauthorized`,
:class:`SchemaRejected`, :class:`CutStream`, :class:`StreamError`, :class:`Slow`,
:class:`Disconnect`, or :class:`Mutated` (the usual answer, mangled by a function, for fuzzing);
faults that carry a message take ``echo_key=True`` to repeat the presented API key in it, as
some proxies do. One item is consumed per request.  ``replay()`` queues a recorded exchange.
Requests whose strict schemas break a provider's rules get that provider's 400 (turn this off
with ``Emulator(strict_schemas=False)``).  Clients that cannot reach the script can ask for a
fault by model name (``error-429``, ``error-500``, ``error-529``…).  Run
``python -m alloy.testing.emulator --port N`` to serve from a shell.
"""

from ._call import Call, ToolCall, ToolDef, ToolResult, Turn
from ._emulator import DEFAULT_API_KEY, SDK_ENV_PREFIXES, Emulator, serve_forever
from ._script import (
    DEFAULT_TEXT,
    PROVIDERS,
    Auto,
    CutStream,
    Disconnect,
    Empty,
    Fault,
    HttpError,
    Item,
    Json,
    MalformedJson,
    MaxTokens,
    Mutated,
    Overloaded,
    Provider,
    RateLimited,
    Raw,
    RecordedRequest,
    Refusal,
    Reply,
    SchemaRejected,
    Slow,
    StreamError,
    Text,
    ToolCalls,
    Unauthorized,
)

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_TEXT",
    "PROVIDERS",
    "SDK_ENV_PREFIXES",
    "Auto",
    "Call",
    "CutStream",
    "Disconnect",
    "Emulator",
    "Empty",
    "Fault",
    "HttpError",
    "Item",
    "Json",
    "MalformedJson",
    "MaxTokens",
    "Mutated",
    "Overloaded",
    "Provider",
    "RateLimited",
    "Raw",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "SchemaRejected",
    "Slow",
    "StreamError",
    "Text",
    "ToolCall",
    "ToolCalls",
    "ToolDef",
    "ToolResult",
    "Turn",
    "Unauthorized",
    "serve_forever",
]
