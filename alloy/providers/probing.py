"""Learn what an endpoint can do by asking it: ``alloy providers --probe MODEL``.

A declared profile says what an endpoint *should* do; whether a vLLM server was started with a
tool parser, or an Azure resource is called with an API version that takes ``json_schema``, only
the endpoint itself can say. :func:`probe` sends at most eight tiny requests through the model's
own adapter (so what is learned is what alloy's calls will meet) and reads the answers:

1. what the server says about itself (llama-server's ``GET /props``, vLLM's ``GET /version``),
   for a local OpenAI-compatible server only;
2. a strict schema, streamed with usage: enforced, dropped (prose comes back: best-effort) or
   refused; streaming, a schema on a stream and stream usage are learned from the same reply.
   A refusal naming streaming is asked again without the stream; one naming ``strict`` means
   the schema is taken best-effort;
3. ``response_format: json_object`` (Chat Completions endpoints only);
4. a tool with ``tool_choice`` named, ``required`` and left to the model (``auto``);
5. a schema together with a tool the model is made to call;
6. a plain stream with usage, when step 2 did not stream.

What a request cannot show is taken from the endpoint's declared profile (:data:`CARRIED`):
strict tool arguments, refused keywords and parameters, batch, ``tool_choice: none``, and
``json_object`` where the wire has no such mode. :func:`save_probe` keeps the result where
profile resolution finds it (``store_probe``), keyed by base URL, model and server version.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._profile import Profile, ToolChoice
from .._types import (
    Done,
    ModelSettings,
    OutputSpec,
    Request,
    Response,
    ToolDefinition,
    UserTurn,
)
from ..errors import BadRequestError, ConfigurationError
from ._profiles import endpoint_of, store_probe

if TYPE_CHECKING:
    from .._model import Model

__all__ = [
    "CARRIED",
    "MAX_REQUESTS",
    "PROBED",
    "SERVERS",
    "ProbeResult",
    "capability_row",
    "probe",
    "profile_json",
    "save_probe",
]

#: The most requests a probe sends, self-description included.
MAX_REQUESTS = 8
#: Profile fields a probe learns from the endpoint's answers.
PROBED = (
    "json_schema",
    "json_object",
    "tools",
    "tool_choice",
    "schema_with_tools",
    "streaming",
    "schema_with_streaming",
    "stream_usage",
)
#: Profile fields no tiny request can show: taken from the declared profile.
CARRIED = tuple(f.name for f in fields(Profile) if f.name not in PROBED and f.name != "source")

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_OUTPUT = OutputSpec(name="probe_answer", schema=_SCHEMA, mode="native", strict=True)
_TOOL = ToolDefinition(
    name="probe_tool",
    description="Report whether the probe worked.",
    parameters=_SCHEMA,
    strict=False,
)
_PROMPT = (UserTurn("This is a capability probe. Answer in JSON with ok set to true."),)
_SETTINGS = ModelSettings(max_tokens=32)
#: Per server kind, where it describes itself: (path, server name, key holding its version).
SERVERS: dict[str, tuple[str, str, str]] = {
    "llamacpp": ("/props", "llama.cpp", "build_info"),
    "vllm": ("/version", "vLLM", "version"),
}
#: Per provider, the servers it may be: a preset knows; a bare OpenAI-compatible base URL may
#: be either. Other providers (public APIs, clouds) describe themselves nowhere.
_SERVERS_OF: dict[str, tuple[str, ...]] = {
    "llamacpp": ("llamacpp",),
    "vllm": ("vllm",),
    "openai-chat": ("llamacpp", "vllm"),
}


@dataclass(frozen=True)
class ProbeResult:
    """What a probe learned: the profile (``source="probed"``), what the server said it is,
    how many requests it took and, per request, what it showed (``findings``)."""

    model: str
    endpoint: str
    profile: Profile
    server: str | None
    server_version: str | None
    requests: int
    findings: tuple[str, ...]
    #: The profile fields the answers showed; the others are the declared profile's.
    learned: frozenset[str] = frozenset()


class _Budget:
    """Counts requests; a probe never sends more than :data:`MAX_REQUESTS`."""

    def __init__(self) -> None:
        self.used = 0
        self.findings: list[str] = []

    def spend(self) -> bool:
        if self.used >= MAX_REQUESTS:
            return False
        self.used += 1
        return True

    def note(self, finding: str) -> None:
        self.findings.append(finding)


@dataclass(frozen=True)
class _Outcome:
    """One probe request's answer: the reply, or the 400's message."""

    response: Response | None
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return self.response is not None

    def json_answer(self) -> bool:
        """The reply is the schema's JSON (not prose, not fenced)."""
        if self.response is None:
            return False
        try:
            value = json.loads(self.response.text)
        except ValueError:
            return False
        return isinstance(value, dict) and isinstance(value.get("ok"), bool)

    def called(self, name: str = _TOOL.name) -> bool:
        return self.response is not None and any(
            call.name == name for call in self.response.tool_calls
        )


