"""The normalized types every layer speaks: requests, messages and their parts, responses.

Adapters translate these to and from one provider's wire format; the engine reasons only in
these. They are frozen so a transcript can be shared, compared and replayed safely.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, Union

# The output modes live with the capability profile, which replaced the old three booleans
# (``Capabilities`` still builds one).
from ._profile import Capabilities as Capabilities
from ._profile import Enforcement as Enforcement
from ._profile import OutputMode as OutputMode
from ._profile import Profile as Profile

# The texts alloy itself says to the model, rendered by the types below.
REASK_PROMPT = "Your previous answer was not valid:\n{errors}\nAnswer again, fixing these problems."
FINALIZE_PROMPT = (
    "The tool calls are complete. Using their results, give your final answer now, "
    "without calling any more tools."
)
FINALIZE_SCHEMA_PROMPT = FINALIZE_PROMPT + " Answer with JSON that matches the required schema."
PROMPT_MODE_INSTRUCTIONS = (
    "Answer with a single JSON value and nothing else. It must match this JSON Schema:\n{schema}"
)

FinishReason = Literal["stop", "length", "tool_calls", "refusal", "content_filter"]
_FINISH_REASONS = frozenset(("stop", "length", "tool_calls", "refusal", "content_filter"))
#: Where alloy's response cache (``cache=``) stood on a reply: ``hit`` (read from the store),
#: ``miss`` (not there: the provider was asked, and the reply is stored once the call accepts
#: it), ``record`` (record mode: the provider was asked without looking, to refresh the entry),
#: or why it was not looked up: ``skipped: not repeatable`` (no temperature 0 or seed, and not
#: ``cache_all``) or ``skipped: no JSON form`` (the request holds something with no JSON form).
CacheStatus = Literal["hit", "miss", "record", "skipped: not repeatable", "skipped: no JSON form"]
#: The longest duration alloy takes, in seconds (a timeout, a deadline, a tool's timeout): a
#: week, well inside every platform's timers (socket timeouts overflow past about 9.2e9 seconds).
MAX_SECONDS = 7 * 24 * 3600
#: A provider's schema dialect: ``dialect(schema, model_id)`` returns the output or tool schema
#: as that provider is sent it (``Provider.dialect`` names one; the engine applies it).
Dialect = Callable[[Mapping[str, Any], str], dict[str, Any]]


class PromptModeWarning(UserWarning):
    """alloy chose prompt mode for a model without native structured output or tool calling: the
    answer is read out of the reply's text, which a model may get wrong more often. Warned once
    per command and model; choose ``output_mode="prompt"`` to silence it."""


MediaKind = Literal["image", "pdf"]
R = TypeVar("R")


def _wrong(what: str, value: Any) -> TypeError:
    """The error for a field of the wrong type. Replies are untrusted: a value of the wrong kind
    refused when a part is built (inside an adapter's reading of the reply) is an unreadable
    reply, instead of an AttributeError far away in the engine or in the caller's loop over a
    stream. The checks are written inline (no call when they pass): they run on every reply."""
    return TypeError(f"{what} must be {_KINDS.get(what, 'of another type')}, got {value!r:.80}")


_KINDS = {
    "text": "a str",
    "tool call id": "a str",
    "tool name": "a str",
    "tool arguments": "a mapping",
    "raw tool arguments": "a str or None",
    "token count": "an int",
    "delta index": "an int",
    "delta id": "a str or None",
    "delta name": "a str or None",
    "arguments delta": "a str",
    "finish reason": "one of stop, length, tool_calls, refusal, content_filter",
    "model name": "a str or None",
    "request id": "a str or None",
    "refusal": "a str or None",
}


@dataclass(frozen=True, slots=True)
class Text:
    """Plain text, from the user or the model."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _wrong("text", self.text)


@dataclass(frozen=True, slots=True)
class Media:
    """An image or document sent with a prompt: inline bytes (base64 in ``data``) or a URL."""

    kind: MediaKind
    mime_type: str
    data: str | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks for a tool to run. ``args`` is parsed; ``raw_args`` keeps unparsable text."""

    id: str
    name: str
    args: Mapping[str, Any]
    raw_args: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise _wrong("tool call id", self.id)
        if not isinstance(self.name, str):
            raise _wrong("tool name", self.name)
        if not isinstance(self.args, Mapping):
            raise _wrong("tool arguments", self.args)
        if self.raw_args is not None and not isinstance(self.raw_args, str):
            raise _wrong("raw tool arguments", self.raw_args)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of a tool call, sent back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class RetryPrompt:
    """A re-ask: tells the model what was wrong with its last answer."""

    errors: str

    def render(self) -> str:
        """The re-ask as the model reads it; adapters send this text in a user turn."""
        return REASK_PROMPT.format(errors=self.errors)


@dataclass(frozen=True, slots=True)
class Opaque:
    """Provider data that must be sent back untouched (reasoning items, thought signatures)."""

    provider: str
    payload: Any


Part = Union[Text, Media, ToolCall, ToolResult, RetryPrompt, Opaque]


_PART_TYPES = (Text, Media, ToolCall, ToolResult, RetryPrompt, Opaque)


def _as_parts(content: tuple[Any, ...], turn: str) -> tuple[Part, ...]:
    """A turn's content as parts: one tuple of parts (how alloy builds turns) or the items as
    written (``User("Describe this", image)``), where a ``str`` is text."""
    if len(content) == 1 and type(content[0]) is tuple:
        content = content[0]
    parts: list[Part] = []
    for item in content:
        if type(item) is str:
            parts.append(Text(item))
        elif isinstance(item, _PART_TYPES):
            parts.append(item)
        else:
            raise TypeError(
                f"A {turn} turn holds text (str), media and tool parts, got {type(item).__name__}"
            )
    return tuple(parts)


@dataclass(frozen=True, slots=True, init=False)
class UserTurn:
    """What alloy says to the model: the prompt, tool results, re-asks.

    ``User("Describe this", image)``: text (``str``) and media, in order.
    """

    parts: tuple[Part, ...]

    def __init__(self, *content: str | Part | tuple[Part, ...]) -> None:
        object.__setattr__(self, "parts", _as_parts(content, "user"))

    @classmethod
    def finalize(cls, *, schema: bool) -> UserTurn:
        """The turn that asks for the final answer when the model stopped after its tool calls
        without one (``schema``: the answer is JSON)."""
        return cls((Text(FINALIZE_SCHEMA_PROMPT if schema else FINALIZE_PROMPT),))


@dataclass(frozen=True, slots=True, init=False)
class ModelTurn:
    """What the model said: text and tool calls (and provider data to send back as it came).

    ``Assistant("The answer is 4.")``, or with the tool calls it made.
    """

    parts: tuple[Part, ...]

    def __init__(self, *content: str | Part | tuple[Part, ...]) -> None:
        object.__setattr__(self, "parts", _as_parts(content, "assistant"))

    @property
    def text(self) -> str:
        """The turn's text parts, joined."""
        return "".join([p.text for p in self.parts if isinstance(p, Text)])


@dataclass(frozen=True, slots=True)
class System:
    """Instructions for the whole conversation; sent as the provider's system prompt."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _wrong("text", self.text)


Message = Union[UserTurn, ModelTurn]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as offered to the model. ``strict`` means the schema meets strict-mode rules.

    ``dialect_parameters`` are ``parameters`` in the schema dialect of the model's provider
    (``Provider.dialect``), made once by the plan; None: the provider has no dialect.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool = True
    dialect_parameters: Mapping[str, Any] | None = None

    @property
    def wire_parameters(self) -> Mapping[str, Any]:
        """The parameters as the provider takes them: in its dialect, else as they are."""
        dialect = self.dialect_parameters
        return self.parameters if dialect is None else dialect


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The structured output requested: canonical strict schema, its name and how to enforce it.

    ``dialect_schema`` is ``schema`` in the schema dialect of the model's provider
    (``Provider.dialect``), made once by the plan; None: the provider has no dialect.
    """

    name: str
    schema: Mapping[str, Any]
    mode: OutputMode = "native"
    strict: bool = True
    instructions: str | None = None
    dialect_schema: Mapping[str, Any] | None = None

    @property
    def wire_schema(self) -> Mapping[str, Any]:
        """The schema as the provider takes it: in its dialect, else as it is."""
        dialect = self.dialect_schema
        return self.schema if dialect is None else dialect

    def prompt_instructions(self) -> str:
        """How prompt mode asks for the value: the schema, for the system prompt."""
        return PROMPT_MODE_INSTRUCTIONS.format(schema=json.dumps(self.schema))


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling, reasoning, prompt-cache and transport settings that reach the wire."""

    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: An effort level (``"low"``...) or a thinking budget in tokens; adapters map or refuse it.
    reasoning_effort: str | int | None = None
    #: Mark the stable prompt prefix for caching where the provider must be asked to cache.
    prompt_cache: bool = False
    #: OpenAI's ``prompt_cache_key``.
    prompt_cache_key: str | None = None
    #: Gemini's ``cached_content``: a cache made beforehand, by name.
    cached_content: str | None = None


@dataclass(frozen=True, slots=True)
class Request:
    """One model request, independent of any provider."""

    model: str
    messages: tuple[Message, ...]
    system: str | None = None
    tools: tuple[ToolDefinition, ...] = ()
    output: OutputSpec | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    stream: bool = False
    #: Forced tool use: ``"required"`` (some tool) or the name of the tool the model must
    #: call; None lets the model choose. Only with ``tools``.
    tool_choice: str | None = None
    #: False: at most one tool call per reply (sent where the provider takes the setting).
    parallel_tool_calls: bool = True


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts, normalized across providers and summable over turns.

    ``input_tokens`` counts the whole prompt; ``cached_tokens`` (read from the provider's prompt
    cache) and ``cache_write_tokens`` (written to it) are parts of it, priced at their own rates.
    ``cache_hits`` counts replies served from alloy's own response cache (``cache=``): such a
    reply made no request and costs nothing, so its other counts are zero.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    cache_write_tokens: int = 0
    cache_hits: int = 0

    def __post_init__(self) -> None:
        if not (
            isinstance(self.input_tokens, int)
            and isinstance(self.output_tokens, int)
            and isinstance(self.cached_tokens, int)
            and isinstance(self.reasoning_tokens, int)
            and isinstance(self.requests, int)
            and isinstance(self.cache_write_tokens, int)
            and isinstance(self.cache_hits, int)
        ):
            counts = (self.input_tokens, self.output_tokens, self.cached_tokens)
            raise _wrong(
                "token count",
                [
                    *counts,
                    self.reasoning_tokens,
                    self.requests,
                    self.cache_write_tokens,
                    self.cache_hits,
                ],
            )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_hits + other.cache_hits,
        )


@dataclass(frozen=True, slots=True)
class Window:
    """One rate limit a provider stated: how many per minute, how many are left now, and in how
    many seconds the allowance is whole again (None where the provider did not say)."""

    limit: float | None = None
    remaining: float | None = None
    reset: float | None = None


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The request and token limits a reply stated (both per minute). A paced run over rows
    learns the limits it keeps to from these, on each reply and each error."""

    requests: Window
    tokens: Window

    @property
    def known(self) -> bool:
        """Whether the reply stated any limit at all."""
        return self.requests.limit is not None or self.tokens.limit is not None


@dataclass(frozen=True, slots=True)
class Response:
    """One model reply, normalized."""

    parts: tuple[Part, ...]
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    model: str | None = None
    request_id: str | None = None
    refusal: str | None = None
    provider_details: Mapping[str, Any] = field(default_factory=dict)
    #: The provider's id for this reply (``chatcmpl-...``, ``resp_...``, ``msg_...``, Gemini's
    #: ``responseId``), where ``request_id`` is the HTTP request's; None where the API has none.
    response_id: str | None = None
    #: Where alloy's response cache stood on this reply (see :data:`CacheStatus`); None when
    #: the call has no cache.
    cache: CacheStatus | None = None
    #: The rate limits the provider stated in this reply's headers; None when it stated none
    #: (and on a cache hit). Not part of what makes two replies equal.
    rate_limits: RateLimits | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.finish_reason not in _FINISH_REASONS:
            raise _wrong("finish reason", self.finish_reason)
        model, request_id, response_id, refusal = (
            self.model,
            self.request_id,
            self.response_id,
            self.refusal,
        )
        if not (
            (model is None or type(model) is str)
            and (request_id is None or type(request_id) is str)
            and (response_id is None or type(response_id) is str)
            and (refusal is None or type(refusal) is str)
        ):
            for what, value in (
                ("model name", model),
                ("request id", request_id),
                ("response id", response_id),
                ("refusal", refusal),
            ):
                if value is not None and not isinstance(value, str):
                    raise _wrong(what, value)

    @property
    def lone_text(self) -> str | None:
        """The text of a reply that is one text part and nothing else (the usual reply), or None;
        every call reads its reply through this, so it is checked before building views."""
        parts = self.parts
        return parts[0].text if len(parts) == 1 and type(parts[0]) is Text else None

    @property
    def text(self) -> str:
        """All text parts joined: the final answer when there are no tool calls."""
        lone = self.lone_text
        if lone is not None:
            return lone
        return "".join([part.text for part in self.parts if isinstance(part, Text)])

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        if self.lone_text is not None:
            return ()
        return tuple([part for part in self.parts if isinstance(part, ToolCall)])


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed text."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _wrong("text", self.text)


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call; ``index`` groups the pieces of one call."""

    index: int
    id: str | None = None
    name: str | None = None
    args_delta: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.index, int):
            raise _wrong("delta index", self.index)
        if self.id is not None and not isinstance(self.id, str):
            raise _wrong("delta id", self.id)
        if self.name is not None and not isinstance(self.name, str):
            raise _wrong("delta name", self.name)
        if not isinstance(self.args_delta, str):
            raise _wrong("arguments delta", self.args_delta)


@dataclass(frozen=True, slots=True)
class Done:
    """The stream ended; ``response`` is the whole reply."""

    response: Response


StreamEvent = Union[TextDelta, ToolCallDelta, Done]


@dataclass(frozen=True, slots=True)
class Transcript:
    """A call's whole conversation, total usage, and how many model requests were made."""

    messages: tuple[Message, ...] = ()
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    #: Usage of each model turn, in order (re-asks, tool rounds and finalize turns included).
    turn_usage: tuple[Usage, ...] = ()
    #: How many of ``messages`` are the command's worked examples (sent first, not carried on).
    examples: int = 0
    #: Where the call's own turns begin: after the examples and the history it was given.
    own: int = 0
    #: The conversation's own system prompt (a System message), when it had one.
    system: str | None = None

    @property
    def last_output(self) -> str | None:
        for message in reversed(self.messages):
            if isinstance(message, ModelTurn):
                return message.text
        return None


@dataclass(frozen=True)  # not slotted: on 3.10-3.12 that makes Result[T](...) a TypeError
class Result(Generic[R]):
    """A call's value with its record: the raw output and the whole transcript."""

    value: R
    output: str | None
    transcript: Transcript
    #: Per parse attempt, what the output type reported (criteria results, fixes), if anything.
    reports: tuple[Any, ...] = ()
    #: The model that answered, as ``provider:model``.
    model: str | None = None
    #: Estimated cost in USD at the prices known when the call ended (``alloy.pricing``);
    #: None when the model has no price.
    cost: float | None = None
    #: How the typed answer was asked for: ``native`` (the provider's structured output),
    #: ``tool`` (a forced tool call) or ``prompt`` (read out of the reply's text); None for text.
    output_mode: OutputMode | None = None
    #: Each model's share of ``usage`` as (``provider:model``, Usage), in the order they
    #: answered: more than one when a fallback took over. ``cost`` is priced from it.
    usage_by_model: tuple[tuple[str, Usage], ...] = ()
    #: How the answer was enforced: ``native-strict``, ``native``, ``tool-strict``, ``tool`` or
    #: ``prompt`` (see ``alloy.providers.Profile``); None for text.
    enforcement: Enforcement | None = None

    @property
    def usage(self) -> Usage:
        return self.transcript.usage

    @property
    def cached(self) -> bool:
        """Whether every model reply of the call came from alloy's response cache (``cache=``):
        the value was still parsed and validated afresh, but no provider was asked."""
        turns = self.transcript.turn_usage
        return bool(turns) and all(usage.cache_hits for usage in turns)

    @property
    def messages(self) -> tuple[System | Message, ...]:
        """The whole conversation, to carry on with ``history=``: its system message if it had
        one, the earlier turns, this call's prompt and every turn after (tool rounds and
        re-asks included). Worked examples are left out: the command sends them itself."""
        transcript = self.transcript
        turns = transcript.messages[transcript.examples :]
        return (System(transcript.system), *turns) if transcript.system is not None else turns

    @property
    def new_messages(self) -> tuple[Message, ...]:
        """This call's own turns: its prompt and everything after it."""
        return self.transcript.messages[self.transcript.own :]


def dump_args(args: Mapping[str, Any]) -> str:
    """Tool-call arguments as compact JSON, the form most wire formats expect."""
    return json.dumps(args, separators=(",", ":"), ensure_ascii=False, default=str)
