"""Conversations as users write them: alloy's message types, or role dicts as the SDKs take them.

A prompt function may return a conversation instead of one prompt, and a call may be given the
messages of an earlier one (``history=``). Both arrive here and leave as alloy's normalized turns,
so every adapter sends them in its own provider's form, and a conversation begun on one provider
continues on another. What cannot be sent (an unknown role, media in an assistant turn, an empty
turn, a tool result for a call never made, nothing for the model to answer) is refused here,
with where it was found; so is text UTF-8 cannot encode (a lone surrogate), which the SDKs fail
on while sending, as they do for a prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ._text import sendable, sendable_value
from ._types import (
    FINALIZE_PROMPT,
    FINALIZE_SCHEMA_PROMPT,
    Media,
    Message,
    ModelTurn,
    Opaque,
    Part,
    RetryPrompt,
    System,
    Text,
    ToolCall,
    ToolResult,
    UserTurn,
)
from .errors import ConfigurationError

#: What a conversation may hold: alloy's messages, or role dicts as users write them for the SDKs.
MessageLike = System | UserTurn | ModelTurn | Mapping[str, Any]

ROLES = ("system", "developer", "user", "assistant", "tool")


class Conversation(NamedTuple):
    """Normalized messages and the conversation's own system prompt (None: none was given)."""

    system: str | None
    messages: tuple[Message, ...]


def is_conversation(items: Sequence[Any]) -> bool:
    """Whether a prompt function's list is a conversation (it holds a message) rather than the
    parts of one prompt (text and media)."""
    return any(isinstance(item, (System, UserTurn, ModelTurn, Mapping)) for item in items)


def to_conversation(items: Any, where: str) -> Conversation:
    """``items`` (messages or role dicts) as a Conversation; ``where`` names them in errors.

    System messages come first (every provider takes one system prompt, before the turns);
    several are joined. A ``tool`` message becomes a tool result in a user turn.
    """
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise ConfigurationError(
            f"{where} must be a list of messages (alloy.System/User/Assistant or role dicts), "
            f"got {type(items).__name__}"
        )
    systems: list[str] = []
    messages: list[Message] = []
    positions: list[int] = []  # where each message was in ``items``, for errors
    names: dict[str, str] = {}  # tool call id -> tool name, for tool messages that omit it
    for index, item in enumerate(items):
        at = f"{where}, message {index}"
        message = _one(item, at, names)
        refuse_lone_surrogates(message, at)
        if isinstance(message, System):
            if messages:
                raise ConfigurationError(
                    f"{at} is a system message after the conversation began; put system "
                    "messages first (providers take one system prompt, before the turns)"
                )
            systems.append(message.text)
            continue
        if isinstance(message, ModelTurn):
            _check_model_turn(message, at)
            for part in message.parts:
                if isinstance(part, ToolCall):
                    names[part.id] = part.name
        else:
            _check_user_turn(message, at)
        messages.append(message)
        positions.append(index)
    _check_empty_turns(messages, positions, where)
    return Conversation("\n\n".join(systems) if systems else None, tuple(messages))


def check_tool_results(earlier: Sequence[Message], own: Sequence[Message], command: str) -> None:
    """Refuse a tool result that answers no tool call made before it, in ``earlier`` (the
    ``history=`` turns) or ``own`` (the prompt function's conversation, which goes on from them).

    Every provider refuses one (a 400): it is what a history cut between the model's tool call
    and its result looks like.
    """
    made: set[str] = set()
    for index, turn in enumerate((*earlier, *own)):
        for part in turn.parts:
            if isinstance(part, ToolCall):
                made.add(part.id)
            elif isinstance(part, ToolResult) and part.call_id not in made:
                where = (
                    f"{command}: history=" if index < len(earlier) else f"{command}'s conversation"
                )
                name = f" ({part.name})" if part.name else ""
                raise ConfigurationError(
                    f"{where} holds a tool result for call {part.call_id!r}{name} that no earlier "
                    "assistant turn made; a conversation cut between a tool call and its result "
                    "cannot be sent: keep the assistant turn with the call, or leave the result out"
                )


def _blank(turn: Message) -> bool:
    """Whether a turn holds nothing a provider takes: no part, or only blank text."""
    return all(isinstance(p, Text) and (not p.text or p.text.isspace()) for p in turn.parts)


#: What alloy says after an answer that was empty: the finalize turn (see ``UserTurn.finalize``).
_AFTER_EMPTY = (UserTurn(FINALIZE_PROMPT), UserTurn(FINALIZE_SCHEMA_PROMPT))