def probe(
    model: str | Model,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    declared: Profile | None = None,
    server: str | None = None,
) -> ProbeResult:
    """Learn ``model``'s profile at its endpoint in at most :data:`MAX_REQUESTS` requests (the
    module docstring lists them). ``declared`` (default: the endpoint's declared profile)
    supplies the fields a request cannot show. ``server`` says which server to ask about itself
    (``"llamacpp"``, ``"vllm"``, or ``"none"``); by default the provider says (a bare
    ``openai-chat`` base URL is asked as either). Errors other than a refusal (a bad key, no
    connection) are raised as alloy's errors."""
    from . import get_model, provider_of
    from ._profiles import declared_profile

    instance = get_model(model, api_key=api_key, base_url=base_url)
    provider = provider_of(instance.name)
    if declared is None:
        model_id = instance.name.partition(":")[2]
        declared = declared_profile(provider, model_id) or instance.capabilities
    kinds = _servers_to_ask(provider.name if provider else "", server)
    budget = _Budget()
    name, version = _self_description(instance, kinds, budget)
    learned = _learn(instance, declared, budget)
    profile = replace(declared, **learned, source="probed")
    return ProbeResult(
        model=instance.name,
        endpoint=endpoint_of(instance),
        profile=profile,
        server=name,
        server_version=version,
        requests=budget.used,
        findings=tuple(budget.findings),
        learned=frozenset(learned),
    )


def save_probe(result: ProbeResult, path: str | os.PathLike[str] | None = None) -> Path:
    """Keep ``result`` where calls to its endpoint and model find it; returns the file."""
    return store_probe(
        result.profile,
        base_url=result.endpoint,
        model=result.model.partition(":")[2],
        server_version=result.server_version,
        path=path,
    )


def profile_json(profile: Profile) -> dict[str, Any]:
    """``profile`` as JSON values (sets as sorted lists), as the probe store keeps it."""
    return {
        f.name: sorted(value) if isinstance(value := getattr(profile, f.name), frozenset) else value
        for f in fields(Profile)
    }


def capability_row(result: ProbeResult) -> list[tuple[str, str]]:
    """The probed profile as (field, value) pairs, in the profile's order."""
    row: list[tuple[str, str]] = []
    for f in fields(Profile):
        value = getattr(result.profile, f.name)
        if isinstance(value, frozenset):
            shown = ", ".join(sorted(value)) or "-"
        elif isinstance(value, bool):
            shown = "yes" if value else "no"
        else:
            shown = str(value)
        if f.name not in result.learned and f.name != "source":
            shown += " (declared)"
        row.append((f.name, shown))
    return row


# -- the requests ------------------------------------------------------------------------------


def _ask(model: Model, budget: _Budget, request: Request) -> _Outcome | None:
    """Send one probe request (None: the budget is spent); a 400 is an answer too."""
    if not budget.spend():
        return None
    try:
        response = _streamed(model.stream(request)) if request.stream else model.request(request)
    except BadRequestError as exc:
        return _Outcome(None, str(exc) or type(exc).__name__)
    return _Outcome(response)


def _streamed(events: Iterable[Any]) -> Response | None:
    for event in events:
        if isinstance(event, Done):
            return event.response
    return None


def _request(
    model: Model,
    *,
    output: OutputSpec | None = None,
    tools: bool = False,
    tool_choice: str | None = None,
    stream: bool = False,
    settings: ModelSettings = _SETTINGS,
) -> Request:
    return Request(
        model=model.name,
        messages=_PROMPT,
        tools=(_TOOL,) if tools else (),
        output=output,
        settings=settings,
        stream=stream,
        tool_choice=tool_choice,
    )


def _has_usage(outcome: _Outcome) -> bool:
    usage = outcome.response.usage if outcome.response is not None else None
    return usage is not None and (usage.input_tokens > 0 or usage.output_tokens > 0)


