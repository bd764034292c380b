"""``alloy serve`` as a real process (uvicorn on 127.0.0.1), its provider the session's
emulator, one per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from tests.serve.test_process import serve

#: The rail configs served: ``support`` has input, output and tool rails, ``open`` none.
TARGETS = ("tests.serve.served:support", "tests.serve.served:open_chat")


@pytest.fixture(scope="module")
def alloy_serve(alloy_emulator_session: Any) -> Iterator[str]:
    """The server's ``/v1`` base URL; each test resets the emulator with ``emu``."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in alloy_emulator_session.env().items():
            env.setenv(name, value)
        env.setenv("ALLOY_MODEL", "openai:gpt-5-mini")
        process, url = serve(*TARGETS, "--no-playground")
    try:
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)
