"""In-process cost of an instructor call with no network; prints JSON (runs in its venv).

Cases: instructor's whole pipeline over a canned ``chat.completions.create`` that returns one
prebuilt ChatCompletion (instructor has no fake model; this leaves instructor's own work); and
``instructor.from_openai`` over the real ``openai`` SDK with an httpx MockTransport, next to
the raw SDK over the same transport. Mode.TOOLS, instructor's default. instructor takes
pydantic models, so the five-field record is a BaseModel here; ``float`` is one of its simple
types.
"""

from __future__ import annotations

from typing import Any

from _timing import (
    PERSON_JSON,
    arguments,
    chat_body,
    check_person,
    mock_http_client,
    per_call_us,
    report,
)


def main() -> None:
    import json

    import instructor
    import openai
    from openai.types.chat import ChatCompletion
    from pydantic import BaseModel

    class Person(BaseModel):
        name: str
        age: int
        email: str
        score: float
        active: bool

    batch, batches, _ = arguments()
    messages: Any = [{"role": "user", "content": "Describe Ada as a person record."}]

    def canned(arguments: str, name: str) -> Any:
        reply = ChatCompletion.model_validate(chat_body(tool=(name, arguments)))
        client: Any = openai.OpenAI(api_key="bench", max_retries=0)
        client.chat.completions.create = lambda **kwargs: reply
        return instructor.from_openai(client, mode=instructor.Mode.TOOLS)

    canned_person_client = canned(PERSON_JSON, "Person")
    canned_float_client = canned('{"content": 0.97}', "Response")
    body = chat_body(tool=("Person", PERSON_JSON))
    mocked = instructor.from_openai(
        openai.OpenAI(api_key="bench", max_retries=0, http_client=mock_http_client(body)),
        mode=instructor.Mode.TOOLS,
    )
    raw_client: Any = openai.OpenAI(
        api_key="bench", max_retries=0, http_client=mock_http_client(body)
    )

    def raw_chat() -> Person:
        reply = raw_client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        call = reply.choices[0].message.tool_calls[0]
        return Person.model_validate(json.loads(call.function.arguments), strict=True)

    def create(client: Any, model: Any) -> Any:
        return lambda: client.create(model="gpt-4o-mini", messages=messages, response_model=model)

    cases = {
        "canned_float": create(canned_float_client, float),
        "canned_person": create(canned_person_client, Person),
        "sdk_chat_person": create(mocked, Person),
        "raw_chat_person": raw_chat,
    }
    for name, fn in cases.items():
        value = fn()
        if name.endswith("person"):
            check_person(value)
        elif not isinstance(value, float):
            raise AssertionError(f"{name}: {value!r}")
    results = {name: per_call_us(fn, batch=batch, batches=batches) for name, fn in cases.items()}
    notes = {
        "canned": "from_openai(Mode.TOOLS) over a chat.completions.create returning one "
        "prebuilt ChatCompletion with the tool call",
    }
    report("instructor", instructor.__version__, f"openai {openai.__version__}", results, notes)


if __name__ == "__main__":
    main()
