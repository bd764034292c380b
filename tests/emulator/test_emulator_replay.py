"""Every recorded provider exchange replays through the emulator into the matching real SDK.

The recorded *request* body is sent again through the SDK (so the emulator's parsing and
strict-schema rules must accept what the real services accepted), and the recorded *response*
comes back byte for byte; the test checks the SDK parsed it into the recorded values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types

from alloy.testing.emulator import Emulator, ReplyRaw

RECORDED = Path("/work/shared/fixtures/recorded")
if not RECORDED.is_dir():  # pragma: no cover - the fixtures live beside the repository
    RECORDED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "recorded"
FILES = sorted(RECORDED.glob("*/*.json"))

pytestmark = [
    pytest.mark.skipif(not FILES, reason="recorded fixtures not available"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # recorded model names age
]


def _split(body: dict[str, Any], *named: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The named keys, and everything else (sent through ``extra_body`` verbatim)."""
    return {k: body[k] for k in named if k in body}, {
        k: v for k, v in body.items() if k not in named
    }


def _openai_responses(emu: Emulator, request: dict[str, Any], response: dict[str, Any]) -> None:
    client = openai.OpenAI(base_url=emu.openai_base_url, api_key="sk-test", max_retries=0)
    args, extra = _split(request["body"], "model", "input", "stream")
    result = client.responses.create(**args, extra_body=extra)
    if "sse_events" in response:
        events = list(result)
        recorded = [e["data"] for e in response["sse_events"]]
        assert [e.type for e in events] == [e["type"] for e in recorded]
        assert events[-1].response.id == recorded[-1]["response"]["id"]
    else:
        assert result.id == response["body"]["id"]
        assert [o.type for o in result.output] == [o["type"] for o in response["body"]["output"]]


def _openai_chat(emu: Emulator, request: dict[str, Any], response: dict[str, Any]) -> None:
    client = openai.OpenAI(base_url=emu.openai_base_url, api_key="sk-test", max_retries=0)
    args, extra = _split(request["body"], "model", "messages", "stream")
    result = client.chat.completions.create(**args, extra_body=extra)
    recorded = response["body"]["choices"][0]["message"]
    assert result.id == response["body"]["id"]
    assert result.choices[0].message.content == recorded.get("content")
    assert [c.function.arguments for c in result.choices[0].message.tool_calls or []] == [
        c["function"]["arguments"] for c in recorded.get("tool_calls") or []
    ]


def _anthropic(emu: Emulator, request: dict[str, Any], response: dict[str, Any]) -> None:
    client = anthropic.Anthropic(
        base_url=emu.anthropic_base_url, api_key="sk-ant-test", max_retries=0
    )
    args, extra = _split(request["body"], "model", "max_tokens", "messages", "stream")
    query = dict(p.split("=", 1) for p in urlsplit(request["uri"]).query.split("&") if p)
    result = client.messages.create(**args, extra_body=extra, extra_query=query)
    if "sse_events" in response:
        events = list(result)
        recorded = [e["data"] for e in response["sse_events"] if e["event"] != "ping"]
        assert [e.type for e in events] == [e["type"] for e in recorded]
        text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
        assert text == "".join(
            e["delta"].get("text", "") for e in recorded if e["type"] == "content_block_delta"
        )
    else:
        assert result.id == response["body"]["id"]
        assert [b.type for b in result.content] == [b["type"] for b in response["body"]["content"]]