def _check_empty_turns(messages: Sequence[Message], positions: Sequence[int], where: str) -> None:
    """Refuse a user turn with no content, and an assistant turn with neither text nor tool
    calls between two turns, which providers refuse.

    alloy's own record of an empty answer passes, so that every ``Result.messages`` carries on:
    the answer before its finalize turn or re-ask, and an ``output=None`` call's empty answer,
    which ends its conversation (adapters leave such turns out of the request).
    """
    for number, message in enumerate(messages):
        if not _blank(message):
            continue
        at = f"{where}, message {positions[number]}"
        if isinstance(message, UserTurn):
            raise ConfigurationError(
                f"{at}: a user turn needs content (text, media or tool results); an empty one "
                "cannot be sent"
            )
        after = messages[number + 1] if number + 1 < len(messages) else None
        if after is None or after in _AFTER_EMPTY or _reasks(after):
            continue
        raise ConfigurationError(
            f"{at}: an assistant turn needs text or tool calls; an empty one between two turns "
            "cannot be sent (leave it out)"
        )


def _reasks(turn: Message) -> bool:
    return isinstance(turn, UserTurn) and any(isinstance(p, RetryPrompt) for p in turn.parts)


def refuse_lone_surrogates(message: System | Message, at: str) -> None:
    """A ConfigurationError naming the message and part when any text in it holds a lone
    surrogate: its text, a tool call's name, id and arguments, a tool result, a media URL."""
    if isinstance(message, System):
        sendable(message.text, at)
        return
    for number, part in enumerate(message.parts):
        where = f"{at}, part {number}"
        if isinstance(part, Text):
            sendable(part.text, where)
        elif isinstance(part, ToolCall):
            sendable_value((part.id, part.name, part.args, part.raw_args), f"{where} (a tool call)")
        elif isinstance(part, ToolResult):
            sendable_value((part.call_id, part.name, part.content), f"{where} (a tool result)")
        elif isinstance(part, Media):
            sendable_value(part.url, f"{where} (a media URL)")
        elif isinstance(part, RetryPrompt):
            sendable(part.errors, where)
        elif isinstance(part, Opaque):
            sendable_value(part.payload, f"{where} (provider data)")


def _one(item: Any, at: str, names: Mapping[str, str]) -> System | Message:
    if isinstance(item, (System, UserTurn, ModelTurn)):
        return item
    if isinstance(item, Mapping):
        return _from_dict(item, at, names)
    hint = " (wrap text in alloy.User(...))" if isinstance(item, (str, Media)) else ""
    raise ConfigurationError(
        f"{at} must be alloy.System/User/Assistant or a role dict, got {type(item).__name__}{hint}"
    )


def _check_user_turn(turn: UserTurn, at: str) -> None:
    for part in turn.parts:
        if isinstance(part, ToolCall):
            raise ConfigurationError(f"{at}: a user turn cannot hold a tool call (the model's)")


def _check_model_turn(turn: ModelTurn, at: str) -> None:
    for part in turn.parts:
        if isinstance(part, Media):
            raise ConfigurationError(
                f"{at}: an assistant turn holds text and tool calls, not media; send images "
                "and documents in a user turn"
            )
        if isinstance(part, (ToolResult, RetryPrompt)):
            kind = "tool result" if isinstance(part, ToolResult) else "re-ask"
            raise ConfigurationError(f"{at}: a {kind} belongs in a user turn")


# -- role dicts ---------------------------------------------------------------------------------


def _from_dict(entry: Mapping[str, Any], at: str, names: Mapping[str, str]) -> System | Message:
    role = entry.get("role")
    if role not in ROLES:
        raise ConfigurationError(
            f"{at} has role {role!r}; a message's role is one of {', '.join(ROLES)}"
        )
    content = entry.get("content")
    if role in ("system", "developer"):
        return System(_text_only(content, at))
    if role == "tool":
        call_id = entry.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise ConfigurationError(f"{at}: a tool message needs its tool_call_id")
        name = entry.get("name") or names.get(call_id, "")
        return UserTurn(ToolResult(call_id, str(name), _text_only(content, at)))
    if role == "user":
        parts = _blocks(content, at, assistant=False)
        if not parts:
            raise ConfigurationError(f"{at}: a user message needs content")
        return UserTurn(tuple(_named(part, names) for part in parts))
    parts = _blocks(content, at, assistant=True)
    parts += tuple(_openai_tool_call(call, at) for call in entry.get("tool_calls") or ())
    return ModelTurn(parts)


