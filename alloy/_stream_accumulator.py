"""A pure accumulator: stream events in, one normalized Response out.

Adapters feed it the text and tool-call deltas they parse from their SDK's stream, then set the
usage and finish reason from the final chunk. Keeping this pure means every provider's stream
ends in exactly the same Response shape as its non-streamed call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ._nesting import check_nesting
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


_NO_USAGE = Usage()
_NO_DETAILS: Mapping[str, Any] = MappingProxyType({})


class StreamAccumulator:
    """Collects deltas; :meth:`response` builds the final Response."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._opaque: list[Opaque] = []
        self.usage = _NO_USAGE
        self.finish_reason: FinishReason | None = None
        self.model: str | None = None
        self.request_id: str | None = None
        self.response_id: str | None = None
        self.refusal: str | None = None
        self.provider_details: Mapping[str, Any] = _NO_DETAILS

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
            provider_details=self.provider_details,
            response_id=self.response_id,
        )


def tool_call(call_id: str, name: str, raw: str | None) -> ToolCall:
    """A ToolCall from raw argument text; text that is not a JSON object is kept in ``raw_args``
    (and ``args`` left empty), so running the call reports why to the model."""
    if not raw:
        return ToolCall(call_id, name, {})
    args = parse_arguments(raw)
    if isinstance(args, str):
        return ToolCall(call_id, name, {}, raw_args=raw)
    return ToolCall(call_id, name, args)


def parse_arguments(raw: str) -> dict[str, Any] | str:
    """Tool-call arguments from the model's JSON text, or why they are not a JSON object.

    Stricter than ``json.loads``, whose leniencies would reach the tool as values: NaN, Infinity
    and numbers too large for a float are refused (JSON has no such numbers), and so is nesting
    deeper than :data:`~alloy._nesting.MAX_NESTING` levels.
    """
    try:
        check_nesting(raw)
        args = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        return "nested too deeply"
    except NonFiniteNumber:
        return NON_FINITE
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at position {exc.pos}"
    if not isinstance(args, dict):
        return f"a JSON object is needed, not {_JSON_NAMES.get(type(args), type(args).__name__)}"
    return args


NON_FINITE = "NaN and Infinity are not JSON numbers"
_JSON_NAMES = {list: "an array", str: "a string", int: "a number", float: "a number"}
_JSON_NAMES.update({bool: "a boolean", type(None): "null"})


class NonFiniteNumber(ValueError):
    """A NaN, Infinity or overflowing number in JSON text."""


def _refuse_constant(name: str) -> Any:
    raise NonFiniteNumber(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # e.g. 1e999, which float() turns into inf
        raise NonFiniteNumber(text)
    return value
