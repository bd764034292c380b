"""The built-in offline model: schema-valid answers with no network and no key.

It lets every example and a user's first try run anywhere. It answers typed commands with a
value generated from the output schema (deterministic per prompt), calls each offered tool once
with generated arguments before answering, and says plainly that it is the offline model wherever
a person reads its text. A command whose output is a text format (``YesNo``, ``Code``...) binds
it to that output first (see ``_model.StandIn``), and it answers with a reply the format accepts.

Its values come from its own sampler (``_sample``: seeded draws, ``_draws``, and the ``pattern``
subset, ``_pattern``), which the emulator in ``alloy.testing`` answers with too: shipped code
imports nothing from the test kit.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic_core import to_json

from ..._output import OutputType
from ..._profile import Profile
from ..._types import (
    Done,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
    UserTurn,
)
from ._sample import sample_value, sampler_for

__all__ = ["OFFLINE_NOTE", "OfflineModel", "create", "sample_value", "sampler_for"]

OFFLINE_NOTE = "[alloy offline model]"


class OfflineModel:
    """Answers from the request alone; see the module docstring."""

    capabilities = Profile(strict_tools=True)

    def __init__(self, model_id: str = "", *, reply: str | None = None, schema: Any = None) -> None:
        self.model_id = model_id
        self.name = f"offline:{model_id}" if model_id else "offline"
        #: The answer to give when no schema says what to answer: a reply the output accepts.
        self.reply = reply
        #: The output schema this model is bound to, and its values as a function of the seed.
        self._schema = schema
        self._sample = sampler_for(schema) if isinstance(schema, dict) else None

    def for_output(self, output: OutputType) -> OfflineModel:
        """This model, answering ``output``'s commands: with a reply a text format accepts, and
        with values of its schema worked out once instead of on every call."""
        reply, schema = output.example(), output.schema
        if reply == self.reply and schema is self._schema:
            return self
        return OfflineModel(self.model_id, reply=reply, schema=schema)

    def request(self, request: Request) -> Response:
        prompt = _prompt_text(request)
        seed = zlib.crc32(prompt.encode())
        if request.tools and not _has_tool_results(request):
            calls = tuple(
                ToolCall(f"call_offline_{i}", tool.name, _sample_object(tool.parameters, seed + i))
                for i, tool in enumerate(request.tools)
            )
            return self._reply(prompt, calls, "", "tool_calls")
        if request.output is not None:
            schema = request.output.schema
            sample = self._sample if schema is self._schema else None
            value = sample(seed) if sample is not None else sample_value(schema, seed=seed)
            if request.output.mode == "tool":
                call = ToolCall("call_offline_output", request.output.name, value)
                return self._reply(prompt, (call,), "", "tool_calls")
            text = to_json(value).decode()  # pydantic's serializer: faster than json.dumps
        elif self.reply is not None:
            text = self.reply
        else:
            text = _text_answer(request)
        return self._reply(prompt, (Text(text),), text, "stop")

    async def arequest(self, request: Request) -> Response:
        return self.request(request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        response = self.request(request)
        for word in _chunks(response.text):
            yield TextDelta(word)
        yield Done(response)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        for event in self.stream(request):
            yield event

    def _reply(self, prompt: str, parts: tuple[Any, ...], text: str, finish: Any) -> Response:
        """The reply, with token counts estimated at four characters a token."""
        # Positional: this runs on every offline call, and keyword arguments cost more.
        usage = Usage(max(1, len(prompt) // 4), max(1, len(text) // 4), 0, 0, 1)
        return Response(parts, usage, finish, self.name)


def create(
    model_id: str, *, api_key: str | None = None, base_url: str | None = None
) -> OfflineModel:
    """Registry factory; the offline model needs neither key nor URL."""
    return OfflineModel(model_id)


def _prompt_text(request: Request) -> str:
    for message in request.messages:
        if isinstance(message, UserTurn):
            return "".join(p.text for p in message.parts if isinstance(p, Text))
    return ""


def _has_tool_results(request: Request) -> bool:
    return any(
        isinstance(part, ToolResult)
        for message in request.messages
        if isinstance(message, UserTurn)
        for part in message.parts
    )


def _tool_summary(request: Request) -> str:
    results = [
        f"{part.name} -> {part.content[:60]}"
        for message in request.messages
        if isinstance(message, UserTurn)
        for part in message.parts
        if isinstance(part, ToolResult)
    ]
    return f" Tool results: {'; '.join(results)}." if results else ""


def _text_answer(request: Request) -> str:
    prompt = " ".join(_prompt_text(request).split())
    if len(prompt) > 80:
        prompt = prompt[:79] + "…"
    return (
        f"{OFFLINE_NOTE} This is a stand-in answer, not a real model's. Set ALLOY_MODEL and a provider key "
        f"for real answers. You asked: {prompt!r}.{_tool_summary(request)}"
    )


def _sample_object(schema: Any, seed: int) -> dict[str, Any]:
    value = sample_value(schema, seed=seed)
    return value if isinstance(value, dict) else {}


def _chunks(text: str) -> Iterator[str]:
    """The text a word at a time, and at most 8 characters at a time (compact JSON has no
    spaces, and a typed answer should stream in pieces too)."""
    start = 0
    while start < len(text):
        end = text.find(" ", start + 1)
        end = min(len(text) if end == -1 else end, start + 8)
        yield text[start:end]
        start = end
