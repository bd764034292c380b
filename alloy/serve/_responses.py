"""``POST /v1/responses``: the Responses wire format in front of the rails.

Supported: ``model`` (a RailConfig's name), ``input`` (a string, or messages,
``function_call`` and ``function_call_output`` items, as a previous response's ``output``
gives them), ``instructions``, ``stream``, ``temperature``, ``max_output_tokens``,
``text.format`` (``text`` or ``json_schema``), function ``tools`` with ``tool_choice``
(``auto``, ``none``, ``required`` or a function by name) and ``parallel_tool_calls``.
Nothing is stored: ``store``,
``previous_response_id`` and the rest are refused with a 400 naming the field.
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
        "input",
        "instructions",
        "stream",
        "temperature",
        "max_output_tokens",
        "text",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
    }
)
#: Keys of items a previous response gave, which describe it and ask for nothing.
_ITEM_META = {"id", "status", "type"}


def read(body: Any, configs: Mapping[str, RailConfig], api_key: str | None) -> ChatCall:
    """The call a Responses body asks for."""
    fields = given(as_object(body, "body"), FIELDS)
    config = rail_config(fields, configs)
    system = fields.get("instructions")
    if system is not None:
        system = as_text(system, "instructions")
    extra_system, messages = _input(fields.get("input"))
    if extra_system:
        system = "\n\n".join(s for s in (system, extra_system) if s)
    return chat_call(
        fields,
        config,
        (system, messages),
        tool=_tool,
        nested=False,
        output=_format(fields.get("text")),
        token_fields=("max_output_tokens",),
        stream=flag(fields, "stream"),
        api_key=api_key,
    )


def _tool(tool: Any, param: str) -> Any:
    spec = as_object(tool, param)
    if spec.get("type") != "function":
        raise unsupported(f"{param}.type", "only function tools are")
    return tool_definition(spec, param, {"type", "name", "description", "parameters", "strict"})


def _format(value: Any) -> SchemaOutput | None:
    if value is None:
        return None
    text = given(as_object(value, "text"), {"format"}, "text.")
    if "format" not in text:
        return None
    fmt = given(
        as_object(text["format"], "text.format"),
        {"type", "name", "schema", "strict", "description"},
        "text.format.",
    )
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind != "json_schema":
        raise unsupported("text.format.type", "use 'text' or 'json_schema'")
    name = as_text(fmt.get("name"), "text.format.name")
    schema = as_object(fmt.get("schema", {}), "text.format.schema")
    return SchemaOutput(name, dict(schema), strict=fmt.get("strict") is True)


def _content(content: Any, param: str) -> str:
    return text_parts(
        content,
        param,
        {"input_text", "output_text"},
        {"type", "text", "annotations", "logprobs"},
        "only input_text and output_text parts are",
    )


def _input(value: Any) -> tuple[str | None, tuple[Message, ...]]:
    if isinstance(value, str):
        return None, (UserTurn(Text(value)),)
    items = as_list(value, "input")
    if not items:
        raise invalid("'input' must hold at least one item", "input")
    systems: list[str] = []
    turns: list[Message] = []
    user: list[Part] = []
    model: list[Part] = []
    names: dict[str, str] = {}

    def flush_user() -> None:
        if user:
            turns.append(UserTurn(tuple(user)))
            user.clear()

    def flush_model() -> None:
        if model:
            turns.append(ModelTurn(tuple(model)))
            model.clear()

    for index, raw in enumerate(items):
        param = f"input[{index}]"
        item = as_object(raw, param)
        kind = item.get("type", "message")
        if kind == "message":
            fields = given(item, {"role", "content", *_ITEM_META}, f"{param}.")
            role = fields.get("role")
            text = _content(fields.get("content", ""), f"{param}.content")
            if role in ("system", "developer"):
                systems.append(text)
            elif role == "user":
                flush_model()
                user.append(Text(text))
            elif role == "assistant":
                flush_user()
                if text:
                    model.append(Text(text))
            else:
                raise invalid(
                    f"{param}.role must be system, developer, user or assistant", f"{param}.role"
                )
        elif kind == "function_call":
            fields = given(item, {"call_id", "name", "arguments", *_ITEM_META}, f"{param}.")
            flush_user()
            call_id = as_text(fields.get("call_id"), f"{param}.call_id")
            name = as_text(fields.get("name"), f"{param}.name")
            raw_args = fields.get("arguments", "{}")
            names[call_id] = name
            model.append(
                ToolCall(call_id, name, arguments(raw_args, f"{param}.arguments"), raw_args)
            )
        elif kind == "function_call_output":
            fields = given(item, {"call_id", "output", *_ITEM_META}, f"{param}.")
            flush_model()
            call_id = as_text(fields.get("call_id"), f"{param}.call_id")
            if call_id not in names:
                raise invalid(
                    f"{param} answers function call {call_id!r}, which no function_call item made",
                    f"{param}.call_id",
                )
            user.append(
                ToolResult(
                    call_id, names[call_id], as_text(fields.get("output"), f"{param}.output")
                )
            )
        else:
            raise unsupported(
                f"{param}.type", "only message, function_call and function_call_output items are"
            )
    flush_model()
    flush_user()
    if not turns or not isinstance(turns[-1], UserTurn):
        raise invalid(
            "the last input item must be a user message or a function_call_output", "input"
        )
    return ("\n\n".join(systems) if systems else None), tuple(turns)


def _message_item(
    item_id: str, text: str | None, refusal: str | None, status: str
) -> dict[str, Any]:
    part: dict[str, Any]
    if refusal is not None:
        part = {"type": "refusal", "refusal": refusal}
    else:
        part = {"type": "output_text", "text": text or "", "annotations": [], "logprobs": []}
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [part],
    }


def _call_item(call: ToolCall) -> dict[str, Any]:
    return {
        "id": "fc_" + call.id,
        "type": "function_call",
        "status": "completed",
        "call_id": call.id,
        "name": call.name,
        "arguments": dump_args(call.args),
    }


def _usage(answer: Answer) -> dict[str, Any]:
    usage = answer.usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _response(
    rid: str, created: int, call: ChatCall, status: str, output: list[dict[str, Any]], usage: Any
) -> dict[str, Any]:
    fmt: dict[str, Any] = {"type": "text"}
    if call.output is not None:
        fmt = {
            "type": "json_schema",
            "name": call.output.name,
            "schema": dict(call.output.schema),
            "strict": call.output.strict,
        }
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": call.system,
        "max_output_tokens": call.max_tokens,
        "model": call.config.name,
        "output": output,
        "parallel_tool_calls": call.parallel_tool_calls,
        "temperature": call.temperature,
        "text": {"format": fmt},
        "tool_choice": _choice(call),
        "tools": [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
                "strict": tool.strict,
            }
            for tool in call.tools
        ],
        "top_p": None,
        "usage": usage,
        "metadata": {},
    }


def _choice(call: ChatCall) -> Any:
    """The request's ``tool_choice`` as Responses echoes it."""
    if call.tool_choice is None:
        return "auto"
    if call.tool_choice == "required":
        return "required"
    return {"type": "function", "name": call.tool_choice}


