"""A real uvicorn server on 127.0.0.1, in a thread, for each test that asks for one."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn

from alloy.serve import ServeConfig, create_app

from . import served as module

Start = Callable[..., str]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Running:
    """A uvicorn server in a thread; ``stop()`` shuts it down gracefully and waits."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def everything() -> dict[str, Any]:
    return {
        name: getattr(module, name)
        for name in ("echo", "review", "guarded", "guarded_review", "support", "open_chat")
    }


@pytest.fixture
def start() -> Iterator[Start]:
    """``start(objects=..., config=..., tracer_provider=...)`` serves them; returns the URL."""
    running: list[Running] = []

    def launch(
        objects: Any = None, config: ServeConfig | None = None, tracer_provider: Any = None
    ) -> str:
        app = create_app(
            everything() if objects is None else objects,
            config or ServeConfig.create(),
            tracer_provider=tracer_provider,
        )
        server = Running(app)
        running.append(server)
        return server.url

    yield launch
    for server in running:
        server.stop()


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command and rail config answers from the offline model."""
    monkeypatch.setenv("ALLOY_MODEL", "offline")


@pytest.fixture
def on_emulator(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every command and rail config goes to OpenAI's Responses API on the emulator."""
    monkeypatch.setenv("ALLOY_MODEL", "openai:gpt-5-mini")
    return emu
