"""What one endpoint and model can do, and what alloy saw it do: the capability profile.

A :class:`Profile` replaces the old three booleans (native schema, tools, strict tools). The
engine picks a call's output mode from it and says on every Result how the output was enforced
(:data:`~alloy._types.Enforcement`). Where a profile comes from is resolved once per prepared
call (``alloy.providers.resolve_profile``): the user's override, a stored probe, what this
process observed, the endpoint's declaration, then the model family.

What the process observes lives here, in memory, keyed by (endpoint, model): a 400 that
refuses ``response_format`` or a schema answered with prose steps the endpoint down, and the
next call starts from the stepped-down profile instead of paying for the same refusal again.
This module is pure: no I/O, no SDK, no provider.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

__all__ = [
    "ENFORCEMENTS",
    "Capabilities",
    "Enforcement",
    "OutputMode",
    "SCHEMA_SUPPORT",
    "TOOL_CHOICES",
    "Profile",
    "ProfileSource",
    "SchemaSupport",
    "ToolChoice",
    "below",
    "forget_observed",
    "names_output_feature",
    "observe",
    "observed",
    "observed_generation",
    "says_unsupported",
]

#: How a typed answer is asked for: the provider's schema, a forced tool call, or the prompt.
OutputMode = Literal["native", "tool", "prompt"]
#: How a typed answer was enforced, strongest first: the provider's schema, strict or not; a
#: forced tool call, its arguments strict or not; or instructions in the prompt (``prompt``).
Enforcement = Literal["native-strict", "native", "tool-strict", "tool", "prompt"]
#: How an endpoint takes a JSON Schema for the reply: enforced (constrained decoding),
#: accepted but not always kept (``best-effort``), or refused.
SchemaSupport = Literal["strict", "best-effort", "no"]
SCHEMA_SUPPORT: tuple[SchemaSupport, ...] = ("strict", "best-effort", "no")
#: ``tool_choice`` values: the model decides, must call some tool, must call the named one, none.
ToolChoice = Literal["auto", "required", "named", "none"]
TOOL_CHOICES: frozenset[ToolChoice] = frozenset({"auto", "required", "named", "none"})
#: Where a profile came from.
ProfileSource = Literal["declared", "probed", "observed", "user"]
#: The enforcement levels, strongest first (``require_enforcement=`` names the weakest allowed).
ENFORCEMENTS: tuple[Enforcement, ...] = ("native-strict", "native", "tool-strict", "tool", "prompt")


@dataclass(frozen=True, slots=True)
class Profile:
    """What one (endpoint, model) supports. Public as ``alloy.providers.Profile``.

    The defaults describe a current OpenAI model on OpenAI's own API, everything on but
    strict tools, which each adapter declares.

    Attributes:
        json_schema: a JSON Schema for the reply is ``"strict"`` (enforced), ``"best-effort"``
            (accepted, not always kept: tool mode is preferred) or ``"no"`` (refused).
        json_object: a bare "reply with JSON" mode (``response_format: json_object``).
        tools: function calling.
        strict_tools: tool arguments enforced against their schema (``strict: true``).
        tool_choice: which ``tool_choice`` values work (``auto``, ``required``, ``named``,
            ``none``); tool output mode needs ``required`` or ``named``.
        schema_with_tools: a reply schema may be sent together with tools.
        streaming: replies may stream.
        schema_with_streaming: a reply schema may be sent on a streamed request.
        stream_usage: a stream reports token usage (``stream_options.include_usage``).
        refused_keywords: JSON Schema keywords the endpoint refuses (left out of what is sent;
            validated locally all the same).
        refused_params: request parameters the endpoint refuses (``temperature``, ``seed``...).
        batch: the endpoint has a batch API.
        source: where the profile came from: ``declared`` (the endpoint's descriptor or the
            model family), ``probed`` (``alloy providers --probe``), ``observed`` (this process
            saw the endpoint refuse or drop a feature) or ``user`` (the ``profile=`` option).
    """

    json_schema: SchemaSupport = "strict"
    json_object: bool = True
    tools: bool = True
    strict_tools: bool = False
    tool_choice: frozenset[ToolChoice] = TOOL_CHOICES
    schema_with_tools: bool = True
    streaming: bool = True
    schema_with_streaming: bool = True
    stream_usage: bool = True
    refused_keywords: frozenset[str] = frozenset()
    refused_params: frozenset[str] = frozenset()
    batch: bool = False
    source: ProfileSource = "declared"

    def __post_init__(self) -> None:
        if self.json_schema not in SCHEMA_SUPPORT:
            raise ValueError(
                f"json_schema must be one of {SCHEMA_SUPPORT}, got {self.json_schema!r}"
            )
        for name in ("tool_choice", "refused_keywords", "refused_params"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, frozenset(value))
        unknown = set(self.tool_choice) - TOOL_CHOICES
        if unknown:
            raise ValueError(
                f"unknown tool_choice values {sorted(unknown)}; known: {sorted(TOOL_CHOICES)}"
            )

    # -- what the engine reads --

    @property
    def native_schema(self) -> bool:
        """A reply schema can be sent at all (strict or best-effort)."""
        return self.json_schema != "no"

    @property
    def forced_tools(self) -> bool:
        """The model can be made to call a tool (``tool_choice`` required or named)."""
        return bool(self.tool_choice & {"required", "named"})

    @property
    def tool_output(self) -> bool:
        """Tool output mode works: tools, and a way to force the output tool."""
        return self.tools and self.forced_tools

    def default_output_mode(self) -> OutputMode:
        """The strongest mode: an enforced schema, else a forced tool, else a best-effort
        schema, else the prompt."""
        if self.json_schema == "strict":
            return "native"
        if self.tool_output:
            return "tool"
        if self.json_schema == "best-effort":
            return "native"
        return "prompt"

    def enforcement(self, mode: OutputMode, strict: bool = True) -> Enforcement:
        """How an output asked for in ``mode`` is enforced (``strict``: the output's schema is
        sent strict)."""
        if mode == "native":
            return "native-strict" if strict and self.json_schema == "strict" else "native"
        if mode == "tool":
            return "tool-strict" if strict and self.strict_tools else "tool"
        return "prompt"

    def mode_for(self, wanted: Enforcement) -> OutputMode | None:
        """The mode that reaches at least ``wanted`` enforcement, strongest first, or None."""
        candidates: list[OutputMode] = []
        if self.native_schema:
            candidates.append("native")
        if self.tool_output:
            candidates.append("tool")
        for mode in candidates:
            if not below(self.enforcement(mode), wanted):
                return mode
        return "prompt" if wanted == "prompt" else None

    # -- what an observation changes --

    def without(self, mode: OutputMode) -> Profile:
        """This profile once the endpoint refused ``mode`` (a 400 naming it): native loses
        its schema, tool mode its forced tool choice."""
        if mode == "native":
            return replace(self, json_schema="no", source="observed")
        if mode == "tool":
            return replace(
                self, tool_choice=self.tool_choice - {"required", "named"}, source="observed"
            )
        return self

    def best_effort(self) -> Profile:
        """This profile once the endpoint answered a schema with prose: the schema is best-effort."""
        support: SchemaSupport = "no" if self.json_schema == "no" else "best-effort"
        return replace(self, json_schema=support, source="observed")

    def updated(self, changes: dict[str, Any], source: ProfileSource) -> Profile:
        """This profile with ``changes`` (field names to values) and a new source."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(
                f"unknown profile fields {sorted(unknown)}; known: {sorted(known - {'source'})}"
            )
        return replace(self, **{**changes, "source": source})


