"""What is measured: one typed command per provider, and the same request made with the raw SDK.

The raw side is written the way a user would write it without alloy: a client built once from
the SDK's usual environment variables, the SDK's create call with the JSON Schema written out, the reply text read from the SDK's response
object, and the same pydantic ``TypeAdapter`` validation alloy applies (strict). Both sides talk
to the same emulator with the same model id, and :func:`same_request` checks that the bodies
they send are equal.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

API_KEY = "alloy-bench-key"


# The five-field structured output used throughout. No docstring: pydantic would send it as the
# schema's description, and the hand-written SCHEMA below has none.
@dataclass
class Person:
    name: str
    age: int
    email: str
    score: float
    active: bool


PERSON = TypeAdapter(Person)

#: The JSON Schema a user would write for Person (strict: all required, no extra keys).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "email": {"type": "string"},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "email", "score", "active"],
    "additionalProperties": False,
}


def prompt(subject: str) -> str:
    return f"Describe {subject} as a person record."


SyncCall = Callable[[str], Person]
AsyncCall = Callable[[str], Awaitable[Person]]


def _openai_responses(asynchronous: bool) -> Any:
    import openai

    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    client: Any = cls(max_retries=0)
    text = {"format": {"type": "json_schema", "name": "Person", "schema": SCHEMA, "strict": True}}

    def kwargs(subject: str) -> dict[str, Any]:
        return {"model": "gpt-4o-mini", "input": prompt(subject), "text": text}

    if asynchronous:

        async def acall(subject: str) -> Person:
            response = await client.responses.create(**kwargs(subject))
            return PERSON.validate_json(response.output_text, strict=True)

        return acall

    def call(subject: str) -> Person:
        response = client.responses.create(**kwargs(subject))
        return PERSON.validate_json(response.output_text, strict=True)

    return call


def _openai_chat(asynchronous: bool) -> Any:
    import openai

    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    client: Any = cls(max_retries=0)
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "Person", "schema": SCHEMA, "strict": True},
    }

    def kwargs(subject: str) -> dict[str, Any]:
        return {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": prompt(subject)}],
            "response_format": response_format,
        }

    if asynchronous:

        async def acall(subject: str) -> Person:
            response = await client.chat.completions.create(**kwargs(subject))
            return PERSON.validate_json(response.choices[0].message.content, strict=True)

        return acall

    def call(subject: str) -> Person:
        response = client.chat.completions.create(**kwargs(subject))
        return PERSON.validate_json(response.choices[0].message.content, strict=True)

    return call


def _anthropic(asynchronous: bool) -> Any:
    import anthropic

    cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    client: Any = cls(max_retries=0)
    output_config = {"format": {"type": "json_schema", "schema": SCHEMA}}

    def kwargs(subject: str) -> dict[str, Any]:
        return {
            "model": "claude-haiku-4-5",
            "max_tokens": 4096,
            "messages": [{"role": "user", "content": prompt(subject)}],
            "output_config": output_config,
        }

    def text(message: Any) -> str:
        return "".join(block.text for block in message.content if block.type == "text")

    if asynchronous:

        async def acall(subject: str) -> Person:
            message = await client.messages.create(**kwargs(subject))
            return PERSON.validate_json(text(message), strict=True)

        return acall

    def call(subject: str) -> Person:
        message = client.messages.create(**kwargs(subject))
        return PERSON.validate_json(text(message), strict=True)

    return call


def _gemini(asynchronous: bool) -> Any:
    from google import genai
    from google.genai import types

    client = genai.Client()
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=SCHEMA
    )
    model = "gemini-2.5-flash"

    if asynchronous:

        async def acall(subject: str) -> Person:
            response = await client.aio.models.generate_content(
                model=model, contents=prompt(subject), config=config
            )
            return PERSON.validate_json(response.text or "", strict=True)

        return acall

    def call(subject: str) -> Person:
        response = client.models.generate_content(
            model=model, contents=prompt(subject), config=config
        )
        return PERSON.validate_json(response.text or "", strict=True)

    return call


def _ollama(asynchronous: bool) -> Any:
    import ollama

    cls = ollama.AsyncClient if asynchronous else ollama.Client
    client: Any = cls()

    def kwargs(subject: str) -> dict[str, Any]:
        return {
            "model": "llama3.2",
            "messages": [{"role": "user", "content": prompt(subject)}],
            "format": SCHEMA,
            "stream": False,
        }

    if asynchronous:

        async def acall(subject: str) -> Person:
            response = await client.chat(**kwargs(subject))
            return PERSON.validate_json(response.message.content or "", strict=True)

        return acall

    def call(subject: str) -> Person:
        response = client.chat(**kwargs(subject))
        return PERSON.validate_json(response.message.content or "", strict=True)

    return call


@dataclass(frozen=True)
class Case:
    """One provider: alloy's model string, the SDK it needs, and the raw-SDK twin of the call."""

    key: str
    label: str
    alloy_model: str
    sdk: str
    raw: Callable[[bool], Any]

    def available(self) -> bool:
        """Whether the SDK and alloy's adapter for it are importable here."""
        adapter = {"openai-chat": "openai_chat", "openai": "openai_responses"}.get(
            self.key, self.key
        )
        return (
            importlib.util.find_spec(self.sdk.split(".")[0]) is not None
            and importlib.util.find_spec(f"alloy.providers.{adapter}") is not None
        )

    def raw_sync(self) -> SyncCall:
        fn: SyncCall = self.raw(False)
        return fn

    def raw_async(self) -> AsyncCall:
        """Build inside the event loop that will use it (async clients belong to one loop)."""
        fn: AsyncCall = self.raw(True)
        return fn

    def command(self) -> Any:
        """The alloy command making the same call."""
        from alloy import command

        @command(output=Person, model=self.alloy_model)
        def person(subject: str) -> str:
            return prompt(subject)

        return person


