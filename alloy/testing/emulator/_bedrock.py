"""AWS Bedrock Converse: ``POST /model/{modelId}/converse`` and ``/converse-stream``.

The shapes are botocore's service model (``bedrock-runtime`` 2023-09-30). Whole replies are
JSON; streams are AWS event-stream messages (:mod:`._eventstream`), one per Converse event, with
``:event-type``, ``:message-type`` and ``:content-type`` headers and the event as JSON. Errors
name their type in ``x-amzn-ErrorType`` with ``{"message": ...}`` as the body; inside a stream
they are ``exception`` messages.

Requests are checked as Bedrock checks them: a key outside the request's shape is refused, the
conversation must start with a user message and alternate, text must not be blank, a tool
result must answer a tool use of the turn before, tool blocks need a ``toolConfig``, and a
``textFormat`` schema must be a JSON object in a string. Structured-output schemas and strict
tools are held to Claude's rules (:func:`._schema_rules.anthropic_problem`). Any SigV4
``Authorization`` or a Bedrock API key (``Bearer``) is accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from . import _eventstream as eventstream
from ._api import (
    BadRequest,
    EmulatedAPI,
    Failure,
    Reason,
    SchemaProblem,
    count_tokens,
    new_id,
    output_tokens,
)
from ._api import pieces as split_text
from ._call import Call, ReceivedToolResult, ToolDef, Turn
from ._http import Incoming, Outcome, Send, Stream, dumps, json_send

PATH = re.compile(r"/model/(?P<model>.+)/converse(?P<stream>-stream)?$")
#: The members of ``ConverseRequest`` that go in the body (``modelId`` is in the path).
REQUEST_KEYS = frozenset(
    {
        "messages",
        "system",
        "inferenceConfig",
        "toolConfig",
        "guardrailConfig",
        "projectIdentifier",
        "additionalModelRequestFields",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "requestMetadata",
        "performanceConfig",
        "serviceTier",
        "outputConfig",
    }
)
_STOP = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "refusal": "guardrail_intervened",
}
#: Error type and HTTP status, by why the error is sent.
_ERRORS: dict[Reason, tuple[str, str]] = {
    "missing_key": (
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    ),
    "auth": (
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    "rate_limit": ("ThrottlingException", "Too many requests, please wait before trying again."),
    "overloaded": ("ServiceUnavailableException", "Bedrock is unable to process your request."),
    "server": ("InternalServerException", "The server encountered an internal error."),
    "schema": ("ValidationException", "The provided JSON schema is not supported."),
    "bad_request": ("ValidationException", "Malformed input request."),
    "not_found": ("ResourceNotFoundException", "The provided model identifier is invalid."),
    "other": ("ValidationException", "The request failed."),
}
#: Bedrock's error type by HTTP status (Converse, and Invoke in ``_anthropic_clouds``).
STATUS_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    409: "ConflictException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
    529: "ServiceUnavailableException",
}


class BedrockConverse(EmulatedAPI):
    """Converse and ConverseStream."""

    provider = "bedrock"
    name = "bedrock.converse"

    @classmethod
    def serves(cls, path: str) -> bool:
        return PATH.search(path) is not None

    def authorized(self, incoming: Incoming) -> bool:
        """A SigV4 signature or a Bedrock API key (``Authorization: Bearer``)."""
        auth = incoming.headers.get("authorization", "")
        return auth.startswith("AWS4-HMAC-SHA256 Credential=") or super().authorized(incoming)

    def missing_key(self) -> Send:
        return self.error(403, "missing_key")

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        match = PATH.search(incoming.path)
        if match is None:  # the router sends only these paths here
            raise BadRequest("Unknown operation", status=404)
        extra = sorted(set(body) - REQUEST_KEYS)
        if extra:
            raise BadRequest(
                f"Malformed input request: extraneous key [{extra[0]}] is not permitted, "
                "please reformat your input and try again."
            )
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise BadRequest("Malformed input request: messages is required.")
        check_messages(messages, has_tools=isinstance(body.get("toolConfig"), Mapping))
        tools = _tools(body.get("toolConfig"))
        schema, schema_name = _output_schema(body.get("outputConfig"))
        return Call(
            api=self.name,
            model=match.group("model"),
            stream=match.group("stream") is not None,
            body=body,
            schema=schema,
            schema_name=schema_name,
            tools=tools,
            forced_tool=_forced(body.get("toolConfig"), tools),
            tool_results=_tool_results(messages),
        )

    def schema_problem(self, call: Call) -> SchemaProblem | None:
        """Structured-output schemas and strict tools follow Claude's rules on Bedrock."""
        from ._schema_rules import anthropic_problem

        if call.schema is not None:
            field = "outputConfig.textFormat.structure.jsonSchema.schema"
            detail = anthropic_problem(call.schema, field)
            if detail:
                return SchemaProblem(detail)
        for index, tool in enumerate(call.tools):
            if tool.strict:
                detail = anthropic_problem(tool.schema, f"toolConfig.tools.{index}.toolSpec")
                if detail:
                    return SchemaProblem(detail)
        return None

    def render(self, call: Call, turn: Turn) -> Outcome:
        """A ``ConverseResponse``, or its event stream (same content and usage either way)."""
        blocks: list[dict[str, Any]] = []
        text = turn.refusal if turn.refusal is not None else turn.text
        if text is not None:
            blocks.append({"text": text})
        for tool_call in turn.tool_calls:
            use = {
                "toolUseId": tool_call.id or new_id("tooluse_", 22),
                "name": tool_call.name,
                "input": tool_call.args,
            }
            blocks.append({"toolUse": use})
        prompt = count_tokens(call.body)
        completion = output_tokens(turn)
        usage = {
            "inputTokens": prompt,
            "outputTokens": completion,
            "totalTokens": prompt + completion,
        }
        stop = _STOP[turn.stop]
        headers = (("x-amzn-RequestId", request_id()),)
        if not call.stream:
            reply = {
                "output": {"message": {"role": "assistant", "content": blocks}},
                "stopReason": stop,
                "usage": usage,
                "metrics": {"latencyMs": 120},
            }
            return json_send(200, reply, headers)
        return Stream(200, tuple(_events(blocks, stop, usage)), eventstream.CONTENT_TYPE, headers)

    def envelope(self, failure: Failure) -> Send:
        """``{"message": ...}`` with the error's type in ``x-amzn-ErrorType``."""
        status, reason = failure.status, failure.reason
        kind, default = _ERRORS[reason]
        if reason in ("other", "bad_request") or status not in (400, 403):
            kind = STATUS_TYPES.get(status, kind if status < 500 else "InternalServerException")
        names = (
            ("x-amzn-ErrorType", f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        )
        rid = (("x-amzn-RequestId", request_id()),)
        return json_send(status, {"message": failure.message or default}, (*names, *rid))

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        """A ``modelStreamErrorException`` message, as Bedrock sends when a model fails mid-way."""
        payload = {"message": message or "The model stream failed.", "originalStatusCode": 500}
        return eventstream.message(
            {
                ":exception-type": "modelStreamErrorException",
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            dumps(payload),
        )


def request_id() -> str:
    """An id in the form of ``x-amzn-RequestId`` (a UUID)."""
    raw = new_id("", 32, "0123456789abcdef")
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def event(kind: str, data: Mapping[str, Any]) -> bytes:
    """An ``event`` message of ``kind`` (``messageStart``, ``contentBlockDelta``...)."""
    headers = {
        ":event-type": kind,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return eventstream.message(headers, dumps(data))


def _events(blocks: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> list[bytes]:
    """messageStart; per block its start (tool use), deltas and stop; messageStop; metadata."""
    frames = [event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(blocks):
        if "toolUse" in block:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            frames.append(event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            arguments = json.dumps(use["input"], ensure_ascii=False)
            for piece in split_text(arguments):
                delta: dict[str, Any] = {"toolUse": {"input": piece}}
                frames.append(
                    event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
                )
        else:
            for piece in split_text(block["text"]):
                frames.append(
                    event(
                        "contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}}
                    )
                )
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
    frames.append(event("messageStop", {"stopReason": stop}))
    frames.append(event("metadata", {"usage": usage, "metrics": {"latencyMs": 120}}))
    return frames


def check_messages(messages: list[Any], *, has_tools: bool) -> None:
    """Refuse, with Bedrock's messages, a conversation it refuses."""
    if not messages:
        raise BadRequest(
            "A conversation must start with a user message. Try again with a conversation that starts with a user message."
        )
    previous_uses: list[Any] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise BadRequest(
                f"Malformed input request: messages.{index}.role must be user or assistant."
            )
        role = message["role"]
        if index == 0 and role != "user":
            raise BadRequest(
                "A conversation must start with a user message. Try again with a conversation that starts with a user message."
            )
        if index and messages[index - 1].get("role") == role:
            raise BadRequest(
                "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."
            )
        content = message.get("content")
        if not isinstance(content, list) or not content:
            raise BadRequest(
                f"The content field in the Message object at messages.{index} is empty. Add a ContentBlock object to the content field and try again."
            )
        uses: list[Any] = []
        results = 0
        for number, block in enumerate(content):
            if not isinstance(block, Mapping):
                raise BadRequest(
                    f"Malformed input request: messages.{index}.content.{number} must be an object."
                )
            text = block.get("text")
            if "text" in block and (not isinstance(text, str) or not text.strip()):
                raise BadRequest(
                    f"The text field in the ContentBlock object at messages.{index}.content.{number} is blank. Add text to the text field, and try again."
                )
            if ("toolUse" in block or "toolResult" in block) and not has_tools:
                raise BadRequest(
                    "The toolConfig field must be defined when using toolUse and toolResult content blocks."
                )
            if "toolUse" in block:
                uses.append(block["toolUse"].get("toolUseId"))
            if "toolResult" in block:
                results += 1
                if block["toolResult"].get("toolUseId") not in previous_uses:
                    raise BadRequest(
                        f"The toolResult blocks at messages.{index}.content contain a toolUseId that doesn't match a toolUse block of the previous turn."
                    )
        if results > len(previous_uses):
            raise BadRequest(
                f"The number of toolResult blocks at messages.{index}.content exceeds the number of toolUse blocks of previous turn."
            )
        if previous_uses and results < len(previous_uses):
            raise BadRequest(
                f"Expected toolResult blocks at messages.{index}.content for the following Ids: {', '.join(map(str, previous_uses))}"
            )
        previous_uses = uses


def _tools(config: Any) -> tuple[ToolDef, ...]:
    if config is None:
        return ()
    tools = config.get("tools") if isinstance(config, Mapping) else None
    if not isinstance(tools, list) or not tools:
        raise BadRequest("Malformed input request: toolConfig.tools must hold at least one tool.")
    found: list[ToolDef] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise BadRequest(
                f"Malformed input request: toolConfig.tools.{index} must be an object."
            )
        if "cachePoint" in tool:
            continue
        spec = tool.get("toolSpec")
        schema = spec.get("inputSchema", {}).get("json") if isinstance(spec, Mapping) else None
        if (
            not isinstance(spec, Mapping)
            or not isinstance(spec.get("name"), str)
            or not isinstance(schema, Mapping)
        ):
            raise BadRequest(
                f"Malformed input request: toolConfig.tools.{index}.toolSpec needs a name and inputSchema.json."
            )
        found.append(ToolDef(spec["name"], schema, spec.get("strict") is True))
    return tuple(found)


def _forced(config: Any, tools: tuple[ToolDef, ...]) -> str | None:
    """The tool ``toolChoice`` forces: a named one (which must be offered), or the first for ``any``."""
    choice = config.get("toolChoice") if isinstance(config, Mapping) else None
    if not isinstance(choice, Mapping):
        return None
    named = choice.get("tool")
    if isinstance(named, Mapping):
        name = named.get("name")
        if all(tool.name != name for tool in tools):
            raise BadRequest(f"The tool {name} in toolChoice isn't defined in toolConfig.tools.")
        return str(name)
    if "any" in choice and tools:
        return tools[0].name
    return None


def _output_schema(config: Any) -> tuple[Mapping[str, Any] | None, str | None]:
    """``outputConfig.textFormat``'s JSON schema, which Bedrock takes as a string."""
    fmt = config.get("textFormat") if isinstance(config, Mapping) else None
    if fmt is None:
        return None, None
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        raise BadRequest(
            "Malformed input request: outputConfig.textFormat.type must be json_schema."
        )
    definition = (fmt.get("structure") or {}).get("jsonSchema")
    text = definition.get("schema") if isinstance(definition, Mapping) else None
    if not isinstance(text, str):
        raise BadRequest(
            "Malformed input request: outputConfig.textFormat.structure.jsonSchema.schema must be a string."
        )
    try:
        schema = json.loads(text)
    except ValueError:
        schema = None
    if not isinstance(schema, Mapping):
        raise BadRequest(
            "The provided JSON schema is not a valid JSON object. Check outputConfig.textFormat.structure.jsonSchema.schema and try again."
        )
    name = definition.get("name") if isinstance(definition, Mapping) else None
    return schema, name if isinstance(name, str) else None


def _tool_results(messages: list[Any]) -> tuple[ReceivedToolResult, ...]:
    """``toolResult`` blocks, named after the ``toolUse`` they answer."""
    names: dict[Any, Any] = {}
    results: list[ReceivedToolResult] = []
    for message in messages:
        for block in message.get("content") or []:
            if "toolUse" in block:
                names[block["toolUse"].get("toolUseId")] = block["toolUse"].get("name")
            elif "toolResult" in block:
                result = block["toolResult"]
                call_id = result.get("toolUseId")
                results.append(
                    ReceivedToolResult(call_id, names.get(call_id), result.get("content"))
                )
    return tuple(results)
