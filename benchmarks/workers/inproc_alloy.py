"""In-process cost of an alloy call with no network; prints JSON. Run by ``benchmarks.inprocess``.

Cases: the built-in offline model (generates a schema-valid value per call); a canned model
(returns one prebuilt Response: alloy's own overhead only); and the OpenAI adapters over the
real ``openai`` SDK with an httpx MockTransport, next to the raw SDK over the same transport.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from _timing import (
    PERSON_JSON,
    arguments,
    chat_body,
    check_person,
    mock_http_client,
    per_call_us,
    raw_chat,
    raw_responses,
    report,
    responses_body,
)


@dataclass
class Person:
    name: str
    age: int
    email: str
    score: float
    active: bool


def main() -> None:
    import openai
    from pydantic import TypeAdapter

    import alloy
    from alloy import command
    from alloy._types import Capabilities, Response, Text, Usage
    from alloy.providers.openai_chat import OpenAIChatModel
    from alloy.providers.openai_responses import OpenAIResponsesModel

    batch, batches, only = arguments()

    class Canned:
        """A model that returns one prebuilt reply: what is left is alloy's own work."""

        capabilities = Capabilities(native_schema=True, tools=True, strict_tools=True)

        def __init__(self, text: str) -> None:
            self.name = "canned"
            self.reply = Response((Text(text),), usage=Usage(1, 1, requests=1), model="canned")

        def request(self, request: Any) -> Response:
            return self.reply

        async def arequest(self, request: Any) -> Response:
            return self.reply

        def stream(self, request: Any) -> Any:
            raise NotImplementedError("the in-process suite makes whole calls only")

        def astream(self, request: Any) -> Any:
            raise NotImplementedError("the in-process suite makes whole calls only")

    def mocked(cls: Any, body: dict[str, Any]) -> Any:
        class Mocked(cls):  # type: ignore[misc]
            def make_client(self, *, asynchronous: bool) -> Any:
                return openai.OpenAI(
                    api_key="bench", max_retries=0, http_client=mock_http_client(body)
                )

        return Mocked("gpt-4o-mini")

    def typed(output: Any, model: Any) -> Any:
        @command(output=output, model=model)
        def describe(subject: str) -> str:
            return f"Describe {subject} as a person record."

        return describe

    offline_float = typed(float, "offline")
    offline_person = typed(Person, "offline")
    canned_float = typed(float, Canned('{"value": 0.97}'))
    canned_person = typed(Person, Canned(PERSON_JSON))
    sdk_responses = typed(Person, mocked(OpenAIResponsesModel, responses_body(PERSON_JSON)))
    sdk_chat = typed(Person, mocked(OpenAIChatModel, chat_body(PERSON_JSON)))

    adapter = TypeAdapter(Person)
    responses_client = openai.OpenAI(
        api_key="bench", max_retries=0, http_client=mock_http_client(responses_body(PERSON_JSON))
    )
    chat_client = openai.OpenAI(
        api_key="bench", max_retries=0, http_client=mock_http_client(chat_body(PERSON_JSON))
    )

    cases = {
        "fake_float": lambda: offline_float("Ada"),
        "fake_person": lambda: offline_person("Ada"),
        "canned_float": lambda: canned_float("Ada"),
        "canned_person": lambda: canned_person("Ada"),
        "sdk_responses_person": lambda: sdk_responses("Ada"),
        "raw_responses_person": raw_responses(responses_client, adapter),
        "sdk_chat_person": lambda: sdk_chat("Ada"),
        "raw_chat_person": raw_chat(chat_client, adapter),
    }
    cases = {name: fn for name, fn in cases.items() if only is None or name in only}
    for name, fn in cases.items():
        value = fn()
        if name.endswith("person"):
            check_person(value)
        elif not isinstance(value, float):
            raise AssertionError(f"{name}: {value!r}")
    results = {name: per_call_us(fn, batch=batch, batches=batches) for name, fn in cases.items()}
    version = getattr(alloy, "__version__", "working tree")
    notes = {
        "fake": "built-in offline model: a schema-valid value generated per call (alloy.providers.offline._sample)",
        "canned": "a Model object returning one prebuilt Response",
    }
    report("alloy", version, f"openai {openai.__version__}", results, notes)


if __name__ == "__main__":
    main()
