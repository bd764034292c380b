"""What each cloud endpoint declares it supports, by model id prefix after normalisation
(:func:`~alloy.providers.family_id`: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` and
``claude-sonnet-4-5@20250929`` are both ``claude-sonnet-4-5...``); ``""`` is every other model,
and a key ending in ``$`` is one whole id (``claude-sonnet-4$`` is Sonnet 4, not 4.5).
Sources are in docs/providers.md, under each cloud's section.

Claude's structured outputs (``output_config.format``, Converse's ``outputConfig.textFormat``)
and strict tools are listed from Claude 4.5 on by Amazon Bedrock, Microsoft Foundry (beta) and
Vertex AI, where Anthropic's own API has them from 4.1; an id this table does not know is taken
to be a current model. Vertex AI keeps them off until the organisation policy allows them: the
400 is stepped down from once, announced. Azure OpenAI's depend on the API version, which a
model id cannot say: the adapter declares them (``alloy.providers.azure``).
"""

from __future__ import annotations

from collections.abc import Mapping

from .._profile import Profile, ToolChoice

__all__ = ["BEDROCK", "CLAUDE_ON_CLOUDS", "VERTEX"]

_CLAUDE = Profile(json_object=False, strict_tools=True)
_CLAUDE_TOOLS_ONLY = Profile(json_schema="no", json_object=False)
#: Claude before 4.5: no structured outputs on any cloud (the family lookup's 4.1 has them only
#: on Anthropic's API). ``claude-sonnet-4-2025`` is Sonnet 4's dated id, not 4.5's, and
#: ``claude-sonnet-4$`` its undated one (Vertex AI's ``claude-sonnet-4@20250514``, Foundry's).
_CLAUDE_BEFORE_4_5 = (
    "claude-instant",
    "claude-2",
    "claude-3",
    "claude-opus-4$",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-2025",
    "claude-sonnet-4$",
    "claude-sonnet-4-0",
    "claude-sonnet-4-2025",
)
#: Claude through Anthropic's SDK on a cloud: structured outputs and strict tools from 4.5.
CLAUDE_ON_CLOUDS: Mapping[str, Profile] = {
    "": _CLAUDE,
    **dict.fromkeys(_CLAUDE_BEFORE_4_5, _CLAUDE_TOOLS_ONLY),
}

_ANY_OR_AUTO: frozenset[ToolChoice] = frozenset({"auto", "required", "none"})
#: Bedrock Converse: ``toolChoice`` ``auto`` and ``any`` for every model with tool use, a named
#: ``tool`` for Claude and Amazon Nova only; no JSON mode; a schema (``outputConfig``) for
#: Claude 4.5 and later and a few open-weight models (probe those: ``alloy providers --probe``).
BEDROCK: Mapping[str, Profile] = {
    "": Profile(json_schema="no", json_object=False, tool_choice=_ANY_OR_AUTO),
    "claude-": _CLAUDE,
    **dict.fromkeys(_CLAUDE_BEFORE_4_5, _CLAUDE_TOOLS_ONLY),
    "nova-": Profile(json_schema="no", json_object=False),
}
#: Gemini on Vertex AI: a response schema (constrained decoding) and function calling with
#: ``ANY`` (optionally named) and ``NONE`` modes; a schema beside function declarations from
#: Gemini 3 on.
VERTEX: Mapping[str, Profile] = {
    "": Profile(),
    "gemini-1": Profile(schema_with_tools=False),
    "gemini-2": Profile(schema_with_tools=False),
}
