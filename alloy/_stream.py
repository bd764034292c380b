"""A pure accumulator: stream events in, one normalized Response out.

Adapters feed it the text and tool-call deltas they parse from their SDK's stream, then set the
usage and finish reason from the final chunk. Keeping this pure means every provider's stream
ends in exactly the same Response shape as its non-streamed call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._types import (
    FinishReason,
    Opaque,
    Part,
    Response,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)


class StreamAccumulator:
    """Collects deltas; :meth:`response` builds the final Response."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._opaque: list[Opaque] = []
        self.usage = Usage()
        self.finish_reason: FinishReason | None = None
        self.model: str | None = None
        self.request_id: str | None = None
        self.refusal: str | None = None

    def add(self, event: TextDelta | ToolCallDelta) -> TextDelta | ToolCallDelta:
        """Record a delta and hand it back, so adapters can ``yield acc.add(...)``."""
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        else:
            call = self._calls.setdefault(event.index, _PendingCall())
            call.id = event.id or call.id
            call.name = event.name or call.name
            if event.args_delta:
                call.args.append(event.args_delta)
        return event

    def add_call(self, index: int, call_id: str, name: str, args: Any) -> ToolCallDelta:
        """A tool call that arrived whole (Gemini, Ollama)."""
        text = args if isinstance(args, str) else json.dumps(args)
        return self.add(ToolCallDelta(index, call_id, name, text))  # type: ignore[return-value]

    def add_opaque(self, part: Opaque) -> None:
        self._opaque.append(part)

    @property
    def text(self) -> str:
        return "".join(self._text)

    def response(self) -> Response:
        parts: list[Part] = list(self._opaque)
        if self._text:
            parts.append(Text(self.text))
        for index in sorted(self._calls):
            pending = self._calls[index]
            parts.append(
                tool_call(pending.id or f"call_{index}", pending.name, "".join(pending.args))
            )
        finish = self.finish_reason or ("tool_calls" if self._calls else "stop")
        return Response(
            tuple(parts),
            usage=self.usage,
            finish_reason=finish,
            model=self.model,
            request_id=self.request_id,
            refusal=self.refusal,
        )


def tool_call(call_id: str, name: str, raw: str | None) -> ToolCall:
    """A ToolCall from raw argument text; unparsable text is kept in ``raw_args`` for the error."""
    if not raw:
        return ToolCall(call_id, name, {})
    try:
        args = json.loads(raw)
    except ValueError:
        return ToolCall(call_id, name, {}, raw_args=raw)
    if not isinstance(args, dict):
        return ToolCall(call_id, name, {}, raw_args=raw)
    return ToolCall(call_id, name, args)