def _gemini(emu: Emulator, request: dict[str, Any], response: dict[str, Any]) -> None:
    path = urlsplit(request["uri"]).path  # /v1beta/models/{model}:{method}
    version, _, rest = path.strip("/").partition("/models/")
    model, _, method = rest.partition(":")
    client = genai.Client(
        api_key="gm-test", http_options={"base_url": emu.gemini_base_url, "api_version": version}
    )
    body = request["body"]
    config = {
        **body.get("generationConfig", {}),
        **{k: body[k] for k in ("tools", "toolConfig", "systemInstruction") if k in body},
    }
    contents = [types.Content.model_validate(c) for c in body["contents"]]
    parsed_config = types.GenerateContentConfig.model_validate(config)
    if method == "streamGenerateContent":
        chunks = list(
            client.models.generate_content_stream(
                model=model, contents=contents, config=parsed_config
            )
        )
        recorded = [e["data"] for e in response["sse_events"]]
        assert len(chunks) == len(recorded)
        assert "".join(c.text or "" for c in chunks) == "".join(
            p.get("text", "") for e in recorded for p in e["candidates"][0]["content"]["parts"]
        )
    else:
        result = client.models.generate_content(
            model=model, contents=contents, config=parsed_config
        )
        assert result.response_id == response["body"]["responseId"]
        parts = response["body"]["candidates"][0]["content"]["parts"]
        assert [c.args for c in result.function_calls or []] == [
            p["functionCall"]["args"] for p in parts if "functionCall" in p
        ]
        assert result.text == ("".join(p["text"] for p in parts if "text" in p) or None)
    assert emu.last_request("gemini").path == path


def _ollama(emu: Emulator, request: dict[str, Any], response: dict[str, Any]) -> None:
    client = ollama.Client(host=emu.ollama_host)
    body = request["body"]
    stream = body.get("stream", True)
    result = client.chat(
        model=body["model"],
        messages=body["messages"],
        tools=body.get("tools"),
        format=body.get("format"),
        options=body.get("options"),
        stream=stream,
    )
    recorded = response.get("ndjson") or [response["body"]]
    chunks = list(result) if stream else [result]
    assert len(chunks) == len(recorded)
    for chunk, line in zip(chunks, recorded, strict=True):
        assert chunk.message.content == line["message"]["content"]
        assert [c.function.arguments for c in chunk.message.tool_calls or []] == [
            c["function"]["arguments"] for c in line["message"].get("tool_calls") or []
        ]
        assert chunk.done is line["done"]


CLIENTS = {
    "openai_responses": _openai_responses,
    "openai_chat": _openai_chat,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recording_replays_through_the_sdk(path: Path, alloy_emulator: Emulator) -> None:
    recording = json.loads(path.read_text())
    queued = alloy_emulator.replay(path)
    assert queued == len(recording["interactions"])
    for interaction in recording["interactions"]:
        CLIENTS[path.parent.name](alloy_emulator, interaction["request"], interaction["response"])
    provider = alloy_emulator.requests[-1].provider
    assert provider is not None and alloy_emulator.pending(provider) == []
    sent = [r.body for r in alloy_emulator.requests]
    for request, interaction in zip(sent, recording["interactions"], strict=True):
        if path.parent.name != "gemini":  # google-genai re-serialises the typed config
            for key, value in interaction["request"]["body"].items():
                if key not in ("tools", "messages", "stream"):  # the SDKs normalise these
                    assert request[key] == value, key


def test_sse_replay_is_sent_one_event_per_chunk() -> None:
    raw = ReplyRaw.sse("event: a\ndata: {}\n\nevent: b\ndata: {}\n\n")
    assert raw.frames == (b"event: a\ndata: {}\n\n", b"event: b\ndata: {}\n\n")
    crlf = ReplyRaw.sse('data: {"x": 1}\r\n\r\ndata: {"x": 2}\r\n\r\n')
    assert crlf.frames is not None and len(crlf.frames) == 2


def test_replay_from_a_loaded_mapping(alloy_emulator: Emulator) -> None:
    recording = {
        "_source": {"provider": "openai"},
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions",
                    "body": {},
                },
                "response": {
                    "status": 500,
                    "headers": {"x-request-id": "req_1"},
                    "body": {
                        "error": {
                            "message": "boom",
                            "type": "server_error",
                            "param": None,
                            "code": None,
                        }
                    },
                },
            }
        ],
    }
    assert alloy_emulator.replay(recording) == 1
    client = openai.OpenAI(base_url=alloy_emulator.openai_base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.InternalServerError, match="boom") as caught:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert caught.value.request_id == "req_1"
