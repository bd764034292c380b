"""Capability profiles: what a profile says, where it is resolved from, and what every Result
says of how its answer was enforced (issue 30, items 2 and 3).

The engine is driven through FunctionModel here; the same behaviour through the real SDKs and
the emulator is in ``tests/providers/test_enforcement.py``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import command, configure
from alloy._profile import observe
from alloy._types import Request, ToolCall
from alloy.errors import BadRequestError, ConfigurationError, EnforcementError
from alloy.events import ProfileDowngraded, subscribe
from alloy.providers import (
    Profile,
    Provider,
    clear_model_cache,
    family_id,
    load_probe,
    profile_for,
    register_provider,
    store_probe,
)
from alloy.testing import FunctionModel


@dataclass
class City:
    name: str
    population: int


ANSWER = {"name": "Bern", "population": 134000}


def typed(model: Any, **options: Any) -> Any:
    @command(output=City, model=model, **options)
    def city(text: str) -> str:
        return f"Which city? {text}"

    return city


def answering(request: Request) -> Any:
    """The answer in whatever mode was asked: a forced tool call, else JSON text."""
    spec = request.output
    if spec is not None and spec.mode == "tool":
        return ToolCall("call_1", spec.name, dict(ANSWER))
    import json

    return json.dumps(ANSWER)


# -- the profile itself -----------------------------------------------------------------------


def test_a_profile_is_frozen_and_takes_its_sets_as_any_iterable() -> None:
    profile = Profile(tool_choice=["auto", "required"], refused_params="seed")
    assert profile.tool_choice == frozenset({"auto", "required"})
    assert profile.refused_params == frozenset({"seed"})
    with pytest.raises(AttributeError):
        profile.tools = False  # type: ignore[misc]
    with pytest.raises(ValueError, match="json_schema"):
        Profile(json_schema="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool_choice"):
        Profile(tool_choice=["always"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("profile", "mode", "level"),
    [
        (Profile(), "native", "native-strict"),
        (Profile(json_schema="best-effort", tools=False), "native", "native"),
        (Profile(json_schema="no", strict_tools=True), "tool", "tool-strict"),
        (Profile(json_schema="no"), "tool", "tool"),
        (Profile(json_schema="no", tools=False), "prompt", "prompt"),
        # best-effort schemas give way to a forced tool
        (Profile(json_schema="best-effort", strict_tools=True), "tool", "tool-strict"),
    ],
)
def test_the_default_mode_is_the_strongest_the_profile_offers(
    profile: Profile, mode: str, level: str
) -> None:
    assert profile.default_output_mode() == mode
    assert profile.enforcement(profile.default_output_mode()) == level


@pytest.mark.parametrize(
    ("given", "family"),
    [
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"),
        ("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5-20251101"),
        ("anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku-20240307"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4.5"),
        ("meta-llama/llama-3.3-70b-instruct:free", "llama-3.3-70b-instruct"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("gpt-4o", "gpt-4o"),
    ],
)
def test_model_ids_are_normalised_before_the_family_lookup(given: str, family: str) -> None:
    assert family_id(given) == family


# -- resolution, most specific first ----------------------------------------------------------


def register_declaring(profiles: dict[str, Profile]) -> Provider:
    return register_provider(
        "declaring",
        lambda model_id, **_: FunctionModel(answering, name=f"declaring:{model_id}"),
        profiles=profiles,
    )


def test_the_profile_resolves_user_then_probe_then_observed_then_declared_then_family(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_PROFILE_STORE", str(tmp_path / "profiles.json"))
    register_declaring(
        {"": Profile(json_schema="best-effort"), "llama": Profile(json_object=False)}
    )
    from alloy.providers import get_model

    model = get_model("declaring:llama-3.3-70b")
    family = FunctionModel(answering, name="function")
    assert profile_for(family) == family.capabilities  # no provider: the family's
    declared = profile_for(model)
    assert declared.json_object is False and declared.source == "declared"  # longest prefix
    observe("declaring", model.name, Profile(json_schema="no", source="observed"))
    assert profile_for(model).source == "observed"
    store_probe(Profile(strict_tools=True), base_url="declaring", model="llama-3.3-70b")
    assert profile_for(model).source == "observed"  # the process saw it since
    clear_model_cache()  # forgets what was observed
    assert profile_for(model).source == "probed"
    user = profile_for(model, {"tools": False})
    assert (user.source, user.tools, user.strict_tools) == ("user", False, True)
    assert profile_for(model, Profile(json_object=False)).source == "user"


def test_a_probe_is_kept_by_base_url_model_and_server_version(tmp_path: Path) -> None:
    store = tmp_path / "probes.json"
    old = Profile(json_schema="no")
    new = Profile(json_schema="strict", strict_tools=True)
    store_probe(
        old, base_url="http://gpu:8000/v1/", model="qwen3", server_version="0.9", path=store
    )
    store_probe(
        new, base_url="http://gpu:8000/v1", model="qwen3", server_version="0.10", path=store
    )
    latest = load_probe("http://gpu:8000/v1", "qwen3", path=store)
    assert latest is not None and latest.strict_tools and latest.source == "probed"
    older = load_probe("http://gpu:8000/v1", "qwen3", "0.9", path=store)
    assert older is not None and older.json_schema == "no"
    assert load_probe("http://gpu:8000/v1", "qwen3", "0.11", path=store) is None
    assert load_probe("http://other/v1", "qwen3", path=store) is None


def test_a_profile_option_naming_no_such_field_is_a_configuration_error() -> None:
    city = typed(FunctionModel(answering), profile={"json_shema": "no"})
    with pytest.raises(ConfigurationError, match="json_shema"):
        city("Bern")


# -- every Result says how its answer was enforced --------------------------------------------


@pytest.mark.parametrize(
    ("options", "profile", "enforcement"),
    [
        ({}, Profile(strict_tools=True), "native-strict"),
        ({"output_mode": "tool"}, Profile(strict_tools=True), "tool-strict"),
        ({}, Profile(json_schema="no"), "tool"),
        ({"output_mode": "prompt"}, Profile(), "prompt"),
        ({"profile": {"json_schema": "best-effort", "tools": False}}, Profile(), "native"),
    ],
)
def test_every_result_says_how_its_answer_was_enforced(
    options: dict[str, Any], profile: Profile, enforcement: str
) -> None:
    city = typed(FunctionModel(answering, capabilities=profile), **options)
    result = city.run("Bern")
    assert result.value == City("Bern", 134000)
    assert result.enforcement == enforcement


def test_a_text_answer_has_no_enforcement() -> None:
    @command(model=FunctionModel(lambda request: "hi"))
    def hello() -> str:
        return "Say hi"

    assert hello.run().enforcement is None


def test_require_enforcement_raises_instead_of_a_weaker_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = FunctionModel(answering, capabilities=Profile(json_schema="no", tools=False))
    with pytest.raises(EnforcementError) as info:
        typed(plain, require_enforcement="tool").run("Bern")
    assert (info.value.required, info.value.available) == ("tool", "prompt")
    monkeypatch.setenv("ALLOY_REQUIRE_ENFORCEMENT", "native-strict")
    tools_only = FunctionModel(answering, capabilities=Profile(json_schema="no", strict_tools=True))
    with pytest.raises(EnforcementError, match="native-strict"):
        typed(tools_only).run("Bern")
    monkeypatch.setenv("ALLOY_REQUIRE_ENFORCEMENT", "tool-strict")
    assert typed(tools_only).run("Bern").enforcement == "tool-strict"


def test_require_enforcement_picks_a_mode_strong_enough() -> None:
    best_effort = FunctionModel(answering, capabilities=Profile(json_schema="best-effort"))
    assert typed(best_effort).run("Bern").enforcement == "tool"
    assert typed(best_effort, require_enforcement="native").run("Bern").enforcement == "native"


def test_an_unknown_enforcement_level_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="require_enforcement"):
        configure(require_enforcement="strictest")


# -- a 400 refusing the mode steps down once, announced ---------------------------------------


def refusing(feature: str, *, mode: str = "native") -> Any:
    def reply(request: Request) -> Any:
        spec = request.output
        if spec is not None and spec.mode == mode:
            return BadRequestError(
                f"Invalid parameter: '{feature}' is not supported by this model",
                status_code=400,
                provider="declaring",
            )
        return answering(request)

    return reply


def test_a_400_naming_response_format_steps_down_once_and_is_announced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = FunctionModel(refusing("response_format"), name="declaring:m")
    events: list[ProfileDowngraded] = []
    unsubscribe = subscribe(events.append, ProfileDowngraded)
    try:
        with caplog.at_level(logging.WARNING, logger="alloy"):
            first = typed(model).run("Bern")
            second = typed(model).run("Bern")
    finally:
        unsubscribe()
    assert first.value == second.value == City("Bern", 134000)
    assert first.enforcement == second.enforcement == "tool-strict"
    assert [r.output.mode for r in model.requests] == ["native", "tool", "tool"]
    assert len(events) == 1
    event = events[0]
    assert (event.from_enforcement, event.to_enforcement) == ("native-strict", "tool-strict")
    assert "response_format" in event.reason
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "alloy"]
    assert len(warnings) == len(events)
    assert "declaring:m" in warnings[0].getMessage()


def test_a_400_naming_tool_choice_in_tool_mode_steps_down_to_the_prompt() -> None:
    model = FunctionModel(
        refusing("tool_choice", mode="tool"),
        name="declaring:m",
        capabilities=Profile(json_schema="no"),
    )
    with pytest.warns(UserWarning, match="prompt mode"):
        result = typed(model).run("Bern")
    assert result.enforcement == "prompt"
    assert [r.output.mode for r in model.requests] == ["tool", "prompt"]


def test_a_400_steps_down_only_once_per_call() -> None:
    def always(request: Request) -> Any:
        return BadRequestError("response_format and tool_choice unsupported", status_code=400)

    model = FunctionModel(always, name="declaring:m")
    with pytest.raises(BadRequestError):
        typed(model).run("Bern")
    assert [r.output.mode for r in model.requests] == ["native", "tool"]


def test_a_400_about_something_else_is_raised_as_it_is() -> None:
    model = FunctionModel(refusing("messages"), name="declaring:m")
    with pytest.raises(BadRequestError, match="messages"):
        typed(model).run("Bern")
    assert len(model.requests) == 1


def test_an_explicit_output_mode_is_not_stepped_down() -> None:
    model = FunctionModel(refusing("response_format"), name="declaring:m")
    with pytest.raises(BadRequestError):
        typed(model, output_mode="native").run("Bern")
    assert len(model.requests) == 1


def test_require_enforcement_raises_instead_of_stepping_down() -> None:
    model = FunctionModel(refusing("json_schema"), name="declaring:m")
    with pytest.raises(EnforcementError) as info:
        typed(model, require_enforcement="native").run("Bern")
    assert (info.value.required, info.value.available) == ("native", "tool-strict")
    assert isinstance(info.value.__cause__, BadRequestError)
    assert len(model.requests) == 1


# -- a schema answered with prose is a silent drop ---------------------------------------------


def prose_under_schema(request: Request) -> Any:
    spec = request.output
    if spec is not None and spec.mode == "native":
        return "Bern is the capital of Switzerland, with about 134000 people."
    return answering(request)


def test_prose_under_a_declared_endpoints_schema_is_re_asked_in_tool_mode() -> None:
    register_declaring({"": Profile(strict_tools=True)})
    from alloy.providers import get_model

    model = get_model("declaring:silent")
    assert isinstance(model, FunctionModel)
    model.fn = prose_under_schema
    events: list[ProfileDowngraded] = []
    unsubscribe = subscribe(events.append, ProfileDowngraded)
    try:
        first = typed("declaring:silent").run("Bern")
        second = typed("declaring:silent").run("Bern")
    finally:
        unsubscribe()
    assert first.value == second.value == City("Bern", 134000)
    assert [r.output.mode for r in model.requests] == ["native", "tool", "tool"]
    assert first.enforcement == second.enforcement == "tool-strict"
    assert second.transcript.attempts == 1  # the second call went straight to tool mode
    assert len(events) == 1 and events[0].to_enforcement == "tool-strict"
    assert profile_for(model).json_schema == "best-effort"


def test_prose_from_a_first_party_model_is_re_asked_as_before() -> None:
    """A constrained first-party API that answers prose made a mistake, not a dropped schema."""
    model = FunctionModel(prose_under_schema)
    with pytest.raises(Exception, match=r"not valid|parse|JSON"):
        typed(model, max_reasks=1).run("Bern")
    assert [r.output.mode for r in model.requests] == ["native", "native"]
