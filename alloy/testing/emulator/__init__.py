"""A local provider emulator the real SDKs talk to over HTTP.

It serves OpenAI Responses and Chat Completions, Anthropic Messages, Gemini
``generateContent``/``streamGenerateContent`` and Ollama ``/api/chat`` on 127.0.0.1, in each
provider's exact wire format (JSON, SSE, NDJSON, error envelopes), so adapters and users' tests
exercise the unmodified ``openai``, ``anthropic``, ``google-genai`` and ``ollama`` clients
without a network::

    from alloy.testing.emulator import Emulator, RateLimited, ReplyJson

    with Emulator() as emu:
        emu.push("openai", RateLimited(), ReplyJson({"city": "Paris"}))
        client = openai.OpenAI(base_url=emu.openai_base_url, api_key="test")
        ...
        assert emu.last_request("openai").retry_count == 1

With nothing queued it answers with a forced tool call (``tool_choice``), a value sampled from
the request's schema, or text.  Queue replies, every one named ``Reply...`` so that none
shadows alloy's own types (:class:`ReplyText`, :class:`ReplyJson`, :class:`ReplyToolCalls` of
:class:`ReplyToolCall`, :class:`ReplyRefusal`, :class:`ReplyMaxTokens`,
:class:`ReplyMalformedJson`, :class:`ReplyEmpty`, :class:`ReplyAuto`, :class:`ReplyRaw`), or
faults: :class:`RateLimited`, :class:`HttpError`, :class:`Overloaded`, :class:`Unauthorized`,
:class:`SchemaRejected`, :class:`CutStream`, :class:`StreamError`, :class:`Slow`,
:class:`Disconnect`, or :class:`Mutated` (the usual answer, mangled by a function, for fuzzing);
faults that carry a message take ``echo_key=True`` to repeat the presented API key in it, as
some proxies do. One item is consumed per request.  ``replay()`` queues a recorded exchange.
Requests whose strict schemas break a provider's rules get that provider's 400 (turn this off
with ``Emulator(strict_schemas=False)``).  Clients that cannot reach the script can ask for a
fault by model name (``error-429``, ``error-500``, ``error-529``…).  Run
``python -m alloy.testing.emulator --port N`` to serve from a shell.

A provider of your own is one :class:`EmulatedAPI` subclass (its paths, its body, its answers
and error envelope, and its :class:`EmulatedBatchAPI` if it has one), passed as
``Emulator(apis=[...])``; docs/adding-a-provider.md walks through it.
"""

from ..._renamed import renamed
from ._api import BadRequest, EmulatedAPI, Failure
from ._batches import BatchJob, BatchStore, EmulatedBatchAPI
from ._call import Call, ReceivedToolResult, ReplyToolCall, ToolDef, Turn
from ._emulator import DEFAULT_API_KEY, SDK_ENV_PREFIXES, Emulator, serve_forever
from ._http import Incoming, Send, Stream, json_send
from ._personas import PERSONAS, Persona, PersonaRefusal
from ._script import (
    DEFAULT_TEXT,
    PROVIDERS,
    APIFamily,
    CutStream,
    Disconnect,
    Fault,
    HttpError,
    Item,
    Mutated,
    Overloaded,
    RateLimited,
    RecordedRequest,
    Reply,
    ReplyAuto,
    ReplyEmpty,
    ReplyJson,
    ReplyMalformedJson,
    ReplyMaxTokens,
    ReplyRaw,
    ReplyRefusal,
    ReplyText,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)

#: The names these types had before they were renamed for shadowing alloy's own (``alloy.Text``,
#: ``alloy._types.ToolCall``, ``alloy.providers.Provider``...): still importable, with a warning.
_RENAMED = {
    "Text": "ReplyText",
    "Json": "ReplyJson",
    "ToolCalls": "ReplyToolCalls",
    "ToolCall": "ReplyToolCall",
    "Refusal": "ReplyRefusal",
    "MaxTokens": "ReplyMaxTokens",
    "MalformedJson": "ReplyMalformedJson",
    "Empty": "ReplyEmpty",
    "Auto": "ReplyAuto",
    "Raw": "ReplyRaw",
    "ToolResult": "ReceivedToolResult",
    "Provider": "APIFamily",
    "Wire": "APIFamily",
}


def _why(new: str) -> str:
    if new == "APIFamily":
        return "the name says what it is: the family of HTTP APIs a provider speaks"
    return "the emulator's names no longer shadow alloy's own types"


__getattr__ = renamed(__name__, _RENAMED, globals(), _why)


__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_TEXT",
    "PERSONAS",
    "PROVIDERS",
    "SDK_ENV_PREFIXES",
    "APIFamily",
    "BadRequest",
    "BatchJob",
    "BatchStore",
    "Call",
    "CutStream",
    "Disconnect",
    "EmulatedAPI",
    "EmulatedBatchAPI",
    "Emulator",
    "Failure",
    "Fault",
    "HttpError",
    "Incoming",
    "Item",
    "Mutated",
    "Overloaded",
    "Persona",
    "PersonaRefusal",
    "RateLimited",
    "ReceivedToolResult",
    "RecordedRequest",
    "Reply",
    "ReplyAuto",
    "ReplyEmpty",
    "ReplyJson",
    "ReplyMalformedJson",
    "ReplyMaxTokens",
    "ReplyRaw",
    "ReplyRefusal",
    "ReplyText",
    "ReplyToolCall",
    "ReplyToolCalls",
    "SchemaRejected",
    "Send",
    "Slow",
    "Stream",
    "StreamError",
    "ToolDef",
    "Turn",
    "Unauthorized",
    "json_send",
    "serve_forever",
]
