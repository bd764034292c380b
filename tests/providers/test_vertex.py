"""Gemini on Vertex AI (``vertex:``), through ``google.genai.Client(vertexai=True)`` and the
emulator's Vertex paths: a project with credentials (Bearer token), and express mode (a key)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from alloy.errors import CommandError, ConfigurationError
from alloy.providers import vertex
from alloy.testing.emulator import ReplyJson, Unauthorized

from .cloud_fixtures import Capital, all_forms, capital_command

KEY = "vertex-express-key-0123456789abcdef"
PROJECT = "my-project"
LOCATION = "europe-west4"
MODEL = "gemini-2.5-flash"
PROJECT_PATH = f"/v1beta1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/{MODEL}"


def fake_credentials() -> Any:
    """google.auth credentials that refresh to a new token each time, with no network."""
    import google.auth.credentials

    class Fake(google.auth.credentials.Credentials):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.tokens: list[str] = []

        def refresh(self, request: Any) -> None:
            self.token = f"ya29.vertex-token-{len(self.tokens)}-abcdefghijkl"
            self.tokens.append(self.token)

    return Fake()


@pytest.fixture
def project(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Vertex AI with a project and location from their variables, and no key."""
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", PROJECT)
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", LOCATION)
    return emu


def test_a_project_sends_its_path_and_the_credentials_token(project: Any) -> None:
    credentials = fake_credentials()
    all_forms(
        project, vertex.create(MODEL, base_url=project.url, credentials=credentials), "gemini"
    )
    requests = project.requests_for("gemini")
    assert [r.path for r in requests] == [f"{PROJECT_PATH}:generateContent"] * 2 + [
        f"{PROJECT_PATH}:streamGenerateContent"
    ] * 2
    for request in requests:
        assert request.header("authorization") == f"Bearer {credentials.tokens[-1]}"
        assert request.header("x-goog-api-key") is None


def test_a_project_wins_over_a_key_from_the_environment(project: Any) -> None:
    """GOOGLE_API_KEY is set (the emulator's), so the registry passes it: the project wins."""
    credentials = fake_credentials()
    model = vertex.create(
        MODEL,
        api_key=project.env()["GOOGLE_API_KEY"],
        base_url=project.url,
        credentials=credentials,
    )
    project.push("gemini", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command(model)("France")
    request = project.last_request("gemini")
    assert request.path == f"{PROJECT_PATH}:generateContent"
    assert request.header("x-goog-api-key") is None


@pytest.mark.parametrize("form", ["sync", "async"])
def test_credentials_are_refreshed_once_after_a_401(
    project: Any, form: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    credentials = fake_credentials()
    model = vertex.create(MODEL, base_url=project.url, credentials=credentials)
    project.push("gemini", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    cmd = capital_command(model)
    result = cmd.run("France") if form == "sync" else asyncio.run(cmd.arun("France"))
    assert result.value == Capital("Paris", "France")
    assert result.transcript.attempts == 1  # the refresh is not a retry
    sent = [r.header("authorization") for r in project.requests_for("gemini")]
    assert sent == [f"Bearer {token}" for token in credentials.tokens]
    assert not any(token in caplog.text for token in credentials.tokens)


def test_express_mode_sends_the_key_and_no_project(emu: Any) -> None:
    model = vertex.create(MODEL, api_key=KEY, base_url=emu.url)
    all_forms(emu, model, "gemini")
    for request in emu.requests_for("gemini"):
        assert request.path.startswith(f"/v1beta1/publishers/google/models/{MODEL}:")
        assert request.header("x-goog-api-key") == KEY


def test_an_express_key_is_not_resent_after_a_401(emu: Any) -> None:
    emu.push("gemini", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    with pytest.raises(CommandError):
        capital_command(vertex.create(MODEL, api_key=KEY, base_url=emu.url))("France")
    assert len(emu.requests_for("gemini")) == 1


def test_the_model_string_reads_the_vertex_variables(emu: Any) -> None:
    """vertex:MODEL with the emulator's variables: express mode at GOOGLE_VERTEX_BASE_URL."""
    emu.push("gemini", ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command(f"vertex:{MODEL}").run("France")
    assert result.model == f"vertex:{MODEL}"
    assert emu.last_request("gemini").path.startswith("/v1beta1/publishers/google/models/")


def test_no_project_and_no_key_names_the_variables(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    model = vertex.create(MODEL, base_url=emu.url, credentials=fake_credentials())
    with pytest.raises(ConfigurationError, match="GOOGLE_CLOUD_PROJECT"):
        capital_command(model)("France")


def test_application_default_credentials_give_the_token_and_project(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import google.auth

    credentials = fake_credentials()
    monkeypatch.setattr(google.auth, "default", lambda **_: (credentials, PROJECT))
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", LOCATION)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    emu.push("gemini", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command(vertex.create(MODEL, base_url=emu.url))("France")
    request = emu.last_request("gemini")
    assert request.path == f"{PROJECT_PATH}:generateContent"
    assert request.header("authorization") == f"Bearer {credentials.tokens[-1]}"
