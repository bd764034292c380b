"""A real ``redis-server`` on a free loopback port, started and stopped by the tests.

``make test`` installs it (the Makefile's ``redis-server`` target); on a machine
without it the Redis tests are skipped, saying so, except in CI, where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

STARTUP_SECONDS = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def require_redis() -> str:
    """The redis-server binary and the redis client, or a skip (a failure in CI)."""
    binary = shutil.which("redis-server")
    missing = []
    if binary is None:
        missing.append("redis-server (apt-get install redis-server; make test installs it)")
    try:
        import redis  # noqa: F401
    except ImportError:
        missing.append("the redis package (pip install 'alloy[redis]')")
    if missing:
        why = "the Redis store's tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    assert binary is not None
    return binary


@contextmanager
def redis_server(directory: str) -> Iterator[str]:
    """A redis-server on 127.0.0.1 with nothing saved to disk; yields its URL."""
    binary = require_redis()
    import redis

    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            directory,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
