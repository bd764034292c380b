"""``alloy serve`` writes one access-log line per request to stderr: client, method, path,
status, bytes sent and milliseconds; the body only with ``--log-content``."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from alloy.serve._observe import AccessLog

from .conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "prompt-text-9d2b"
LINE = re.compile(r'(127\.0\.0\.1:\d+) "(\w+) (\S+)" (\d+) (\d+)B (\d+\.\d)ms')


class Server:
    """``alloy serve`` in a subprocess, its stderr kept apart from its stdout."""

    def __init__(self, *flags: str) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "alloy", "serve", "tests.serve.served:echo"]
        self.process = subprocess.Popen(
            [*command, "--port", str(port), *flags],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "ALLOY_MODEL": "offline"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(600):
            if self.process.poll() is not None:
                raise AssertionError(f"alloy serve exited: {self.process.communicate()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError("alloy serve did not start")

    def stop(self) -> str:
        """Stop the server; its stderr."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Server] = []

    def launch(*flags: str) -> Server:
        started.append(Server(*flags))
        return started[-1]

    yield launch
    for server in started:
        server.stop()


def posts(stderr: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.search, stderr.splitlines()) if m and m.group(2) == "POST"]


def test_each_request_is_one_line_on_stderr_without_its_body(serve: Any) -> None:
    server = serve()
    answer = httpx.post(f"{server.url}/commands/echo", json={"name": SECRET})
    streamed = httpx.post(f"{server.url}/commands/echo/stream", json={"name": SECRET})
    missing = httpx.post(f"{server.url}/commands/nothing", json={})
    assert (answer.status_code, streamed.status_code, missing.status_code) == (200, 200, 404)
    stderr = server.stop()
    lines = posts(stderr)
    assert [(m.group(3), m.group(4)) for m in lines] == [
        ("/commands/echo", "200"),
        ("/commands/echo/stream", "200"),
        ("/commands/nothing", "404"),
    ]
    # The bytes are those the client received, for a streamed answer too.
    assert [int(m.group(5)) for m in lines] == [
        len(answer.content),
        len(streamed.content),
        len(missing.content),
    ]
    assert SECRET not in stderr


def test_log_content_puts_the_body_on_the_same_line(serve: Any) -> None:
    server = serve("--log-content")
    body = {"name": f"{SECRET}\nsecond line"}
    assert httpx.post(f"{server.url}/commands/echo", json=body).status_code == 200
    stderr = server.stop()
    (line,) = [text for text in stderr.splitlines() if '"POST /commands/echo"' in text]
    logged = json.loads(line.split(" body=", 1)[1])
    assert json.loads(logged) == body


def test_a_stream_counts_only_the_bytes_sent_before_the_client_left(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the server sends after the client went away reached no one: it is not counted."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * 10, "more_body": True})
        assert (await receive())["type"] == "http.disconnect"
        await send({"type": "http.response.body", "body": b"y" * 99, "more_body": False})

    async def receive() -> Any:
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        pass

    scope = {"type": "http", "method": "POST", "path": "/s", "client": ("127.0.0.1", 5)}
    caplog.set_level(logging.INFO, logger="alloy.serve.access")
    asyncio.run(AccessLog(app)(scope, receive, send))
    (record,) = [r for r in caplog.records if r.name == "alloy.serve.access"]
    assert '"POST /s" 200 10B' in record.getMessage()
