"""What a hostile caller sends the server is refused at the door, with the JSON error shape:
bodies nested too deep or holding text no provider can be sent, typed command bodies that only
fit once coerced."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from alloy import command
from alloy.cli import main
from alloy.errors import ConfigurationError
from alloy.serve import ServeConfig
from alloy.serve._run import refuse_open_door, served_hosts

from .conftest import Start, free_port

ROOT = Path(__file__).resolve().parents[2]

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
            "/v1/chat/completions",
            '{"model": "open", "messages": [{"role": "user", "content": "hi \\uDBFF!"}]}',
            "messages[0].content",
        ),
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


def test_a_surrogate_pair_escaped_in_a_v1_body_is_text_and_sent(
    start: Start, on_emulator: Any
) -> None:
    url = start()
    body = '{"model": "open", "messages": [{"role": "user", "content": "hi \\ud83d\\ude00"}]}'
    answer = httpx.post(url + "/v1/chat/completions", content=body, headers=JSON)
    assert answer.status_code == 200, answer.text
    assert "hi \U0001f600" in json.dumps(on_emulator.requests[0].body, ensure_ascii=False)


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


# -- item 7: cross-site POSTs and DNS rebinding ---------------------------------------------------

CROSS_SITE = [  # what a browser sends cross-site without a CORS preflight, and worse
    {"content-type": "text/plain"},
    {"content-type": "text/plain;charset=UTF-8"},
    {"content-type": "application/x-www-form-urlencoded"},
    {"content-type": "multipart/form-data; boundary=x"},
    {"content-type": "application/jsonx"},
    {},
]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/chat/completions",
            '{"model": "open", "messages": [{"role": "user", "content": "hi"}]}',
        ),
        ("/v1/responses", '{"model": "open", "input": "hi"}'),
        ("/commands/echo", '{"name": "x"}'),
        ("/commands/echo/stream", '{"name": "x"}'),
        ("/commands/echo/batch", '{"inputs": [{"name": "x"}]}'),
    ],
)
def test_a_post_that_is_not_json_is_415_and_runs_nothing(
    start: Start, on_emulator: Any, path: str, body: str
) -> None:
    url = start()  # no keys: the default
    for headers in CROSS_SITE:
        answer = httpx.post(url + path, content=body.encode(), headers=headers)
        assert answer.status_code == 415, (headers, answer.text)
        assert answer.json()["error"]["type"] == "unsupported_media_type"
    assert not on_emulator.requests
    charset = {"content-type": "Application/JSON; charset=utf-8"}
    assert httpx.post(url + path, content=body.encode(), headers=charset).status_code == 200


def test_a_host_that_is_not_the_server_is_421(start: Start, on_emulator: Any) -> None:
    url = start()
    port = url.rsplit(":", 1)[1]
    body = {"model": "open", "input": "hi"}
    for host in (f"attacker.example:{port}", "attacker.example", f"127.0.0.1.evil.example:{port}"):
        answer = httpx.post(url + "/v1/responses", json=body, headers={"host": host})
        assert answer.status_code == 421, host
        assert answer.json()["error"]["type"] == "invalid_host"
        assert httpx.get(url + "/commands", headers={"host": host}).status_code == 421
        assert httpx.get(url + "/", headers={"host": host}).status_code == 421
        assert httpx.get(url + "/health", headers={"host": host}).status_code == 200  # probes
    assert not on_emulator.requests
    for host in (f"localhost:{port}", f"LOCALHOST.:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        answer = httpx.post(url + "/v1/responses", json=body, headers={"host": host})
        assert answer.status_code == 200, host


def test_allowed_hosts_are_the_names_the_server_answers_to(start: Start, offline: None) -> None:
    url = start(config=ServeConfig.create(allowed_hosts=["api.example.com"]))
    ask = {"name": "x"}
    named = httpx.post(url + "/commands/echo", json=ask, headers={"host": "API.example.com:443"})
    assert named.status_code == 200
    assert httpx.post(url + "/commands/echo", json=ask).status_code == 421  # 127.0.0.1 is not
    anyone = start(config=ServeConfig.create(allowed_hosts=["*"]))
    assert (
        httpx.post(anyone + "/commands/echo", json=ask, headers={"host": "x.y"}).status_code == 200
    )


def test_the_served_names_follow_the_bound_address() -> None:
    assert set(served_hosts("127.0.0.1")) == {"localhost", "127.0.0.1", "::1"}
    assert set(served_hosts("127.0.0.2")) == {"localhost", "127.0.0.1", "::1", "127.0.0.2"}
    assert set(served_hosts("::1")) == {"localhost", "127.0.0.1", "::1"}
    assert set(served_hosts("0.0.0.0")) == {"localhost", "127.0.0.1", "::1"}
    assert served_hosts("192.0.2.7") == ("192.0.2.7",)
    assert ServeConfig.from_env(
        {"ALLOY_SERVE_ALLOWED_HOSTS": "a.example, b.example"}
    ).allowed_hosts == (
        "a.example",
        "b.example",
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7"])
def test_serving_without_keys_off_loopback_needs_insecure_no_auth(
    host: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALLOY_SERVE_API_KEYS", raising=False)
    assert main(["serve", "tests.serve.served:echo", "--host", host]) == 2
    error = capsys.readouterr().err
    assert "without API keys" in error and "--insecure-no-auth" in error
    refuse_open_door(host, has_keys=True, insecure_no_auth=False)  # keys: fine
    refuse_open_door(host, has_keys=False, insecure_no_auth=True)  # said so: fine
    refuse_open_door("127.0.0.1", has_keys=False, insecure_no_auth=False)
    refuse_open_door("localhost", has_keys=False, insecure_no_auth=False)


def test_an_open_server_answers_only_to_its_allowed_names(offline: None) -> None:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "alloy",
            "serve",
            "tests.serve.served:echo",
            "--port",
            str(port),
            "--host",
            "0.0.0.0",
            "--insecure-no-auth",
            "--allowed-host",
            "api.example.com",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            assert process.poll() is None, "alloy serve exited"
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        ask = {"name": "x"}
        assert httpx.post(url + "/commands/echo", json=ask).status_code == 200  # loopback
        named = httpx.post(url + "/commands/echo", json=ask, headers={"host": "api.example.com"})
        assert named.status_code == 200
        other = httpx.post(url + "/commands/echo", json=ask, headers={"host": "evil.example"})
        assert other.status_code == 421
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- item 8: the body size limit ------------------------------------------------------------------


def raw_post(url: str, head: str, body_chunks: Any = ()) -> tuple[int, dict[str, Any]]:
    """POST with hand-written headers, sending chunks until the server answers; the status and
    JSON body of the answer, read until the server closes the connection (a 413 closes it)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode())
        try:
            for chunk in body_chunks:
                sock.sendall(chunk)
        except OSError:  # the server answered and closed: it reads no more
            pass
        reply = b""
        while data := sock.recv(65536):
            reply += data
    status = int(reply.split(b" ", 2)[1])
    return status, json.loads(reply.partition(b"\r\n\r\n")[2])


