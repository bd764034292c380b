"""What the hardening tests share: the providers as alloy names them, and a command per form."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy.providers import providers

#: alloy provider -> (model string, the emulator queue serving it, the SDK's key variable), for
#: every provider the emulator speaks to, from its descriptor (its first example model).
PROVIDERS: dict[str, tuple[str, str, str]] = {
    p.name: (f"{p.name}:{p.example_models[0]}", p.api_family, p.key_env[0])
    for p in providers().values()
    # A preset over another provider's adapter (vllm:, deepseek:...) is that adapter's wire with
    # another endpoint: tests/providers/test_presets.py covers it, not every matrix again.
    if p.api_family is not None and p.default_base_url is None
}
#: The clouds that run another provider's adapter and wire through their own endpoint and
#: credential (Azure: OpenAI's; Vertex AI: Gemini's; Foundry and Vertex AI: Anthropic's).
#: Claude on Bedrock is not one: its streams come in AWS event-stream framing.
SHARES_AN_ADAPTER = frozenset(
    {"azure", "azure-chat", "vertex", "anthropic-foundry", "anthropic-vertex"}
)
#: One provider per adapter and wire code path (a new provider is one unless listed above): the
#: suite runs a matrix once per adapter, keeps what differs for a cloud (credentials, request
#: paths, key leaks, error mapping) in its own tests, and runs the full cross under `make fuzz`.
ADAPTERS = frozenset(PROVIDERS) - SHARES_AN_ADAPTER
#: The marks of a cell only the full cross runs (see ``pytest_collection_modifyitems``).
CROSS = (pytest.mark.fuzz, pytest.mark.cross)


def per_adapter(names: Iterable[str] = PROVIDERS) -> list[Any]:
    """``names`` to parametrize a matrix with: each adapter's provider in the suite, the
    providers that share an adapter only under `make fuzz`."""
    return [name if name in ADAPTERS else pytest.param(name, marks=CROSS) for name in sorted(names)]


FORMS = ("call", "acall", "stream", "astream")
STREAMED = ("stream", "astream")
#: The typed streams: partial values of the answer, and the elements of a list answer.
TYPED_STREAMS = ("stream_partial", "astream_partial", "stream_items", "astream_items")
ASYNC_FORMS = frozenset({"acall", "astream", "astream_partial", "astream_items"})


@dataclass
class Weather:
    city: str
    temp_c: float


def weather_command(form: str, **options: Any) -> Any:
    """A command asking for the weather: text for the text streams, a list of Weather for the
    item streams, a Weather otherwise."""
    if form in STREAMED:

        @command(**options)
        def text(city: str) -> str:
            return f"Weather in {city}?"

        return text

    output: Any = list[Weather] if form.endswith("_items") else Weather

    @command(output=output, **options)
    def typed(city: str) -> str:
        return f"Weather in {city}?"

    return typed


def run_form(cmd: Any, form: str, city: str) -> Any:
    """What one call of ``cmd`` in ``form`` gives: its value, the text a stream joins to, or the
    partials or items a typed stream yields (a coroutine for the async forms)."""
    if form in ASYNC_FORMS:
        return _run_async(cmd, form, city)
    if form == "call":
        return cmd(city)
    if form == "stream":
        return "".join(cmd.stream(city))
    return list(getattr(cmd, form)(city))


async def _run_async(cmd: Any, form: str, city: str) -> Any:
    if form == "acall":
        return await cmd.acall(city)
    chunks = [chunk async for chunk in getattr(cmd, form)(city)]
    return "".join(chunks) if form == "astream" else chunks
