"""``alloy serve`` as a process: it serves, answers its health check, refuses bad targets in
one line, and on SIGTERM lets the request in flight finish before it exits."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from alloy.cli import main
from alloy.testing.emulator import ReplyText, Slow

from .conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "alloy", "serve", *args, "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            raise AssertionError(
                f"alloy serve exited: {process.stdout.read() if process.stdout else ''}"
            )
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("alloy serve did not start")


def wait_for_a_request(emulator: Any, seconds: float = 60) -> None:
    """Until a request reaches the emulator: the server's first call imports the provider's
    SDK, which takes seconds on a busy machine."""
    deadline = time.monotonic() + seconds
    while not emulator.requests:
        assert time.monotonic() < deadline, f"no request reached the emulator in {seconds} s"
        time.sleep(0.01)


def test_sigterm_lets_the_request_in_flight_finish(on_emulator: Any) -> None:
    on_emulator.push("openai", Slow(1.0, ReplyText("finished after all")))
    process, url = serve("tests.serve.served:echo", "tests.serve.served:support")
    try:
        assert httpx.get(f"{url}/health").json()["commands"] == ["echo"]
        answers: list[httpx.Response] = []
        caller = threading.Thread(
            target=lambda: answers.append(
                httpx.post(f"{url}/commands/echo", json={"name": "x"}, timeout=30)
            )
        )
        caller.start()
        wait_for_a_request(on_emulator)  # the call reached the provider: now stop the server
        process.send_signal(signal.SIGTERM)
        caller.join(timeout=30)
        # uvicorn shuts down gracefully, then re-raises the signal it caught (0.29+).
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answers and answers[0].status_code == 200
    assert answers[0].json()["value"] == "finished after all"
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/health", timeout=2)


def test_bad_targets_are_one_line_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "no_such_module_here"]) == 2
    assert "cannot import 'no_such_module_here'" in capsys.readouterr().err
    assert main(["serve", "tests.serve.served:missing"]) == 2
    assert "has no attribute 'missing'" in capsys.readouterr().err
    assert main(["serve", "tests.serve.served:CANARY"]) == 2
    assert "not an alloy command or RailConfig" in capsys.readouterr().err
    assert main(["serve", "tests.serve.served", "--workers", "0"]) == 2


def test_import_alloy_loads_nothing_of_the_server() -> None:
    code = (
        "import sys, alloy, alloy.cli; "
        "print([m for m in ('fastapi', 'uvicorn', 'starlette', 'alloy.serve') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_workers_each_build_the_app_from_the_environment(on_emulator: Any) -> None:
    """With --workers, uvicorn's processes build their apps from ALLOY_SERVE_* variables."""
    process, url = serve("tests.serve.served:echo", "--workers", "2", "--api-key", "k-123")
    # Each request on a new connection, so both workers answer; the second may still be starting
    # when the first does, and on a busy machine take longer than httpx's default 5 s.
    wait = 30
    try:
        assert httpx.get(f"{url}/health", timeout=wait).json()["commands"] == ["echo"]
        assert (
            httpx.post(f"{url}/commands/echo", json={"name": "x"}, timeout=wait).status_code == 401
        )
        answers = {
            httpx.post(
                f"{url}/commands/echo",
                json={"name": "x"},
                headers={"authorization": "Bearer k-123"},
                timeout=wait,
            ).status_code
            for _ in range(4)
        }
        assert answers == {200}
    finally:
        process.terminate()
        process.wait(timeout=30)


RELOADABLE = """
from alloy import command


@command(output=str, model="offline")
def hello(name: str) -> str:
    return f"Say hello to {name}."
"""

ANOTHER = """

@command(output=str, model="offline")
def goodbye(name: str) -> str:
    return f"Say goodbye to {name}."
"""


def test_reload_serves_a_command_added_while_running(tmp_path: Path) -> None:
    """With --reload, saving the module restarts the worker, which serves what the file now holds."""
    module = tmp_path / "reloadable_commands.py"
    module.write_text(RELOADABLE)
    port = free_port()
    arguments = ["reloadable_commands", "--reload", "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "alloy", "serve", *arguments],
        cwd=tmp_path,  # uvicorn watches the directory it runs in
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # the reloader and its worker stop together below
    )
    url = f"http://127.0.0.1:{port}"

    def commands() -> list[str] | None:
        try:
            return list(httpx.get(f"{url}/health", timeout=1).json()["commands"])
        except (httpx.TransportError, ValueError, KeyError):
            return None

    def wait_for(expected: list[str]) -> None:
        for _ in range(600):
            if process.poll() is not None:
                output = process.stdout.read() if process.stdout else ""
                raise AssertionError(f"alloy serve --reload exited: {output}")
            if commands() == expected:
                return
            time.sleep(0.05)
        raise AssertionError(f"the server never listed {expected}; it lists {commands()}")

    try:
        wait_for(["hello"])
        time.sleep(1.1)  # a new modification time, whatever the file system's resolution
        module.write_text(RELOADABLE + ANOTHER)
        wait_for(["goodbye", "hello"])
        answer = httpx.post(f"{url}/commands/goodbye", json={"name": "Ada"}, timeout=10)
        assert answer.status_code == 200
        assert isinstance(answer.json()["value"], str)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_busy_port_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """As docs/cli.md says: exit status 2 and one line, not uvicorn's exit status 3."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "tests.serve.served:echo", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{port}" in err
    assert "in use" in err and len(err.strip().splitlines()) == 1


def test_a_request_cut_off_at_the_graceful_timeout_gets_a_json_503(on_emulator: Any) -> None:
    on_emulator.push("openai", Slow(3.0, ReplyText("too late")))
    process, url = serve("tests.serve.served:echo", "--graceful-timeout", "0.3")
    try:
        answers: list[httpx.Response] = []
        caller = threading.Thread(
            target=lambda: answers.append(
                httpx.post(f"{url}/commands/echo", json={"name": "x"}, timeout=30)
            )
        )
        caller.start()
        wait_for_a_request(on_emulator)  # the call reached the provider: now stop the server
        process.send_signal(signal.SIGTERM)
        caller.join(timeout=30)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answers and answers[0].status_code == 503
    assert answers[0].headers["content-type"] == "application/json"
    error = answers[0].json()["error"]
    assert (error["type"], error["code"]) == ("server_shutting_down", "server_shutting_down")
    assert "shutting down" in error["message"]