CASES: tuple[Case, ...] = (
    Case("openai", "OpenAI Responses", "openai:gpt-4o-mini", "openai", _openai_responses),
    Case("openai-chat", "OpenAI Chat", "openai-chat:gpt-4o-mini", "openai", _openai_chat),
    Case("anthropic", "Anthropic", "anthropic:claude-haiku-4-5", "anthropic", _anthropic),
    Case("gemini", "Gemini", "gemini:gemini-2.5-flash", "google.genai", _gemini),
    Case("ollama", "Ollama", "ollama:llama3.2", "ollama", _ollama),
)


def emulator_env(root: str) -> dict[str, str]:
    """The SDKs' usual variables pointing at an emulator, as a deployment would set them.

    Both sides read their key and base URL from these, so neither pays for explicit options.
    """
    return {
        "OPENAI_BASE_URL": f"{root}/v1",
        "OPENAI_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": root,
        "GEMINI_API_KEY": API_KEY,
        "OLLAMA_HOST": root,
    }


@contextmanager
def pointing_at(root: str) -> Iterator[None]:
    """Set :func:`emulator_env` for the block; alloy's cached clients are dropped either side."""
    from alloy.providers import clear_model_cache

    saved = {name: os.environ.get(name) for name in emulator_env(root)}
    os.environ.update(emulator_env(root))
    clear_model_cache()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        clear_model_cache()


def same_request(case: Case) -> tuple[bool, str]:
    """Send one call each way to an in-process emulator; compare the JSON bodies received."""
    from alloy.testing.emulator import Emulator

    with Emulator() as emulator, pointing_at(emulator.url):
        case.command()("Ada")
        alloy_body = emulator.last_request().body
        case.raw_sync()("Ada")
        raw_body = emulator.last_request().body
    if alloy_body == raw_body:
        return True, "identical"
    keys = sorted(
        k for k in set(alloy_body) | set(raw_body) if alloy_body.get(k) != raw_body.get(k)
    )
    return False, "differ in " + ", ".join(keys)
