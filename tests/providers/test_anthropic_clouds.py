"""Claude on the clouds through Anthropic's SDK: ``anthropic-foundry:`` (AnthropicFoundry),
``anthropic-vertex:`` (AnthropicVertex, ``:rawPredict``) and ``anthropic-bedrock:``
(AnthropicBedrock Invoke, event-stream framed streams; Mantle as an option), against the
emulator's real request paths, sync, async and streaming."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from alloy.errors import CommandError, ConfigurationError
from alloy.providers import anthropic_bedrock, anthropic_foundry, anthropic_vertex
from alloy.testing.emulator import HttpError, ReplyJson, Unauthorized

from .cloud_fixtures import Capital, Tokens, all_forms, capital_command

KEY = "cloud-test-key-0123456789abcdef"
PROJECT = "my-project"
REGION = "us-east5"
VERTEX_MODEL = "claude-haiku-4-5@20251001"
BEDROCK_MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


# -- Foundry --------------------------------------------------------------------------------------


@pytest.fixture
def foundry(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_FOUNDRY_BASE_URL", emu.url + "/anthropic/")
    monkeypatch.setenv("ANTHROPIC_FOUNDRY_API_KEY", KEY)
    return emu


def test_foundry_sends_messages_to_the_resource_with_its_key(foundry: Any) -> None:
    all_forms(foundry, "anthropic-foundry:claude-sonnet-4-6", "anthropic")
    requests = foundry.requests_for("anthropic")
    assert [r.path for r in requests] == ["/anthropic/v1/messages"] * 4
    for request in requests:
        assert request.header("x-api-key") == KEY
        assert request.header("api-key") == KEY
        assert request.body["model"] == "claude-sonnet-4-6"
    assert requests[0].body["output_config"]["format"]["type"] == "json_schema"


def test_foundry_never_sends_the_anthropic_key(
    foundry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "an-anthropic-key-never-sent-to-foundry")
    foundry.push("anthropic", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command("anthropic-foundry:claude-sonnet-4-6")("France")
    assert "an-anthropic-key" not in str(foundry.last_request("anthropic").headers)


def test_foundry_takes_an_entra_id_token_provider(emu: Any) -> None:
    tokens = Tokens()
    model = anthropic_foundry.create(
        "claude-sonnet-4-6", api_key=tokens, base_url=emu.url + "/anthropic/"
    )
    emu.push("anthropic", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command(model)("France")
    emu.push("anthropic", ReplyJson({"city": "Paris", "country": "France"}))
    asyncio.run(capital_command(model).acall("France"))
    for request, token in zip(emu.requests_for("anthropic"), tokens.issued, strict=True):
        assert request.header("authorization") == f"Bearer {token}"
        assert request.header("x-api-key") is None


@pytest.mark.parametrize("form", ["sync", "async"])
def test_foundry_asks_the_token_provider_again_once_after_a_401(
    emu: Any, form: str, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = Tokens()
    model = anthropic_foundry.create(
        "claude-sonnet-4-6", azure_ad_token_provider=tokens, base_url=emu.url + "/anthropic"
    )
    emu.push("anthropic", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    caplog.set_level(logging.DEBUG)
    cmd = capital_command(model)
    result = cmd.run("France") if form == "sync" else asyncio.run(cmd.arun("France"))
    assert result.value == Capital("Paris", "France")
    assert result.transcript.attempts == 1  # the refresh is not a retry
    sent = [r.header("authorization") for r in emu.requests_for("anthropic")]
    assert sent == [f"Bearer {tokens.issued[0]}", f"Bearer {tokens.issued[1]}"]
    assert not any(token in caplog.text for token in tokens.issued)


def test_a_second_401_is_an_authentication_error(emu: Any) -> None:
    tokens = Tokens()
    model = anthropic_foundry.create(
        "claude-sonnet-4-6", api_key=tokens, base_url=emu.url + "/anthropic/"
    )
    emu.push("anthropic", Unauthorized(), Unauthorized(), Unauthorized())
    with pytest.raises(CommandError) as caught:
        capital_command(model)("France")
    assert "401" in str(caught.value)
    assert len(emu.requests_for("anthropic")) == 2


def test_a_plain_key_is_not_resent_after_a_401(foundry: Any) -> None:
    foundry.push("anthropic", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    with pytest.raises(CommandError):
        capital_command("anthropic-foundry:claude-sonnet-4-6")("France")
    assert len(foundry.requests_for("anthropic")) == 1


def test_foundry_without_an_endpoint_or_key_names_its_variables(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_FOUNDRY_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_FOUNDRY_API_KEY", KEY)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_FOUNDRY_RESOURCE"):
        capital_command("anthropic-foundry:claude-sonnet-4-6")("France")
    monkeypatch.setenv("ANTHROPIC_FOUNDRY_BASE_URL", emu.url + "/anthropic/")
    monkeypatch.delenv("ANTHROPIC_FOUNDRY_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "never-used-by-foundry")
    with pytest.raises(ConfigurationError, match="ANTHROPIC_FOUNDRY_API_KEY"):
        capital_command("anthropic-foundry:claude-sonnet-4-6")("France")


# -- Vertex AI ------------------------------------------------------------------------------------


@pytest.fixture
def vertex(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", emu.url + "/v1")
    monkeypatch.setenv("CLOUD_ML_REGION", REGION)
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", PROJECT)
    monkeypatch.setenv("ANTHROPIC_VERTEX_ACCESS_TOKEN", KEY)
    return emu


def test_vertex_sends_raw_predict_with_the_model_in_the_path(vertex: Any) -> None:
    all_forms(vertex, f"anthropic-vertex:{VERTEX_MODEL}", "anthropic")
    base = f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models/{VERTEX_MODEL}"
    paths = [r.path for r in vertex.requests_for("anthropic")]
    assert paths == [f"{base}:rawPredict"] * 2 + [f"{base}:streamRawPredict"] * 2
    for request in vertex.requests_for("anthropic"):
        assert request.header("authorization") == f"Bearer {KEY}"
        assert "model" not in request.body
        assert request.body["anthropic_version"]


class Credentials:
    """google.auth credentials that refresh to a new token each time, with no network."""

    def __new__(cls) -> Any:
        import google.auth.credentials

        class Fake(google.auth.credentials.Credentials):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__()
                self.tokens: list[str] = []

            def refresh(self, request: Any) -> None:
                self.token = f"ya29.fresh-token-{len(self.tokens)}-abcdefghijkl"
                self.tokens.append(self.token)

        return Fake()


@pytest.mark.parametrize("form", ["sync", "async"])
def test_vertex_credentials_are_refreshed_once_after_a_401(
    vertex: Any, form: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    credentials = Credentials()
    model = anthropic_vertex.create(VERTEX_MODEL, credentials=credentials)
    vertex.push("anthropic", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    cmd = capital_command(model)
    result = cmd.run("France") if form == "sync" else asyncio.run(cmd.arun("France"))
    assert result.value == Capital("Paris", "France")
    assert result.transcript.attempts == 1
    sent = [r.header("authorization") for r in vertex.requests_for("anthropic")]
    assert sent == [f"Bearer {token}" for token in credentials.tokens]
    assert len(credentials.tokens) == 2
    assert not any(token in caplog.text for token in credentials.tokens)


def test_vertex_options_win_over_the_variables(vertex: Any) -> None:
    model = anthropic_vertex.create(
        VERTEX_MODEL, api_key=KEY, region="europe-west1", project_id="other-project"
    )
    vertex.push("anthropic", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command(model)("France")
    path = vertex.last_request("anthropic").path
    assert path.startswith("/v1/projects/other-project/locations/europe-west1/")


def test_vertex_without_a_region_or_project_names_the_variable(
    vertex: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLOUD_ML_REGION")
    with pytest.raises(ConfigurationError, match="CLOUD_ML_REGION"):
        capital_command(f"anthropic-vertex:{VERTEX_MODEL}")("France")
    monkeypatch.setenv("CLOUD_ML_REGION", REGION)
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID")
    with pytest.raises(ConfigurationError, match="ANTHROPIC_VERTEX_PROJECT_ID"):
        capital_command(f"anthropic-vertex:{VERTEX_MODEL}")("France")


# -- Bedrock --------------------------------------------------------------------------------------


@pytest.fixture
def bedrock(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", emu.url)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", KEY)
    return emu


def test_bedrock_invokes_the_model_and_streams_event_stream_frames(bedrock: Any) -> None:
    all_forms(bedrock, f"anthropic-bedrock:{BEDROCK_MODEL}", "anthropic")
    paths = [r.path for r in bedrock.requests_for("anthropic")]
    assert (
        paths
        == [f"/model/{BEDROCK_MODEL}/invoke"] * 2
        + [f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"] * 2
    )
    for request in bedrock.requests_for("anthropic"):
        assert request.header("authorization") == f"Bearer {KEY}"
        assert "model" not in request.body and "stream" not in request.body


def test_bedrock_signs_with_aws_keys(emu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # a key would win
    secret = "aws-secret-key-0123456789abcdefghij"
    model = anthropic_bedrock.create(
        BEDROCK_MODEL,
        base_url=emu.url,
        aws_access_key="AKIAEXAMPLEEXAMPLE",
        aws_secret_key=secret,
        aws_region="eu-west-1",
    )
    all_forms(emu, model, "anthropic")
    for request in emu.requests_for("anthropic"):
        authorization = request.header("authorization") or ""
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEEXAMPLE/")
        assert "/eu-west-1/bedrock/aws4_request" in authorization
        assert secret not in str(request.headers)


def test_bedrock_reads_the_credential_chain_again_once_after_a_401(
    emu: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFIRSTKEY00000000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "first-secret-0123456789abcdefghij")
    # A region of its own: the SDK keeps one boto3 session per set of options, process-wide.
    model = anthropic_bedrock.create(BEDROCK_MODEL, base_url=emu.url, aws_region="mx-central-1")
    emu.push("anthropic", ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(model)("France") == Capital("Paris", "France")
    rotated = "rotated-secret-0123456789abcdefghij"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAROTATEDKEY000000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", rotated)
    caplog.set_level(logging.DEBUG)
    emu.push("anthropic", Unauthorized(), ReplyJson({"city": "Oslo", "country": "Norway"}))

    assert capital_command(model, retries=0).run("Norway").value == Capital("Oslo", "Norway")

    signed = [r.header("authorization") or "" for r in emu.requests_for("anthropic")]
    assert len(signed) == 3 and "Credential=AKIAFIRSTKEY00000000/" in signed[1]
    assert "Credential=AKIAROTATEDKEY000000/" in signed[2]
    assert all(rotated not in r.getMessage() for r in caplog.records)
    emu.push("anthropic", Unauthorized(), ReplyJson({"city": "Rome", "country": "Italy"}))
    assert asyncio.run(capital_command(model).arun("Italy")).value == Capital("Rome", "Italy")
    emu.push("anthropic", Unauthorized(), Unauthorized())
    with pytest.raises(CommandError) as raised:
        capital_command(model, retries=0).run("France")
    assert len(emu.requests_for("anthropic")) == 7 and rotated not in str(raised.value)


def test_bedrock_keys_given_to_create_are_not_refreshed(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # a key would win
    model = anthropic_bedrock.create(
        BEDROCK_MODEL,
        base_url=emu.url,
        aws_access_key="AKIAEXAMPLEEXAMPLE",
        aws_secret_key="aws-secret-key-0123456789abcdefghij",
        aws_region="eu-west-1",
    )
    emu.push("anthropic", Unauthorized())
    with pytest.raises(CommandError):
        capital_command(model, retries=0).run("France")
    assert len(emu.requests_for("anthropic")) == 1


def test_bedrock_mantle_sends_messages_to_its_anthropic_endpoint(emu: Any) -> None:
    model = anthropic_bedrock.create(
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        api_key=KEY,
        base_url=emu.url + "/anthropic",
        aws_region="us-east-1",
        mantle=True,
    )
    all_forms(emu, model, "anthropic")
    assert {r.path for r in emu.requests_for("anthropic")} == {"/anthropic/v1/messages"}
    assert emu.last_request("anthropic").header("authorization") == f"Bearer {KEY}"


def test_bedrock_without_a_region_names_the_variable(
    bedrock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ConfigurationError, match="AWS_REGION"):
        capital_command(f"anthropic-bedrock:{BEDROCK_MODEL}")("France")


def test_bedrock_prices_geographic_profiles_of_claude_4_5_higher(bedrock: Any) -> None:
    from alloy.providers import providers

    described = providers()["anthropic-bedrock"]
    regional = described.price_entry("us.anthropic.claude-sonnet-4-6")
    global_ = described.price_entry("global.anthropic.claude-sonnet-4-6")
    assert regional and global_
    assert regional[1].input == pytest.approx(global_[1].input * 1.1)


# -- Application Default Credentials and missing extras -----------------------------------------


def test_vertex_loads_application_default_credentials_once(
    vertex: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import google.auth

    credentials = Credentials()
    loaded: list[Any] = []

    def default(scopes: Any = None, **_: Any) -> tuple[Any, str]:
        loaded.append(scopes)
        return credentials, "adc-project"

    monkeypatch.setattr(google.auth, "default", default)
    monkeypatch.delenv("ANTHROPIC_VERTEX_ACCESS_TOKEN")
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID")
    all_forms(vertex, f"anthropic-vertex:{VERTEX_MODEL}", "anthropic")
    assert loaded == [["https://www.googleapis.com/auth/cloud-platform"]]
    for request in vertex.requests_for("anthropic"):
        assert request.path.startswith(f"/v1/projects/adc-project/locations/{REGION}/")
        assert request.header("authorization") == f"Bearer {credentials.tokens[-1]}"


def without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make ``module`` look uninstalled to importlib.util.find_spec."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == module else real(name, *args),
    )


def test_vertex_without_google_auth_names_the_extra(
    vertex: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_VERTEX_ACCESS_TOKEN")
    without(monkeypatch, "google.auth")
    with pytest.raises(ConfigurationError, match=r"alloy\[anthropic-vertex\]"):
        capital_command(f"anthropic-vertex:{VERTEX_MODEL}")("France")


def test_bedrock_without_botocore_names_the_extra(
    bedrock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "botocore")
    with pytest.raises(ConfigurationError, match=r"alloy\[anthropic-bedrock\]"):
        capital_command(f"anthropic-bedrock:{BEDROCK_MODEL}")("France")


def test_bedrock_aws_secrets_are_never_logged_or_raised(
    emu: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    secret, session = "aws-secret-key-0123456789abcdefghij", "aws-session-token-0123456789abcdef"
    model = anthropic_bedrock.create(
        BEDROCK_MODEL,
        base_url=emu.url,
        aws_access_key="AKIAEXAMPLEEXAMPLE",
        aws_secret_key=secret,
        aws_session_token=session,
        aws_region="us-east-1",
    )
    emu.push("anthropic", HttpError(403, message=f"The security token {session} is invalid"))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(CommandError) as caught:
        capital_command(model)("France")
    shown = [str(caught.value), repr(caught.value), caplog.text, repr(vars(model))]
    for text in shown:
        assert secret not in text and session[:20] not in text, text[:300]


@pytest.mark.parametrize(
    "provider", ["anthropic-foundry", "anthropic-vertex", "anthropic-bedrock", "vertex"]
)
def test_every_example_model_has_a_price(provider: str) -> None:
    from alloy.pricing import price_for
    from alloy.providers import providers

    for model_id in providers()[provider].example_models:
        assert price_for(f"{provider}:{model_id}") is not None, model_id


@pytest.mark.parametrize(
    ("model", "native"),
    [
        # Vertex AI's ids carry the date after "@", Foundry's none: Sonnet 4 and Opus 4 are not
        # 4.5 however their id ends.
        ("anthropic-vertex:claude-sonnet-4@20250514", False),
        ("anthropic-vertex:claude-opus-4@20250514", False),
        ("anthropic-vertex:claude-opus-4-1@20250805", False),
        ("anthropic-vertex:claude-sonnet-4-5@20250929", True),
        ("anthropic-foundry:claude-sonnet-4", False),
        ("anthropic-foundry:claude-opus-4", False),
        ("anthropic-foundry:claude-sonnet-4-5", True),
        ("anthropic-bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0", False),
        ("anthropic-bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
    ],
)
def test_claude_before_4_5_on_a_cloud_declares_no_structured_outputs(
    model: str, native: bool
) -> None:
    from alloy.providers import get_model, profile_for

    profile = profile_for(get_model(model))
    assert (profile.json_schema == "strict") is native and profile.strict_tools is native
    assert profile.source == "declared"
