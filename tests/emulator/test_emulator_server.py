"""The server itself: start-up and shutdown, leaks, concurrency, routing, and the command line."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest

from alloy.testing.emulator import (
    DEFAULT_TEXT,
    Emulator,
    RateLimited,
    ReplyJson,
    ReplyText,
    Slow,
)

REPO = Path(__file__).resolve().parents[2]


def _emulator_threads() -> set[threading.Thread]:
    """The emulator threads alive now. Compared as ``<= before``: a thread of another emulator
    (the session's, serving an earlier test) may end meanwhile, but none may be left over."""
    return {t for t in threading.enumerate() if t.name.startswith("alloy-emulator")}


def test_starts_fast_and_stops_without_leaks() -> None:
    before = _emulator_threads()
    emulator = Emulator().start()
    port = emulator.port
    with httpx.Client() as client:  # keep-alive connections stay open until stop()
        for _ in range(3):
            assert client.get(f"{emulator.url}/api/version").status_code == 200
        with httpx.Client() as other:
            other.get(f"{emulator.url}/api/tags")
            assert emulator.open_connections() == 2
            emulator.stop()
    assert _emulator_threads() <= before
    assert not emulator.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    with socket.socket() as probe:  # the port is free again
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))


def test_stop_does_not_wait_for_slow_replies() -> None:
    before = _emulator_threads()
    emulator = Emulator().start()
    emulator.push("openai", Slow(30))
    errors: list[BaseException] = []

    def call() -> None:
        try:
            httpx.post(
                f"{emulator.openai_base_url}/responses",
                json={"model": "m", "input": "x"},
                headers={"authorization": "Bearer k"},
                timeout=60,
            )
        except httpx.HTTPError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not emulator.requests:
        time.sleep(0.01)
    emulator.stop()  # returns although a reply is still sleeping 30 s (else pytest-timeout fires)
    caller.join(10)
    assert not caller.is_alive() and errors  # the client saw the connection close
    assert _emulator_threads() <= before


async def test_concurrent_sdk_calls_reuse_connections() -> None:
    """300 SDK calls, 100 in flight: all answered, over keep-alive connections."""
    with Emulator() as emulator:
        client = openai.AsyncOpenAI(base_url=emulator.openai_base_url, api_key="k", max_retries=0)
        gate = asyncio.Semaphore(100)
        schema = {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": False,
        }
        fmt = {"format": {"type": "json_schema", "name": "n", "schema": schema, "strict": True}}

        async def one(index: int) -> str:
            async with gate:
                if index % 2:
                    response = await client.responses.create(
                        model="gpt-4o", input=str(index), text=fmt
                    )
                    return str(json.loads(response.output_text)["n"] >= 0)
                events = [
                    e
                    async for e in await client.responses.create(
                        model="gpt-4o", input="x", stream=True
                    )
                ]
                return events[-1].response.output_text

        results = await asyncio.gather(*(one(i) for i in range(300)))
        await client.close()
        assert results.count("True") == 150 and results.count(DEFAULT_TEXT) == 150
        assert len(emulator.requests) == 300
        assert emulator.connections_accepted <= 110


def test_raw_concurrency_with_threads() -> None:
    with Emulator() as emulator:
        emulator.push("ollama", *[ReplyText(str(i)) for i in range(120)])
        results: list[str] = []
        lock = threading.Lock()

        def worker() -> None:
            with httpx.Client() as client:
                for _ in range(4):
                    body = client.post(
                        f"{emulator.ollama_host}/api/chat",
                        json={"model": "m", "messages": [], "stream": False},
                    ).json()
                    with lock:
                        results.append(body["message"]["content"])

        threads = [threading.Thread(target=worker) for _ in range(30)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results, key=int) == [str(i) for i in range(120)]


def test_routes_and_dialects(alloy_emulator: Emulator) -> None:
    url = alloy_emulator.url
    assert httpx.get(f"{url}/v1/models").json()["object"] == "list"
    assert httpx.head(f"{url}/").status_code == 200
    unknown = httpx.post(f"{url}/v1/nope", json={})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_url"
    assert httpx.get(f"{url}/api/nope").status_code == 404
    assert alloy_emulator.requests[-1].provider is None
    prefixed = httpx.post(
        f"{url}/proxy/v1/chat/completions",
        headers={"authorization": "Bearer k"},
        json={"model": "m", "messages": []},
    )
    assert prefixed.status_code == 200  # a path prefix before /v1 is fine (proxies, gateways)


@pytest.mark.parametrize(
    ("path", "headers", "check"),
    [
        (
            "/v1/responses",
            {"authorization": "Bearer k"},
            lambda b: b["error"]["type"] == "invalid_request_error",
        ),
        ("/v1/messages", {"x-api-key": "k"}, lambda b: b["type"] == "error"),
        (
            "/v1beta/models/g:generateContent",
            {"x-goog-api-key": "k"},
            lambda b: b["error"]["status"] == "INVALID_ARGUMENT",
        ),
        ("/api/chat", {}, lambda b: isinstance(b["error"], str)),
    ],
)
def test_malformed_json_gets_the_provider_400(
    alloy_emulator: Emulator, path: str, headers: dict[str, str], check: object
) -> None:
    response = httpx.post(alloy_emulator.url + path, content=b"{not json", headers=headers)
    assert response.status_code == 400
    assert check(response.json())  # type: ignore[operator]
    assert alloy_emulator.last_request().raw_body == b"{not json"


def test_chunked_request_body_and_query(alloy_emulator: Emulator) -> None:
    def body() -> object:
        yield b'{"model": "m", '
        yield b'"messages": [], "stream": false}'

    response = httpx.post(f"{alloy_emulator.ollama_host}/api/chat?trace=1", content=body())
    assert response.status_code == 200
    request = alloy_emulator.last_request("ollama")
    assert request.body["model"] == "m" and request.query == {"trace": ["1"]}


def test_script_validation_and_reset(alloy_emulator: Emulator) -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        alloy_emulator.push("mistral", ReplyText("x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        alloy_emulator.push("openai", "just a string")  # type: ignore[arg-type]
    alloy_emulator.push("openai", RateLimited(), ReplyJson(1))
    assert len(alloy_emulator.pending("openai")) == 2
    alloy_emulator.reset()
    assert alloy_emulator.pending("openai") == [] and alloy_emulator.requests == []
    with pytest.raises(LookupError):
        alloy_emulator.last_request("gemini")


def test_command_line_serves_until_interrupted() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "alloy.testing.emulator", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline().strip()
        assert banner.startswith("alloy emulator listening on http://127.0.0.1:")
        url = banner.rsplit(" ", 1)[-1]
        env_lines = [process.stdout.readline().strip() for _ in range(7)]
        assert f"OPENAI_BASE_URL={url}/v1" in env_lines
        assert httpx.get(f"{url}/api/version").status_code == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_command_line_reports_a_taken_port() -> None:
    with Emulator() as emulator:
        result = subprocess.run(
            [sys.executable, "-m", "alloy.testing.emulator", "--port", str(emulator.port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert result.returncode == 2
    assert "Address already in use" in result.stderr and "Traceback" not in result.stderr
