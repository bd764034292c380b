"""The typed routes over real HTTP: bodies checked against the signature, errors with their
own statuses, streams that end in [DONE] or an error event, batches, the OpenAPI document."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from alloy import command
from alloy.serve import ServeConfig
from alloy.testing.emulator import (
    RateLimited,
    ReplyJson,
    ReplyMalformedJson,
    ReplyText,
    StreamError,
    Unauthorized,
)

from .conftest import Start
from .served import CANARY, Mood, Review, review


def events(body: str) -> list[tuple[str, Any]]:
    """The SSE frames of a body as (event, data) pairs; ``[DONE]`` as ("message", "[DONE]")."""
    out = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        event, data = "message", ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        out.append((event, data if data == "[DONE]" else json.loads(data)))
    return out


def test_a_call_returns_the_typed_value_with_usage(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyJson({"title": "Fine", "stars": 4, "mood": "calm"}))
    url = start()
    response = httpx.post(f"{url}/commands/review", json={"product": "kettle", "limit": 4})
    assert response.status_code == 200
    body = response.json()
    assert body["value"] == {"title": "Fine", "stars": 4, "mood": "calm"}
    assert body["usage"]["requests"] == 1 and body["usage"]["input_tokens"] > 0
    assert body["model"] == "openai:gpt-5-mini"
    sent = on_emulator.last_request("openai").body
    assert "kettle" in json.dumps(sent) and "at most 4 stars" in json.dumps(sent)


def test_invalid_bodies_are_422_with_each_fields_error(start: Start, offline: None) -> None:
    url = start()
    missing = httpx.post(f"{url}/commands/review", json={"limit": "many", "extra": 1})
    assert missing.status_code == 422
    errors = {tuple(e["loc"]): e["type"] for e in missing.json()["detail"]}
    assert errors == {
        ("body", "product"): "missing",
        ("body", "limit"): "int_parsing",
        ("body", "extra"): "extra_forbidden",
    }
    not_json = httpx.post(
        f"{url}/commands/review", content=b"{", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422


def test_a_rail_block_is_403_with_the_rail(start: Start, offline: None) -> None:
    url = start()
    response = httpx.post(f"{url}/commands/guarded", json={"text": "my password is hunter2"})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["type"] == "rail_blocked"
    assert error["rail"] == "no_passwords"
    assert error["reason"] == "the prompt mentions a password"


@pytest.mark.parametrize(
    ("fault", "status", "kind"),
    [
        (RateLimited(retry_after=7, retry_after_ms=None), 429, "rate_limited"),
        (Unauthorized(), 502, "provider_error"),
    ],
)
def test_provider_failures_have_documented_statuses(
    start: Start, on_emulator: Any, fault: Any, status: int, kind: str
) -> None:
    on_emulator.push("openai", fault)
    url = start()
    response = httpx.post(f"{url}/commands/echo", json={"name": "x"})
    assert response.status_code == status
    assert response.json()["error"]["type"] == kind
    if status == 429:
        assert response.headers["retry-after"] == "7"


def test_an_unusable_answer_is_502_without_the_answer_in_it(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", *[ReplyMalformedJson(f"not json {CANARY}")] * 6)
    url = start()
    response = httpx.post(f"{url}/commands/review", json={"product": "kettle"})
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "output_error"
    assert CANARY not in response.text


def test_text_stream_ends_in_done_with_the_result(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyText("one two three four"))
    url = start()
    response = httpx.post(f"{url}/commands/echo/stream", json={"name": "x"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = events(response.text)
    texts = [data["text"] for event, data in frames if event == "text"]
    assert len(texts) > 1 and "".join(texts) == "one two three four"
    assert frames[-2][0] == "result" and frames[-2][1]["value"] == "one two three four"
    assert frames[-1] == ("message", "[DONE]")


def test_typed_stream_sends_partials_then_the_value(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyJson({"title": "A long title", "stars": 3, "mood": "angry"}))
    url = start()
    frames = events(httpx.post(f"{url}/commands/review/stream", json={"product": "p"}).text)
    partials = [data["data"] for event, data in frames if event == "partial"]
    assert partials and partials[-1] == {"title": "A long title", "stars": 3, "mood": "angry"}
    assert frames[-2][1]["value"] == {"title": "A long title", "stars": 3, "mood": "angry"}
    assert frames[-1][1] == "[DONE]"


def test_a_failure_mid_stream_ends_in_an_error_event(start: Start, on_emulator: Any) -> None:
    on_emulator.push(
        "openai", StreamError(after=7, reply=ReplyText("alpha beta gamma delta epsilon"))
    )
    url = start()
    response = httpx.post(f"{url}/commands/echo/stream", json={"name": "x"})
    assert response.status_code == 200  # the status went out with the first text
    frames = events(response.text)
    assert any(event == "text" for event, _ in frames)
    assert frames[-2][0] == "error"
    assert frames[-2][1]["error"]["type"] == "provider_error"
    assert frames[-1][1] == "[DONE]"


def test_a_failure_before_the_stream_starts_is_a_plain_error(
    start: Start, on_emulator: Any
) -> None:
    on_emulator.push("openai", Unauthorized())
    url = start()
    response = httpx.post(f"{url}/commands/echo/stream", json={"name": "x"})
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "provider_error"


def test_output_rails_hold_streams_back(start: Start, on_emulator: Any) -> None:
    """With a blocking output rail, no byte of the canary leaves on either stream route."""
    url = start()
    on_emulator.push("openai", ReplyText(f"here it comes: {CANARY} and more words after"))
    text = httpx.post(f"{url}/commands/guarded/stream", json={"text": "hi"})
    on_emulator.push("openai", ReplyJson({"title": CANARY, "stars": 1, "mood": "calm"}))
    typed = httpx.post(f"{url}/commands/guarded_review/stream", json={"product": "p"})
    for response in (text, typed):
        assert response.status_code == 403
        assert response.json()["error"]["rail"] == "no_canary"
        assert CANARY.encode() not in response.content
        assert b"CANARY" not in response.content


def test_output_rails_pass_a_held_stream_whole(start: Start, on_emulator: Any) -> None:
    url = start()
    on_emulator.push("openai", ReplyText("nothing to see here"))
    frames = events(httpx.post(f"{url}/commands/guarded/stream", json={"text": "hi"}).text)
    assert [e for e, _ in frames] == ["text", "result", "message"]
    assert frames[0][1]["text"] == "nothing to see here"


def test_batch_gives_one_record_per_input_in_order(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyText("first"), Unauthorized(), ReplyText("third"))
    url = start()
    response = httpx.post(
        f"{url}/commands/echo/batch",
        json={"inputs": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "concurrency": 1},
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["ok"], body["failed"]) == (2, 1)
    assert [r["ok"] for r in body["results"]] == [True, False, True]
    assert body["results"][0]["value"] == "first"
    assert body["results"][1]["error"]["type"] == "provider_error"
    bad = httpx.post(f"{url}/commands/echo/batch", json={"inputs": [{"nom": "a"}]})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "inputs", 0, "name"]


def test_openapi_document_is_valid_31(start: Start, offline: None) -> None:
    from openapi_spec_validator import validate

    url = start()
    document = httpx.get(f"{url}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    validate(document)
    paths = document["paths"]
    for route in ("/commands/review", "/commands/review/stream", "/commands/review/batch"):
        assert route in paths
    body = paths["/commands/review"]["post"]["requestBody"]["content"]["application/json"]
    schema = document["components"]["schemas"][body["schema"]["$ref"].split("/")[-1]]
    assert schema["required"] == ["product"]
    assert schema["additionalProperties"] is False
    answers = paths["/commands/review"]["post"]["responses"]
    assert {"200", "403", "422", "429", "502"} <= set(answers)
    review = document["components"]["schemas"]["ReviewResponse"]
    assert "value" in review["properties"]
    assert httpx.get(f"{url}/docs").status_code == 200


def test_health_and_the_command_list(start: Start, offline: None) -> None:
    url = start()
    health = httpx.get(f"{url}/health").json()
    assert health["status"] == "ok"
    assert "review" in health["commands"] and health["rail_configs"] == ["open", "support"]
    listed = {c["name"]: c for c in httpx.get(f"{url}/commands").json()}
    assert listed["review"]["stream"] == "partial" and listed["echo"]["stream"] == "text"
    assert listed["review"]["description"] == "Review a product."


def test_a_provider_key_from_the_caller_is_refused_unless_allowed(
    start: Start, on_emulator: Any
) -> None:
    url = start()
    header = {"x-alloy-provider-key": "sk-caller"}
    refused = httpx.post(f"{url}/commands/echo", json={"name": "x"}, headers=header)
    assert refused.status_code == 400
    assert "sk-caller" not in refused.text
    allowed = start(config=ServeConfig.create(pass_through_keys=True))
    answer = httpx.post(f"{allowed}/commands/echo", json={"name": "x"}, headers=header)
    assert answer.status_code == 200
    assert on_emulator.last_request("openai").headers["authorization"] == "Bearer sk-caller"


def test_an_unknown_command_is_404(start: Start, offline: None) -> None:
    url = start()
    missing = httpx.post(f"{url}/commands/nope", json={})
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found"


def test_the_command_list_names_output_classes_without_module_paths(
    start: Start, offline: None
) -> None:
    @command(output=list[Review], retries=0)
    def shortlist(product: str) -> str:
        return f"Reviews of {product}"

    @command(output=list[list[Review] | Mood] | None, retries=0)
    def grouped(product: str) -> str:
        return f"Reviews of {product} by mood"

    url = start(objects={"shortlist": shortlist, "grouped": grouped, "review": review})
    listed = {c["name"]: c["output"] for c in httpx.get(f"{url}/commands").json()}
    assert listed == {
        "shortlist": "list[Review]",
        "grouped": "list[list[Review] | Mood] | None",
        "review": "Review",
    }
