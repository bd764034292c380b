"""A conversation as alternating user and assistant messages of content blocks: what Claude's
Messages API and Bedrock's Converse share, each writing the blocks in its own shape
(:class:`BlockWire`).

Both refuse empty content and text of whitespace alone, want same-role turns merged, and want
every tool call of the assistant's turn answered by a result at the start of the next user
turn: a re-ask after an invalid tool call is sent as that call's error result, and a call left
unanswered gets one saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import assert_never

from .._types import (
    Media,
    Message,
    ModelTurn,
    Opaque,
    Part,
    RetryPrompt,
    Text,
    ToolCall,
    ToolResult,
    UserTurn,
)
from ..errors import ConfigurationError
from ._parts import misplaced

__all__ = ["BlockWire", "build_messages", "tool_call", "tool_names_in_history"]

Block = dict[str, Any]


@dataclass(frozen=True)
class BlockWire:
    """How one API writes each kind of block."""

    #: Whose ``Opaque`` parts (thinking, reasoning, server tools) are sent back as they came.
    provider: str
    #: The API as the "nothing to send" error names it (``the Messages API``, ``Converse``).
    api: str
    text: Callable[[str], Block]
    tool_call: Callable[[ToolCall], Block]
    tool_result: Callable[[str, str, bool], Block]
    media: Callable[[Media], Block]
    #: The id of the tool call a block holds, None for any other block.
    call_id: Callable[[Block], str | None]


def build_messages(messages: Sequence[Message], wire: BlockWire) -> list[Block]:
    """Alternating user/assistant messages: blank text and turns left empty dropped, same-role
    turns merged; none left at all is a ConfigurationError (the API needs one)."""
    out: list[Block] = []
    pending: list[str] = []  # tool call ids of the last assistant turn without a result yet
    for message in messages:
        match message:
            case ModelTurn():
                role = "assistant"
                blocks = [b for b in (_assistant_block(p, wire) for p in message.parts) if b]
                pending = [i for i in map(wire.call_id, blocks) if i is not None]
            case UserTurn():
                role = "user"
                blocks = _user_blocks(message, pending, wire)
                pending = []
            case _:
                assert_never(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if not out:
        raise ConfigurationError(
            f"{wire.provider}: nothing to send: the prompt and history hold no text, media or "
            f"tool results (blank text is dropped, and {wire.api} needs one message)"
        )
    return out


def _assistant_block(part: Part, wire: BlockWire) -> Block | None:
    match part:
        case Text():
            return wire.text(part.text) if part.text.strip() else None
        case ToolCall():
            return wire.tool_call(part)
        case Opaque():
            return _sent_back(part, wire)
        case Media() | ToolResult() | RetryPrompt():
            raise misplaced(part, "model")
        case _:
            assert_never(part)


def _user_blocks(turn: UserTurn, pending: list[str], wire: BlockWire) -> list[Block]:
    results: list[Block] = []
    others: list[Block] = []
    answered: set[str] = set()
    for part in turn.parts:
        match part:
            case ToolResult():
                results.append(wire.tool_result(part.call_id, part.content, part.is_error))
                answered.add(part.call_id)
            case RetryPrompt():
                text = part.render()
                unanswered = [i for i in pending if i not in answered]
                if unanswered:
                    # The invalid answer was a tool call: the re-ask is its (error) result.
                    results.extend(wire.tool_result(i, text, True) for i in unanswered)
                    answered.update(unanswered)
                else:
                    others.append(wire.text(text))
            case Text():
                if part.text.strip():
                    others.append(wire.text(part.text))
            case Media():
                others.append(wire.media(part))
            case Opaque():
                block = _sent_back(part, wire)
                if block is not None:
                    others.append(block)
            case ToolCall():
                raise misplaced(part, "user")
            case _:
                assert_never(part)
    for call_id in pending:
        if call_id not in answered:
            results.append(wire.tool_result(call_id, "No result was produced for this call.", True))
    # Tool results must come first in the user message that follows the tool calls.
    return results + others


def _sent_back(part: Opaque, wire: BlockWire) -> Block | None:
    if part.provider == wire.provider and isinstance(part.payload, Mapping):
        return dict(part.payload)
    return None


def tool_names_in_history(messages: Sequence[Message]) -> list[str]:
    """The tools the history's calls and results name, in order: a request holding tool
    blocks must declare them, even when none may be called."""
    names: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, (ToolCall, ToolResult)) and part.name and part.name not in names:
                names.append(part.name)
    return names


def tool_call(call_id: str, name: str, args: Any) -> ToolCall:
    """A tool call as the reply holds it: input that is not an object is kept raw, for the
    engine to re-ask about."""
    if isinstance(args, Mapping):
        return ToolCall(call_id, name, dict(args))
    return ToolCall(call_id, name, {}, raw_args=args if isinstance(args, str) else json.dumps(args))