def Capabilities(
    *,
    native_schema: bool = True,
    tools: bool = True,
    strict_tools: bool = False,
    forced_tools: bool = True,
) -> Profile:
    """The three booleans a model declared before profiles, as a :class:`Profile` (kept for
    models written against them; new code builds a Profile)."""
    choices = TOOL_CHOICES if forced_tools else frozenset({"auto", "none"})
    return Profile(
        json_schema="strict" if native_schema else "no",
        tools=tools,
        strict_tools=strict_tools,
        tool_choice=choices,  # type: ignore[arg-type]
    )


def below(level: Enforcement, wanted: Enforcement) -> bool:
    """Whether ``level`` is weaker than ``wanted``."""
    return ENFORCEMENTS.index(level) > ENFORCEMENTS.index(wanted)


#: A 400 naming one of these is the endpoint refusing an output feature, not a bad prompt.
_OUTPUT_FEATURE = re.compile(
    r"response_format|json_schema|tool[_ ]choice|output_config|\bstrict\b", re.IGNORECASE
)


def names_output_feature(message: str) -> bool:
    """Whether an error message names ``response_format``, ``json_schema``, ``tool_choice``
    (vLLM writes "tool choice"), ``output_config`` (Claude's structured outputs) or
    ``strict``: the endpoint refused how the output was asked for."""
    return bool(_OUTPUT_FEATURE.search(message))


_UNSUPPORTED = re.compile(
    r"not supported|unsupported|does not support|doesn't support|not available|not allowed|"
    r"not implemented|unknown|unrecognized|not enabled|only supports|unavailable|"
    r"enabled only for|extra inputs are not permitted",
    re.IGNORECASE,
)


def says_unsupported(message: str) -> bool:
    """Whether an error message says a feature is missing (``... is not supported``), rather
    than that the schema sent was at fault (``Invalid schema for response_format``)."""
    return bool(_UNSUPPORTED.search(message))


# -- what this process observed ---------------------------------------------------------------

_OBSERVED: dict[tuple[str, str], Profile] = {}
_LOCK = threading.Lock()
_generation = 0


def observe(endpoint: str, model: str, profile: Profile) -> bool:
    """Remember ``profile`` for (endpoint, model) for the rest of the process; True the first
    time this pair steps down (when to warn)."""
    global _generation
    with _LOCK:
        first = (endpoint, model) not in _OBSERVED
        _OBSERVED[(endpoint, model)] = profile
        _generation += 1
    return first


def observed(endpoint: str, model: str) -> Profile | None:
    """What this process observed of (endpoint, model), if anything."""
    return _OBSERVED.get((endpoint, model))


def observed_generation() -> int:
    """Changes with every observation, so prepared calls know to resolve their profile again."""
    return _generation


def forget_observed() -> None:
    """Forget every observation (``alloy.providers.clear_model_cache`` calls this)."""
    global _generation
    with _LOCK:
        _OBSERVED.clear()
        _generation += 1
