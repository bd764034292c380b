"""Provider-neutral views of a request (``Call``) and of the model's answer (``Turn``).

Each provider module translates its wire body into a ``Call`` and renders a ``Turn`` back into
its wire format.  Scripted replies are written once against these two types, so "answer with
two tool calls" means the same thing for all five APIs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Finish = Literal["stop", "length", "refusal", "tool_calls"]


@dataclass(frozen=True)
class ToolDef:
    """A function tool offered by the request; ``schema`` is JSON Schema for its arguments."""

    name: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    strict: bool = False


@dataclass(frozen=True)
class ReceivedToolResult:
    """A tool result the client sent back (``call_id`` and/or ``name``, per provider)."""

    call_id: str | None
    name: str | None
    content: Any


@dataclass(frozen=True)
class Call:
    """What one request asks of the model, in provider-neutral terms.

    ``schema`` is the structured-output JSON Schema, ``json_mode`` is "any JSON object"
    (``json_object`` / Ollama ``format: "json"``), ``forced_tool`` is the tool the request makes
    the model call (``tool_choice``), and ``body`` is the parsed JSON body, untouched.
    """

    api: str
    model: str
    stream: bool
    body: Mapping[str, Any]
    schema: Mapping[str, Any] | None = None
    schema_name: str | None = None
    json_mode: bool = False
    tools: tuple[ToolDef, ...] = ()
    forced_tool: str | None = None
    tool_results: tuple[ReceivedToolResult, ...] = ()
    include_usage: bool = True

    def tool(self, name: str) -> ToolDef | None:
        """The offered tool called ``name``, if any."""
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True)
class ReplyToolCall:
    """A tool call for the model to make.

    ``arguments`` is the JSON object of arguments; left out (``None``), it is generated from
    the tool's schema in the request.  ``id`` defaults to a fresh provider-style id (``call_…``,
    ``toolu_…``); ``signature`` (bytes) is sent base64-encoded as Gemini's ``thoughtSignature``.
    """

    name: str
    arguments: Mapping[str, Any] | None = None
    id: str | None = None
    signature: bytes | None = None

    @property
    def args(self) -> dict[str, Any]:
        """The arguments as a plain dict (empty when none were given)."""
        return dict(self.arguments or {})

    @property
    def arguments_json(self) -> str:
        """Arguments as the compact JSON string OpenAI puts on the wire."""
        return json.dumps(self.args, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Turn:
    """One model answer, resolved: what to render, whatever the provider.

    ``text`` is ``None`` when the answer has no text part at all (a pure tool call or an empty
    output), as opposed to ``""``.
    """

    text: str | None = None
    tool_calls: tuple[ReplyToolCall, ...] = ()
    refusal: str | None = None
    finish: Finish = "stop"

    @property
    def stop(self) -> Finish:
        """The finish reason, with tool calls taking precedence over a plain stop."""
        if self.finish == "stop" and self.tool_calls:
            return "tool_calls"
        return self.finish
