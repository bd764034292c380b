"""What a hostile caller sends the server is refused at the door, with the JSON error shape:
bodies nested too deep or holding text no provider can be sent, typed command bodies that only
fit once coerced."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from alloy import command

from .conftest import Start

JSON = {"content-type": "application/json"}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("path", "field"), [("/v1/chat/completions", "messages"), ("/v1/responses", "input")]
)
def test_deeply_nested_v1_bodies_are_400_not_500(
    start: Start, on_emulator: Any, path: str, field: str
) -> None:
    url = start()
    for depth in (501, 100_000):
        body = f'{{"model": "open", "{field}": {nested(depth)}}}'
        answer = httpx.post(url + path, content=body, headers=JSON)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert "nested deeper than 500 levels" in error["message"]
    assert not on_emulator.requests


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (
            "/v1/chat/completions",
            '{"model": "open", "messages": [{"role": "user", "content": "hi \\ud800"}]}',
            "messages[0].content",
        ),
        (
            "/v1/chat/completions",
            '{"model": "open", "messages": [{"role": "user", "content": '
            '[{"type": "text", "text": "\\udfff"}]}]}',
            "messages[0].content[0].text",
        ),
        ("/v1/responses", '{"model": "open", "input": "x \\udc00"}', "input"),
        (
            "/v1/responses",
            '{"model": "open", "input": "hi", "instructions": "\\ud83d"}',
            "instructions",
        ),
    ],
)
def test_a_lone_surrogate_in_a_v1_body_is_a_400_naming_the_field(
    start: Start, on_emulator: Any, path: str, body: str, param: str
) -> None:
    url = start()
    answer = httpx.post(url + path, content=body, headers=JSON)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert "lone surrogate" in error["message"] and param in error["message"]
    assert not on_emulator.requests  # refused before anything was sent


def test_a_v1_body_that_is_not_utf8_is_a_400(start: Start, on_emulator: Any) -> None:
    url = start()
    body = b'{"model": "open", "input": "caf\xe9"}'
    answer = httpx.post(url + "/v1/responses", content=body, headers=JSON)
    assert answer.status_code == 400
    assert "UTF-8" in answer.json()["error"]["message"]
    assert not on_emulator.requests


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/commands/review", {"product": "x", "strict": 1}, "strict"),
        ("/commands/review", {"product": "x", "limit": True}, "limit"),
        ("/commands/review", {"product": "x", "limit": "5"}, "limit"),
        ("/commands/review", {"product": 5}, "product"),
        ("/commands/review/stream", {"product": "x", "limit": "5"}, "limit"),
        ("/commands/review/batch", {"inputs": [{"product": "x", "limit": True}]}, "limit"),
        ("/commands/review/batch", {"inputs": [], "concurrency": "2"}, "concurrency"),
    ],
)
def test_typed_command_bodies_are_not_coerced(
    start: Start, offline: None, route: str, body: dict[str, Any], field: str
) -> None:
    url = start()
    answer = httpx.post(url + route, json=body)
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert error["loc"][0] == "body" and error["loc"][-1] == field
    assert "input" not in error  # the value sent is not echoed


def test_json_strings_still_mean_what_the_schema_says(start: Start, offline: None) -> None:
    """Strict as tool arguments are: a JSON string is still an Enum value or a date."""
    url = start()
    answer = httpx.post(url + "/commands/review", json={"product": "x", "strict": True, "limit": 3})
    assert answer.status_code == 200, answer.text
    batch = httpx.post(url + "/commands/review/batch", json={"inputs": [{"product": "x"}]})
    assert batch.status_code == 200 and batch.json()["ok"] == 1


def test_nan_is_no_number_in_a_command_body(start: Start, offline: None) -> None:
    @command(retries=0)
    def scale(factor: float) -> str:
        """Scale."""
        return f"Scale by {factor}"

    url = start(objects={"scale": scale})
    for body in ('{"factor": NaN}', '{"factor": Infinity}', '{"factor": -Infinity}'):
        answer = httpx.post(url + "/commands/scale", content=body, headers=JSON)
        assert answer.status_code == 422, body
    assert httpx.post(url + "/commands/scale", json={"factor": 2}).status_code == 200
