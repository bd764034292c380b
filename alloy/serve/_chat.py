"""``POST /v1/chat/completions``: the Chat Completions wire format in front of the rails.

Supported: ``model`` (a RailConfig's name), ``messages`` (system, developer, user, assistant
with tool calls, tool; text content), ``stream`` with ``stream_options.include_usage``,
``temperature``, ``max_tokens`` / ``max_completion_tokens``, ``response_format`` (``text`` or
``json_schema``), function ``tools`` with ``tool_choice`` (``auto``, ``none``, ``required`` or a
function by name) and ``parallel_tool_calls``, and ``n`` = 1. Anything else is a 400 naming
the field.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from .._output import SchemaOutput
from .._types import (
    Message,
    ModelTurn,
    Part,
    Text,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    UserTurn,
    dump_args,
)
from ._errors import describe, invalid, unsupported
from ._proxy import Answer, ChatCall
from ._rails import RailConfig
from ._sse import DONE, frame
from ._wire import (
    arguments,
    as_list,
    as_object,
    as_text,
    chat_call,
    flag,
    given,
    new_id,
    now,
    rail_config,
    text_parts,
    tool_definition,
)

FIELDS = frozenset(
    {
        "model",
        "messages",
        "stream",
        "stream_options",
        "temperature",
        "max_tokens",
        "max_completion_tokens",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "n",
    }
)
_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "refusal": "stop",
}


def read(
    body: Any, configs: Mapping[str, RailConfig], api_key: str | None
) -> tuple[ChatCall, bool]:
    """The call a Chat Completions body asks for, and whether usage is to be streamed."""
    fields = given(as_object(body, "body"), FIELDS)
    config = rail_config(fields, configs)
    if fields.get("n", 1) != 1:
        raise unsupported("n", "only n=1 is")
    stream = flag(fields, "stream")
    options = given(
        as_object(fields.get("stream_options", {}), "stream_options"),
        {"include_usage"},
        "stream_options.",
    )
    if options and not stream:
        raise invalid("'stream_options' is only allowed when 'stream' is true", "stream_options")
    call = chat_call(
        fields,
        config,
        _messages(as_list(fields.get("messages"), "messages")),
        tool=_tool,
        nested=True,
        output=_response_format(fields.get("response_format")),
        token_fields=("max_completion_tokens", "max_tokens"),
        stream=stream,
        api_key=api_key,
    )
    return call, options.get("include_usage") is True


def _tool(tool: Any, param: str) -> Any:
    fields = given(as_object(tool, param), {"type", "function"}, f"{param}.")
    if fields.get("type") != "function":
        raise unsupported(f"{param}.type", "only function tools are")
    return tool_definition(
        as_object(fields.get("function"), f"{param}.function"),
        f"{param}.function",
        {"name", "description", "parameters", "strict"},
    )


def _response_format(value: Any) -> SchemaOutput | None:
    if value is None:
        return None
    fields = given(as_object(value, "response_format"), {"type", "json_schema"}, "response_format.")
    kind = fields.get("type")
    if kind == "text":
        return None
    if kind != "json_schema":
        raise unsupported("response_format.type", "use 'text' or 'json_schema'")
    spec = given(
        as_object(fields.get("json_schema"), "response_format.json_schema"),
        {"name", "schema", "strict", "description"},
        "response_format.json_schema.",
    )
    name = as_text(spec.get("name"), "response_format.json_schema.name")
    schema = as_object(spec.get("schema", {}), "response_format.json_schema.schema")
    return SchemaOutput(name, dict(schema), strict=spec.get("strict") is True)


def text_of(content: Any, param: str) -> str:
    """A message's text: a string, or text parts (other parts are refused)."""
    return text_parts(content, param, {"text"}, {"type", "text"}, "only text content parts are")