def _named(part: Part, names: Mapping[str, str]) -> Part:
    """A tool_result block names only its call: the tool's name comes from that call."""
    if isinstance(part, ToolResult) and not part.name:
        return ToolResult(part.call_id, names.get(part.call_id, ""), part.content, part.is_error)
    return part


def _text_only(content: Any, at: str) -> str:
    if isinstance(content, str):
        return content
    parts = _blocks(content, at, assistant=False)
    if all(isinstance(part, Text) for part in parts):
        return "".join(part.text for part in parts if isinstance(part, Text))
    raise ConfigurationError(f"{at}: system and tool messages hold text only")


def _blocks(content: Any, at: str, *, assistant: bool) -> tuple[Part, ...]:
    """A message's ``content``: a string, or a list of content blocks in OpenAI's or Anthropic's
    form (text, images, documents, tool_use and tool_result)."""
    if content is None:
        return ()
    if isinstance(content, str):
        return (Text(content),) if content else ()
    if isinstance(content, Mapping) or not isinstance(content, Sequence):
        raise ConfigurationError(
            f"{at}: content must be a string or a list of content blocks, "
            f"got {type(content).__name__}"
        )
    parts: list[Part] = []
    for number, block in enumerate(content):
        part = _block(block, f"{at}, block {number}")
        if assistant and isinstance(part, Media):
            raise ConfigurationError(
                f"{at}: an assistant turn holds text and tool calls, not media; send images "
                "and documents in a user turn"
            )
        if isinstance(part, ToolCall) and not assistant:
            raise ConfigurationError(f"{at}: a tool_use block belongs in an assistant message")
        if isinstance(part, ToolResult) and assistant:
            raise ConfigurationError(f"{at}: a tool_result block belongs in a user message")
        parts.append(part)
    return tuple(parts)


def _block(block: Any, at: str) -> Part:
    if isinstance(block, str):
        return Text(block)
    if isinstance(block, (Text, Media, ToolCall, ToolResult, Opaque)):
        return block
    if not isinstance(block, Mapping):
        raise ConfigurationError(f"{at} must be a content block dict, got {type(block).__name__}")
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text"):
        text = block.get("text")
        if not isinstance(text, str):
            raise ConfigurationError(f"{at}: a text block needs its text")
        return Text(text)
    if kind in ("image_url", "input_image"):
        url = block.get("image_url")
        url = url.get("url") if isinstance(url, Mapping) else url
        if not isinstance(url, str):
            raise ConfigurationError(f"{at}: an image block needs its URL")
        from .media import Image  # only a conversation with media loads alloy.media

        return Image.from_url(url)
    if kind in ("image", "document"):
        return _anthropic_media(block, at, image=kind == "image")
    if kind == "tool_use":
        return ToolCall(str(block.get("id") or ""), str(block.get("name") or ""), _args(block, at))
    if kind == "tool_result":
        result = block.get("content")
        return ToolResult(
            str(block.get("tool_use_id") or ""),
            "",
            result if isinstance(result, str) else _text_only(result, at),
            bool(block.get("is_error")),
        )
    raise ConfigurationError(
        f"{at} has type {kind!r}; content blocks are text, image_url/input_image, image, "
        "document, tool_use and tool_result"
    )


def _anthropic_media(block: Mapping[str, Any], at: str, *, image: bool) -> Media:
    from .media import Document, Image

    source = block.get("source")
    make = Image if image else Document
    if isinstance(source, Mapping) and source.get("type") == "url":
        return make.from_url(str(source.get("url") or ""))
    if isinstance(source, Mapping) and source.get("type") == "base64":
        mime = str(source.get("media_type") or "")
        return make.from_url(f"data:{mime};base64,{source.get('data') or ''}")
    raise ConfigurationError(f"{at}: a media block needs a url or base64 source")


def _args(block: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    args = block.get("input")
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ConfigurationError(f"{at}: a tool_use block's input must be an object")
    return args


def _openai_tool_call(call: Any, at: str) -> ToolCall:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise ConfigurationError(f"{at}: each tool_calls entry needs a function with a name")
    raw = function.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise ConfigurationError(f"{at}: tool call arguments are not JSON: {raw!r:.80}") from None
    if not isinstance(args, Mapping):
        raise ConfigurationError(f"{at}: tool call arguments must be a JSON object")
    return ToolCall(str(call.get("id") or ""), function["name"], args)
