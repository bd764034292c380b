"""``alloy serve`` reports ready only when it can serve: the SDKs of the models it serves are
imported, and their clients built, before ``/health`` answers 200 (issue 33)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from alloy import ConfigurationError, register_provider
from alloy.serve import RailConfig, create_app
from alloy.testing.emulator import ReplyText

from .conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def _imported(log: str) -> list[str]:
    """The modules a ``-X importtime`` log says were imported, in order."""
    names = []
    for line in log.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.append(line.rsplit("|", 1)[1].strip())
    return names


def test_health_answers_only_once_the_served_sdk_is_imported(
    on_emulator: Any, tmp_path: Path
) -> None:
    """The server's own import log: ``openai`` is in it before /health first answers 200, and the
    first /v1 request after that imports nothing of the SDK."""
    on_emulator.push("openai", ReplyText("ready and answered"))
    port = free_port()
    log_path = tmp_path / "imports.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPROFILEIMPORTTIME": "1"}
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "alloy",
                "serve",
                "tests.serve.served:support",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            assert process.poll() is None, log_path.read_text()[-2000:]
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise AssertionError("alloy serve did not start")
        at_ready = log_path.read_text()
        assert "openai" in _imported(at_ready)

        answer = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "support", "messages": [{"role": "user", "content": "hi"}]},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["choices"][0]["message"]["content"] == "ready and answered"
        after = _imported(log_path.read_text()[len(at_ready) :])
        assert [m for m in after if m.split(".")[0] == "openai"] == []
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_served_model_whose_sdk_is_missing_fails_startup(monkeypatch: pytest.MonkeyPatch) -> None:
    register_provider(
        "serve-needs-sdk",
        "nowhere:create",
        extra="serve-needs-sdk",
        sdk_module="surely_not_installed_sdk",
    )
    app = create_app([RailConfig("gate", model="serve-needs-sdk:model")])
    with (
        pytest.raises(ConfigurationError, match=r"pip install 'alloy\[serve-needs-sdk\]'"),
        TestClient(app),
    ):
        pass  # startup raised: the server never answered /health