def test_a_declared_length_over_the_limit_is_413_before_any_byte_is_read(
    start: Start, on_emulator: Any
) -> None:
    url = start()  # the default limit: 4 MiB
    assert ServeConfig.create().max_body_bytes == 4 * 1024 * 1024
    head = (
        "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n"
    )
    status, body = raw_post(url, head)  # sends no body at all: the answer comes anyway
    assert status == 413
    assert body["error"]["type"] == "request_too_large"
    assert not on_emulator.requests


def test_a_chunked_body_is_cut_off_at_the_limit(start: Start, on_emulator: Any) -> None:
    url = start(config=ServeConfig.create(max_body_bytes=10_000))
    head = (
        "POST /commands/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    piece = b"x" * 1000
    endless = (b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(100_000))  # 100 MB offered
    status, body = raw_post(url, head, endless)
    assert status == 413 and body["error"]["type"] == "request_too_large"
    assert not on_emulator.requests


def test_a_body_at_the_limit_is_taken(start: Start, offline: None) -> None:
    limit = 2_000
    url = start(config=ServeConfig.create(max_body_bytes=limit))
    body = b'{"name": "x"}'
    exact = body[:-1] + b" " * (limit - len(body)) + b"}"
    assert len(exact) == limit
    assert httpx.post(url + "/commands/echo", content=exact, headers=JSON).status_code == 200
    over = exact + b" "
    answer = httpx.post(url + "/commands/echo", content=over, headers=JSON)
    assert answer.status_code == 413


def test_the_limit_comes_from_the_environment() -> None:
    config = ServeConfig.from_env({"ALLOY_SERVE_MAX_BODY_BYTES": "1000"})
    assert config.max_body_bytes == 1000
    for bad in ("0", "-5", "4MB"):
        with pytest.raises(ConfigurationError, match="ALLOY_SERVE_MAX_BODY_BYTES"):
            ServeConfig.from_env({"ALLOY_SERVE_MAX_BODY_BYTES": bad})


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.fuzz
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_big_bodies_at_once_leave_memory_flat(start: Start, offline: None, fuzz_scale: int) -> None:
    """Four 50 MB bodies at once took the server from 78 to 397 MB before there was a limit.
    Two declare their length, two arrive in chunks; each is cut off at the limit."""
    size_mb, limit = (50, 4 * 1024 * 1024) if fuzz_scale > 1 else (16, 1024 * 1024)
    url = start(config=ServeConfig.create(max_body_bytes=limit))
    piece = b"x" * 65536
    pieces = size_mb * 1024 * 1024 // len(piece)
    declared = (
        "POST /commands/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {pieces * len(piece)}\r\n\r\n"
    )
    chunked = (
        "POST /commands/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    frame = b"%x\r\n%s\r\n" % (len(piece), piece)
    statuses: list[int] = []

    def send(head: str, chunk: bytes) -> None:
        statuses.append(raw_post(url, head, (chunk for _ in range(pieces)))[0])

    before = resident_mb()
    senders = [
        threading.Thread(target=send, args=(head, chunk))
        for head, chunk in (
            (declared, piece),
            (declared, piece),
            (chunked, frame),
            (chunked, frame),
        )
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=300)
    grown = resident_mb() - before
    assert statuses == [413] * 4
    offered = 4 * size_mb
    assert grown < offered / 4, f"resident memory grew {grown:.0f} MB for {offered} MB offered"
