"""A caller's own provider key and the response cache (issue 27, item 6): an answer one caller
paid for never reaches a caller whose key the provider has not accepted. Requests sent with an
explicit key (``with_options(api_key=...)``, ``alloy serve --pass-through-keys``) are keyed by
a salted digest of that key, through the real SDKs and a real SQLite store."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from alloy import AuthenticationError, command, use_config
from alloy.testing.emulator import Emulator, ReplyJson, Unauthorized

from ..hardening.conftest import PROVIDERS

TENANT = "sk-tenant-a-0123456789abcdef0123"
STRANGER = "sk-stranger-never-checked-45678"


@dataclass
class Answer:
    text: str


def ask(model: str) -> Any:
    @command(output=Answer, model=model, temperature=0)
    def paid(question: str) -> str:
        return question

    return paid


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "gemini"])
def test_a_caller_with_another_key_is_asked_of_the_provider_not_served_from_the_cache(
    provider: str, emu: Emulator, cache_file: Path
) -> None:
    model, queue, _ = PROVIDERS[provider]
    if provider == "openai-chat":
        model = "openai-chat:gpt-4.1-mini"
    emu.push(queue, ReplyJson({"text": "the paid answer"}), Unauthorized())
    paid = ask(model)
    with use_config(cache=str(cache_file)):
        assert paid.with_options(api_key=TENANT)("Secret?").text == "the paid answer"
        with pytest.raises(AuthenticationError):  # the provider refuses the stranger's key
            paid.with_options(api_key=STRANGER)("Secret?")
        again = paid.with_options(api_key=TENANT).run("Secret?")
    assert again.cached and again.value.text == "the paid answer"
    assert len(emu.requests_for(queue)) == 2  # the stranger's request reached the provider
    stored = b"".join(path.read_bytes() for path in cache_file.parent.iterdir())
    for secret in (TENANT, STRANGER):
        assert secret.encode() not in stored
        assert hashlib.sha256(secret.encode()).hexdigest().encode() not in stored


def test_requests_with_the_providers_variable_keep_sharing_entries(
    emu: Emulator, cache_file: Path
) -> None:
    """Without an explicit key the key is what it always was: a committed replay cache still
    hits, and an entry made with a caller's key is not given to calls without one."""
    model, queue, _ = PROVIDERS["anthropic"]
    emu.push(queue, ReplyJson({"text": "tenant's"}), ReplyJson({"text": "the server's"}))
    paid = ask(model)
    with use_config(cache=str(cache_file)):
        assert paid.with_options(api_key=TENANT)("Q").text == "tenant's"
        assert paid("Q").text == "the server's"
        assert paid.run("Q").cached and ask(model).run("Q").cached
    assert len(emu.requests_for(queue)) == 2


def test_pass_through_keys_on_a_cached_server_never_hand_out_another_callers_answer(
    emu: Emulator, cache_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("uvicorn")
    from alloy.serve import ServeConfig, create_app

    from ..serve.conftest import Running

    model, queue, _ = PROVIDERS["anthropic"]
    monkeypatch.setenv("ALLOY_CACHE", str(cache_file))
    emu.push(queue, ReplyJson({"text": "the paid answer"}), Unauthorized())
    app = create_app([ask(model)], config=ServeConfig.create(pass_through_keys=True))
    server = Running(app)
    try:

        def post(key: str) -> httpx.Response:
            return httpx.post(
                f"{server.url}/commands/paid",
                json={"question": "Q"},
                headers={"x-alloy-provider-key": key},
            )

        first, stranger, again = post(TENANT), post(STRANGER), post(TENANT)
    finally:
        server.stop()
    assert first.status_code == 200 and first.json()["value"] == {"text": "the paid answer"}
    assert stranger.status_code >= 400 and "the paid answer" not in stranger.text
    assert again.status_code == 200 and again.json()["value"] == {"text": "the paid answer"}
    sent = emu.requests_for(queue)
    assert len(sent) == 2 and any(STRANGER in value for value in sent[1].headers.values())