def _messages(items: list[Any]) -> tuple[str | None, tuple[Message, ...]]:
    """The system text and the turns; consecutive user-side messages make one turn."""
    systems: list[str] = []
    turns: list[Message] = []
    pending: list[Part] = []
    names: dict[str, str] = {}

    def flush() -> None:
        if pending:
            turns.append(UserTurn(tuple(pending)))
            pending.clear()

    if not items:
        raise invalid("'messages' must hold at least one message", "messages")
    for index, item in enumerate(items):
        param = f"messages[{index}]"
        message = as_object(item, param)
        role = message.get("role")
        if role in ("system", "developer"):
            fields = given(message, {"role", "content"}, f"{param}.")
            systems.append(text_of(fields.get("content", ""), f"{param}.content"))
        elif role == "user":
            fields = given(message, {"role", "content"}, f"{param}.")
            pending.append(Text(text_of(fields.get("content", ""), f"{param}.content")))
        elif role == "assistant":
            fields = given(message, {"role", "content", "tool_calls", "refusal"}, f"{param}.")
            flush()
            parts: list[Part] = []
            text = fields.get("content")
            if text is not None and text_of(text, f"{param}.content"):
                parts.append(Text(text_of(text, f"{param}.content")))
            for position, raw in enumerate(
                as_list(fields.get("tool_calls", []), f"{param}.tool_calls")
            ):
                where = f"{param}.tool_calls[{position}]"
                call_fields = given(as_object(raw, where), {"id", "type", "function"}, f"{where}.")
                function = given(
                    as_object(call_fields.get("function"), f"{where}.function"),
                    {"name", "arguments"},
                    f"{where}.function.",
                )
                call_id = as_text(call_fields.get("id"), f"{where}.id")
                name = as_text(function.get("name"), f"{where}.function.name")
                raw_args = function.get("arguments", "{}")
                args = arguments(raw_args, f"{where}.function.arguments")
                names[call_id] = name
                parts.append(ToolCall(call_id, name, args, raw_args))
            if not parts:
                raise invalid(f"{param} has neither content nor tool_calls", param)
            turns.append(ModelTurn(tuple(parts)))
        elif role == "tool":
            fields = given(message, {"role", "content", "tool_call_id"}, f"{param}.")
            call_id = as_text(fields.get("tool_call_id"), f"{param}.tool_call_id")
            if call_id not in names:
                raise invalid(
                    f"{param} answers tool call {call_id!r}, which no assistant message made",
                    f"{param}.tool_call_id",
                )
            content = text_of(fields.get("content", ""), f"{param}.content")
            pending.append(ToolResult(call_id, names[call_id], content))
        else:
            raise invalid(
                f"{param}.role must be system, developer, user, assistant or tool", f"{param}.role"
            )
    flush()
    if not turns or not isinstance(turns[-1], UserTurn):
        raise invalid("the last message must be a user or tool message", "messages")
    return ("\n\n".join(systems) if systems else None), tuple(turns)


def _tool_calls(answer: Answer) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": dump_args(call.args)},
        }
        for call in answer.tool_calls
    ]


def _usage(answer: Answer) -> dict[str, Any]:
    usage = answer.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def completion(answer: Answer, name: str) -> dict[str, Any]:
    """A ``chat.completion`` object for the answer."""
    calls = _tool_calls(answer)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": answer.text if answer.text is not None or calls else "",
        "refusal": answer.refusal,
    }
    if answer.text is None and (calls or answer.refusal is not None):
        message["content"] = None
    if calls:
        message["tool_calls"] = calls
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": now(),
        "model": name,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _FINISH[answer.finish],
            }
        ],
        "usage": _usage(answer),
    }


async def chunks(
    pieces: AsyncIterator[str | ToolCallDelta | Answer], name: str, include_usage: bool
) -> AsyncGenerator[bytes, None]:
    """``chat.completion.chunk`` frames for the pieces, then ``[DONE]``: text and tool-call
    argument deltas as they come, then what the Answer adds (the calls not streamed)."""
    base = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": now(),
        "model": name,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data: dict[str, Any] = {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            data["usage"] = None
        return frame(data)

    started = False
    #: Each streamed call's place among the answer's tool calls, by the model's index.
    places: dict[int, int] = {}
    streamed_ids: set[str | None] = set()
    async for piece in pieces:
        if isinstance(piece, str):
            if not started:
                started = True
                yield chunk({"role": "assistant", "content": ""})
            yield chunk({"content": piece})
            continue
        if isinstance(piece, ToolCallDelta):
            if not started:
                started = True
                yield chunk({"role": "assistant", "content": None})
            place = places.get(piece.index)
            if place is None:
                place = places[piece.index] = len(places)
                streamed_ids.add(piece.id)
                opened = {"name": piece.name, "arguments": piece.args_delta}
                call = {"index": place, "id": piece.id, "type": "function", "function": opened}
                yield chunk({"tool_calls": [call]})
            elif piece.args_delta:
                more = {"index": place, "function": {"arguments": piece.args_delta}}
                yield chunk({"tool_calls": [more]})
            continue
        answer = piece
        if not started:
            yield chunk({"role": "assistant", "content": None if answer.tool_calls else ""})
        if answer.refusal is not None:
            yield chunk({"refusal": answer.refusal})
        rest = [call for call in _tool_calls(answer) if call["id"] not in streamed_ids]
        for index, call in enumerate(rest, start=len(places)):
            yield chunk({"tool_calls": [{"index": index, **call}]})
        yield chunk({}, _FINISH[answer.finish])
        if include_usage:
            yield frame({**base, "choices": [], "usage": _usage(answer)})
    yield DONE


def stream_failed(error: BaseException) -> list[bytes]:
    """The end of a chat stream that failed after it started: an error frame (the openai SDK
    raises it as an APIError), then ``[DONE]``."""
    _, body, _ = describe(error)
    return [frame(body), DONE]