def _learn(model: Model, declared: Profile, budget: _Budget) -> dict[str, Any]:
    learned: dict[str, Any] = {}
    # A strict schema, streamed with usage.
    streamed = _ask(model, budget, _request(model, output=_OUTPUT, stream=True))
    schema_outcome = streamed
    streaming_known = False
    if streamed is not None and streamed.ok:
        learned.update(streaming=True, schema_with_streaming=True)
        learned["stream_usage"] = _has_usage(streamed)
        streaming_known = True
    elif streamed is not None and "stream" in (streamed.refused or "").lower():
        learned["schema_with_streaming"] = False
        budget.note(f"schema on a stream: refused ({streamed.refused})")
        schema_outcome = _ask(model, budget, _request(model, output=_OUTPUT))
    learned["json_schema"] = _schema_support(schema_outcome, budget)
    if learned["json_schema"] == "no":
        learned.update(schema_with_streaming=False, schema_with_tools=False)
    # json_object, where the wire has it.
    if _speaks_chat(model):
        asked = _ask(model, budget, _request(model, settings=_json_object_settings()))
        if asked is not None:
            learned["json_object"] = asked.ok
            budget.note(f"json_object: {'accepted' if asked.ok else f'refused ({asked.refused})'}")
    # Each tool_choice.
    choices: set[ToolChoice] = set(declared.tool_choice & {"none"})
    for choice, wire_choice in (("named", _TOOL.name), ("required", "required"), ("auto", None)):
        asked = _ask(model, budget, _request(model, tools=True, tool_choice=wire_choice))
        if asked is None:
            continue
        works = asked.ok and (choice == "auto" or asked.called())
        if works:
            choices.add(choice)  # type: ignore[arg-type]
        budget.note(f"tool_choice {choice}: {_verdict(asked, works)}")
    learned["tool_choice"] = frozenset(choices)
    learned["tools"] = bool(choices - {"none"})
    # A schema with a tool the model must call.
    if learned["json_schema"] != "no" and learned["tools"]:
        forced = (
            _TOOL.name if "named" in choices else ("required" if "required" in choices else None)
        )
        asked = _ask(model, budget, _request(model, output=_OUTPUT, tools=True, tool_choice=forced))
        if asked is not None:
            works = asked.ok and (forced is None or asked.called())
            learned["schema_with_tools"] = works
            budget.note(f"schema with a tool: {_verdict(asked, works)}")
    elif not learned["tools"]:
        learned["schema_with_tools"] = False
    # A plain stream, when the schema's could not tell.
    if not streaming_known:
        asked = _ask(model, budget, _request(model, stream=True))
        if asked is not None:
            learned["streaming"] = asked.ok
            learned["stream_usage"] = asked.ok and _has_usage(asked)
            budget.note(f"stream: {_verdict(asked, asked.ok)}")
    return learned


def _schema_support(outcome: _Outcome | None, budget: _Budget) -> str:
    if outcome is None:
        return "no"
    if outcome.ok:
        support = "strict" if outcome.json_answer() else "best-effort"
        budget.note(
            "strict schema: enforced"
            if support == "strict"
            else "strict schema: accepted, but prose came back (best-effort)"
        )
        return support
    refused = outcome.refused or ""
    support = "best-effort" if "strict" in refused.lower() else "no"
    budget.note(f"strict schema: refused ({refused}): {support}")
    return support


def _verdict(outcome: _Outcome, works: bool) -> str:
    if not outcome.ok:
        return f"refused ({outcome.refused})"
    return "works" if works else "accepted, but not followed"


def _json_object_settings() -> ModelSettings:
    return replace(_SETTINGS, extra={"response_format": {"type": "json_object"}})


def _speaks_chat(model: Model) -> bool:
    """Whether ``model`` sends Chat Completions bodies (the wire with ``json_object``)."""
    from .openai_chat import OpenAIChatModel

    return isinstance(model, OpenAIChatModel)


# -- what a server says about itself -----------------------------------------------------------


def _servers_to_ask(provider: str, server: str | None) -> tuple[str, ...]:
    """The server kinds to ask about themselves: the one named (none for ``"none"``), else
    those the provider may be."""
    if server is None:
        return _SERVERS_OF.get(provider, ())
    if server == "none":
        return ()
    if server not in SERVERS:
        raise ConfigurationError(
            f"Unknown server {server!r} to probe; known: {', '.join(sorted(SERVERS))}, none"
        )
    return (server,)


def _self_description(
    model: Model, kinds: tuple[str, ...], budget: _Budget
) -> tuple[str | None, str | None]:
    """(server, version) from llama-server's ``/props`` or vLLM's ``/version``."""
    base_url = getattr(model, "base_url", None)
    if not isinstance(base_url, str) or not kinds:
        return None, None
    root = base_url.rstrip("/").removesuffix("/v1")
    for kind in kinds:
        path, server, key = SERVERS[kind]
        if not budget.spend():
            break
        data = _get_json(root + path)
        if isinstance(data, dict) and isinstance(data.get(key), (str, int)):
            budget.note(f"GET {path}: {server} {data[key]}")
            return server, str(data[key])
        budget.note(f"GET {path}: not {server}")
    return None, None


def _get_json(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return json.loads(reply.read(65536))
    except (OSError, ValueError, urllib.error.URLError):
        return None