def _status(answer: Answer) -> str:
    return "incomplete" if answer.finish == "length" else "completed"


def response(answer: Answer, call: ChatCall) -> dict[str, Any]:
    """A ``response`` object for the answer."""
    output: list[dict[str, Any]] = []
    if answer.text is not None or answer.refusal is not None or not answer.tool_calls:
        output.append(_message_item(new_id("msg_"), answer.text, answer.refusal, _status(answer)))
    output.extend(_call_item(tool_call) for tool_call in answer.tool_calls)
    return _response(new_id("resp_"), now(), call, _status(answer), output, _usage(answer))


async def events(
    pieces: AsyncIterator[str | ToolCallDelta | Answer], call: ChatCall
) -> AsyncGenerator[bytes, None]:
    """The Responses stream events for the pieces, ending with ``response.completed``: text
    and function-call argument deltas as they come, each output item at the place it opened."""
    rid, created = new_id("resp_"), now()
    sequence = 0

    def emit(kind: str, **data: Any) -> bytes:
        nonlocal sequence
        out = frame({"type": kind, "sequence_number": sequence, **data}, kind)
        sequence += 1
        return out

    # The first piece is awaited before anything is sent: a rail blocking the input or a held
    # answer is then still a plain 403, not a stream that opened and failed.
    first = await pieces.__anext__()
    started = _response(rid, created, call, "in_progress", [], None)
    yield emit("response.created", response=started)
    yield emit("response.in_progress", response=started)
    message_id = new_id("msg_")
    where: dict[str, Any] | None = None  # the open message's place, once text came
    #: Each streamed function call's output index and item id, by the model's index.
    streamed: dict[int, tuple[int, str]] = {}
    by_call_id: dict[str | None, tuple[int, str]] = {}
    places = 0
    async for piece in _chain(first, pieces):
        if isinstance(piece, str):
            if where is None:
                where = {"item_id": message_id, "output_index": places, "content_index": 0}
                places += 1
                item = {
                    "id": message_id,
                    "type": "message",
                    "status": "in_progress",
                    "role": "assistant",
                    "content": [],
                }
                yield emit(
                    "response.output_item.added", output_index=where["output_index"], item=item
                )
                empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                yield emit("response.content_part.added", **where, part=empty)
            yield emit("response.output_text.delta", **where, delta=piece, logprobs=[])
            continue
        if isinstance(piece, ToolCallDelta):
            place = streamed.get(piece.index)
            if place is None:
                item_id = "fc_" + (piece.id or new_id(""))
                place = streamed[piece.index] = by_call_id[piece.id] = (places, item_id)
                places += 1
                opened: dict[str, Any] = {
                    "id": item_id,
                    "type": "function_call",
                    "status": "in_progress",
                    "call_id": piece.id,
                    "name": piece.name,
                    "arguments": "",
                }
                yield emit("response.output_item.added", output_index=place[0], item=opened)
            if piece.args_delta:
                yield emit(
                    "response.function_call_arguments.delta",
                    item_id=place[1],
                    output_index=place[0],
                    delta=piece.args_delta,
                )
            continue
        answer = piece
        output: list[tuple[int, dict[str, Any]]] = []
        if where is not None:
            message = _message_item(message_id, answer.text, None, _status(answer))
            yield emit("response.output_text.done", **where, text=answer.text or "", logprobs=[])
            yield emit("response.content_part.done", **where, part=message["content"][0])
            yield emit(
                "response.output_item.done", output_index=where["output_index"], item=message
            )
            output.append((where["output_index"], message))
        elif answer.refusal is not None or not (answer.tool_calls or streamed):
            message = _message_item(message_id, answer.text, answer.refusal, _status(answer))
            yield emit("response.output_item.added", output_index=places, item=message)
            yield emit("response.output_item.done", output_index=places, item=message)
            output.append((places, message))
            places += 1
        for tool_call in answer.tool_calls:
            item = _call_item(tool_call)
            index, item_id = by_call_id.get(tool_call.id) or (places, str(item["id"]))
            item["id"] = item_id
            if tool_call.id not in by_call_id:
                places += 1
                yield emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
                yield emit(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=index,
                    delta=item["arguments"],
                )
            yield emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=index,
                arguments=item["arguments"],
            )
            yield emit("response.output_item.done", output_index=index, item=item)
            output.append((index, item))
        items = [item for _, item in sorted(output, key=lambda pair: pair[0])]
        final = _response(rid, created, call, _status(answer), items, _usage(answer))
        kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        yield emit(kind, response=final)
    yield DONE


async def _chain(
    first: str | ToolCallDelta | Answer, rest: AsyncIterator[str | ToolCallDelta | Answer]
) -> AsyncIterator[str | ToolCallDelta | Answer]:
    yield first
    async for piece in rest:
        yield piece


def stream_failed(error: BaseException) -> list[bytes]:
    """The end of a Responses stream that failed after it started: an ``error`` event (the
    openai SDK raises it as an APIError), then ``[DONE]``."""
    _, body, _ = describe(error)
    detail = body["error"]
    data = {
        "type": "error",
        "sequence_number": 0,
        "code": detail["code"],
        "message": detail["message"],
        "param": None,
        "error": detail,
    }
    return [frame(data, "error"), DONE]
