"""Bearer keys (401 without one, constant-time comparison, never logged) and 200 concurrent
requests with distinct inputs answered without cross-talk."""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from typing import Any

import httpx
import openai
import pytest

from alloy.errors import ConfigurationError
from alloy.serve import ServeConfig
from alloy.serve import _config as serve_config
from alloy.testing.emulator import ReplyText

from .conftest import Start

KEY = "srv-key-4d2e8b1f-do-not-log"
OTHER = "srv-key-second-9a7c"


def test_requests_without_a_valid_key_get_401(
    start: Start, offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_SERVE_API_KEYS", f"{KEY}, {OTHER}")
    url = start(config=ServeConfig.from_env())
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": KEY}):
        response = httpx.post(f"{url}/commands/echo", json={"name": "x"}, headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["type"] == "unauthorized"
    for key in (KEY, OTHER):
        ok = httpx.post(
            f"{url}/commands/echo", json={"name": "x"}, headers={"authorization": f"Bearer {key}"}
        )
        assert ok.status_code == 200
    # Open paths: they run nothing.
    assert httpx.get(f"{url}/health").status_code == 200
    assert httpx.get(f"{url}/openapi.json").status_code == 200
    assert httpx.get(f"{url}/commands").status_code == 401


def test_the_openai_sdk_sends_the_key_as_its_api_key(start: Start, offline: None) -> None:
    url = start(config=ServeConfig.create(api_keys=[KEY]))
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{url}/v1", api_key="nope", max_retries=0).chat.completions.create(
            model="open", messages=messages
        )
    api = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
    assert api.chat.completions.create(model="open", messages=messages).choices[0].message.content


def test_keys_are_compared_in_constant_time_with_every_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(serve_config.hmac, "compare_digest", spy)
    config = ServeConfig.create(api_keys=[KEY, OTHER, "third"])
    assert config.accepts(KEY)  # the first matches, and the other two are compared all the same
    assert len(calls) == 3
    assert not config.accepts("wrong")
    assert len(calls) == 6
    assert all(len(a) == len(b) == 32 for a, b in calls)  # digests: the length says nothing
    assert KEY not in repr(config) and KEY.encode() not in b"".join(config.key_digests)


def test_blank_keys_and_bad_flags_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="blank"):
        ServeConfig.create(api_keys=["  "])
    with pytest.raises(ConfigurationError, match="ALLOY_SERVE_LOG_CONTENT"):
        ServeConfig.from_env({"ALLOY_SERVE_LOG_CONTENT": "maybe"})
    assert not ServeConfig.from_env({"ALLOY_SERVE_API_KEYS": " , "}).auth


def test_keys_are_never_logged(
    start: Start, offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = start(config=ServeConfig.create(api_keys=[KEY], log_content=True))
    httpx.post(
        f"{url}/commands/echo", json={"name": "x"}, headers={"authorization": f"Bearer {KEY}"}
    )
    httpx.post(
        f"{url}/commands/echo", json={"name": "x"}, headers={"authorization": f"Bearer {KEY}x"}
    )
    for _ in range(500):  # the access line is written just after the answer is sent
        if len([r for r in caplog.records if r.name == "alloy.serve.access"]) >= 2:
            break
        time.sleep(0.01)
    assert len([r for r in caplog.records if r.name == "alloy.serve.access"]) >= 2
    assert not [r for r in caplog.records if KEY in r.getMessage()]


async def _many(url: str, count: int) -> list[tuple[str, Any]]:
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def one(index: int) -> tuple[str, Any]:
            name = f"person-{index:03d}-{index * 7919 % 1000:03d}"
            if index % 2:
                response = await client.post("/commands/echo", json={"name": name})
                return name, response.json()["value"]
            response = await client.post(
                "/v1/chat/completions",
                json={"model": "open", "messages": [{"role": "user", "content": name}]},
            )
            return name, response.json()["choices"][0]["message"]["content"]

        return await asyncio.gather(*(one(i) for i in range(count)))


def test_200_concurrent_requests_show_no_cross_talk(start: Start, offline: None) -> None:
    """The offline model repeats each prompt in its answer: every answer must hold its own
    request's input and no other's."""
    url = start()
    answers = asyncio.run(_many(url, 200))
    names = [name for name, _ in answers]
    assert len(set(names)) == 200
    for name, answer in answers:
        assert name in answer
        assert [other for other in names if other in answer] == [name]


def test_concurrent_requests_through_a_provider(start: Start, on_emulator: Any) -> None:
    """Through the emulator too: each answer is the reply to its own request."""
    url = start()

    async def run() -> list[tuple[str, str]]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:

            async def one(index: int) -> tuple[str, str]:
                name = f"caller-{index}-end"
                response = await client.post("/commands/echo", json={"name": name})
                return name, response.json()["value"]

            return await asyncio.gather(*(one(i) for i in range(50)))

    answers = asyncio.run(run())
    assert all(isinstance(value, str) and value for _, value in answers)
    # Each request the provider saw carries exactly one caller's prompt, and every caller's.
    seen = [
        [i for i in range(50) if f"Say exactly: caller-{i}-end" in str(r.body).replace("\\n", " ")]
        for r in on_emulator.requests
    ]
    assert sorted(i for found in seen for i in found) == list(range(50))
    assert all(len(found) == 1 for found in seen)


def test_emulator_replies_reach_their_own_callers(start: Start, on_emulator: Any) -> None:
    url = start()
    on_emulator.push("openai", ReplyText("only one"))
    assert httpx.post(f"{url}/commands/echo", json={"name": "a"}).json()["value"] == "only one"
