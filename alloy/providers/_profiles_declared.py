"""What each OpenAI-compatible endpoint declares it supports, by model id prefix (``""``: every
model). Sources are in docs/providers.md, "OpenAI-compatible presets"."""

from __future__ import annotations

from .._profile import Profile, ToolChoice

__all__ = [
    "DEEPSEEK",
    "FIREWORKS",
    "GROQ",
    "LLAMACPP",
    "LMSTUDIO",
    "MISTRAL",
    "OPENROUTER",
    "SGLANG",
    "TOGETHER",
    "VLLM",
    "XAI",
]

_NO_NAMED: frozenset[ToolChoice] = frozenset({"auto", "required", "none"})
_NAMED_ONLY: frozenset[ToolChoice] = frozenset({"named", "none"})

#: vLLM: structured outputs through guided decoding (json_schema, json_object); a named
#: tool_choice is guided too, while "auto" and "required" need --enable-auto-tool-choice and a
#: tool parser, which a bare server lacks.
VLLM = {"": Profile(tool_choice=_NAMED_ONLY)}
#: llama.cpp's llama-server: json_schema and json_object through grammars; tools with --jinja;
#: a named tool_choice is treated as "auto".
LLAMACPP = {"": Profile(tool_choice=_NO_NAMED)}
#: LM Studio: json_schema only (json_object is refused with a 400).
LMSTUDIO = {"": Profile(json_object=False, tool_choice=_NO_NAMED)}
#: SGLang: json_schema through its grammar backends; tools with a tool-call parser.
SGLANG = {"": Profile()}
#: Groq: strict structured outputs (constrained decoding) only on the listed models, best-effort
#: elsewhere; no streaming with a schema.
GROQ = {
    "": Profile(json_schema="best-effort", schema_with_streaming=False),
    "openai/gpt-oss": Profile(schema_with_streaming=False, strict_tools=True),
}
#: OpenRouter: routes to a provider that may lack a feature, so schemas are best-effort.
OPENROUTER = {"": Profile(json_schema="best-effort")}
#: DeepSeek: JSON Output (json_object) only, no JSON Schema; function calling.
DEEPSEEK = {"": Profile(json_schema="no")}
#: Mistral: custom structured outputs (json_schema) and JSON mode; function calling.
MISTRAL = {"": Profile()}
#: xAI: structured outputs (json_schema) and function calling.
XAI = {"": Profile()}
#: Together AI: JSON mode with a schema on its supported models: best-effort elsewhere.
TOGETHER = {"": Profile(json_schema="best-effort")}
#: Fireworks: JSON mode with a schema through grammar-based decoding; function calling.
FIREWORKS = {"": Profile()}
