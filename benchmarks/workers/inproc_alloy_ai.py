"""In-process cost of an alloy-ai 0.3.1 call with no network; prints JSON (runs in its venv).

Cases: its fake backend (``ALLOY_BACKEND=fake``: a value built from the schema per call, no
SDK); and its OpenAI Responses backend over the real ``openai`` SDK with an httpx
MockTransport (alloy-ai builds a backend, and so an OpenAI client, per call; the mock keeps
that as it is), next to the raw SDK over the same transport.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from _timing import (
    PERSON_JSON,
    arguments,
    check_person,
    mock_http_client,
    per_call_us,
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
    from importlib.metadata import version

    import openai

    batch, batches, _ = arguments()
    body = responses_body(PERSON_JSON)
    real_openai = openai.OpenAI

    def mocked_openai(**kwargs: Any) -> Any:
        return real_openai(api_key="bench", max_retries=0, http_client=mock_http_client(body))

    # alloy-ai imports it by name each time it builds a backend (once per call).
    openai.OpenAI = mocked_openai  # type: ignore[misc, assignment]
    os.environ.pop("ALLOY_BACKEND", None)

    from alloy import command, configure

    configure(model="gpt-4o-mini")

    @command(output=float)
    def describe_float(subject: str) -> str:
        return f"Describe {subject} as a person record."

    @command(output=Person)
    def describe_person(subject: str) -> str:
        return f"Describe {subject} as a person record."

    from pydantic import TypeAdapter

    raw_client = real_openai(api_key="bench", max_retries=0, http_client=mock_http_client(body))
    raw = raw_responses(raw_client, TypeAdapter(Person))

    # get_backend() reads ALLOY_BACKEND on every call: fake cases run with it set, then the
    # SDK cases without it (no per-call toggling, which would be measured too).
    fake_cases = {
        "fake_float": lambda: describe_float("Ada"),
        "fake_person": lambda: describe_person("Ada"),
    }
    sdk_cases = {
        "sdk_responses_person": lambda: describe_person("Ada"),
        "raw_responses_person": raw,
    }
    os.environ["ALLOY_BACKEND"] = "fake"
    if not isinstance(describe_float("Ada"), float):
        raise AssertionError("fake_float did not return a float")
    results = {
        name: per_call_us(fn, batch=batch, batches=batches) for name, fn in fake_cases.items()
    }
    del os.environ["ALLOY_BACKEND"]
    for fn in sdk_cases.values():
        check_person(fn())
    results.update(
        {name: per_call_us(fn, batch=batch, batches=batches) for name, fn in sdk_cases.items()}
    )
    notes = {
        "fake": "ALLOY_BACKEND=fake: its fake backend, a value built from the schema per call "
        "(a float output is answered with the literal text 42)",
    }
    report("alloy-ai", version("alloy-ai"), f"openai {openai.__version__}", results, notes)


if __name__ == "__main__":
    main()
