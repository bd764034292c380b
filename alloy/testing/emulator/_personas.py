"""Personas: the emulator behaving like a real endpoint with its documented quirks.

A persona changes how one wire API answers, without touching the script: it may refuse a
request with that server's own 400 (:meth:`Persona.refusal`), change what the request asks of
the model (:meth:`Persona.reshape`, e.g. a named ``tool_choice`` read as ``auto``, a schema
ignored), and answer ``GET`` paths a server describes itself on (:meth:`Persona.describe`,
llama-server's ``/props``, vLLM's ``/version``). Each persona declares the capability profile
``alloy providers --probe`` should learn of it (:attr:`Persona.profile`).

Select one with ``Emulator(persona="deepseek")`` or ``emu.persona("deepseek")``; ``reset()``
drops it. The error texts are the servers' own where a public report quotes them (each
persona's docstring cites it); where none does, the docstring says the wording is ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from ._api import mapping
from ._call import Call
from ._http import Incoming, Outcome, json_send

if TYPE_CHECKING:
    from ..._profile import Profile

__all__ = ["PERSONAS", "Persona", "PersonaRefusal", "persona_named"]

#: An endpoint that takes no reply schema: none with tools or streams either.
_NO_SCHEMA: dict[str, Any] = {
    "json_schema": "no",
    "schema_with_tools": False,
    "schema_with_streaming": False,
}


@dataclass(frozen=True)
class PersonaRefusal:
    """A 400 (or other status) in the persona's wire's own envelope."""

    message: str
    param: str | None = None
    code: str | None = None
    status: int = 400


@dataclass(frozen=True)
class Persona:
    """The quirks of one kind of endpoint; subclasses override what differs from a plain one."""

    #: The persona's name (``emu.persona(name)``).
    name: ClassVar[str] = "plain"
    #: The wire API the quirks apply to (``Call.api``: ``openai.chat``, ``bedrock.converse``…).
    api: ClassVar[str] = "openai.chat"
    #: How the profile a probe should learn differs from a plain endpoint's (Profile's
    #: defaults): the persona's quirks as profile fields.
    quirks: ClassVar[Mapping[str, Any]] = {}
    #: The model the persona is probed with in tests (some quirks depend on the model).
    model: ClassVar[str] = "persona-model"

    @property
    def profile(self) -> Profile:
        """The capability profile a probe of this endpoint should learn."""
        from ..._profile import Profile

        return Profile(**self.quirks)

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        """The error this server answers ``call`` with, if it refuses it."""
        return None

    def reshape(self, call: Call) -> Call:
        """What the server actually asks of the model (quirks that change the answer)."""
        return call

    def describe(self, method: str, path: str) -> Outcome | None:
        """The answer to a ``GET`` a server describes itself on, if this one does."""
        return None


def _strict(call: Call) -> bool:
    spec = mapping(mapping(call.body.get("response_format")).get("json_schema"))
    return spec.get("strict") is True


def _named_choice(call: Call) -> bool:
    return isinstance(call.body.get("tool_choice"), Mapping)


@dataclass(frozen=True)
class DeepSeek(Persona):
    """DeepSeek's API: ``json_object`` only; any other ``response_format`` type is a 400.

    The 400 body is quoted in llm-exe/llm-exe#662 and UKGovernmentBEIS/inspect_ai#4916:
    ``{"error": {"message": "This response_format type is unavailable now", "type":
    "invalid_request_error", ...}}``. DeepSeek's JSON-mode guide warns the API "may occasionally
    return empty content": script that with ``emu.push("openai", ReplyEmpty())``, so a test
    decides which reply is blank.
    """

    name: ClassVar[str] = "deepseek"
    model: ClassVar[str] = "deepseek-chat"
    quirks: ClassVar[Mapping[str, Any]] = _NO_SCHEMA

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        if call.schema is not None:
            return PersonaRefusal(
                "This response_format type is unavailable now", code="invalid_request_error"
            )
        return None


@dataclass(frozen=True)
class LMStudio(Persona):
    """LM Studio's server: ``json_schema`` works, ``json_object`` is a 400.

    The body is quoted in lmstudio-ai/lmstudio-bug-tracker#189 and LoadShine/tada#16:
    ``{"error": "'response_format.type' must be 'json_schema' or 'text'"}`` (LM Studio's error
    is a bare string; the emulator keeps the OpenAI envelope so the SDK reads the message).
    """

    name: ClassVar[str] = "lmstudio"
    model: ClassVar[str] = "qwen2.5-7b-instruct"
    quirks: ClassVar[Mapping[str, Any]] = {"json_object": False}

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        if call.json_mode:
            return PersonaRefusal("'response_format.type' must be 'json_schema' or 'text'")
        return None


@dataclass(frozen=True)
class VLLMBare(Persona):
    """vLLM started without ``--enable-auto-tool-choice --tool-call-parser``.

    ``tool_choice`` ``auto`` (also what tools without a ``tool_choice`` mean) is a 400 with
    ``"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set``
    (vllm-project/vllm#9986); named and ``required`` choices work through guided decoding.
    With a ``response_format`` schema the schema's guided decoding wins and tool calls are
    suppressed: the reply is the schema's JSON (pydantic/pydantic-ai#6552). ``GET /version``
    answers ``{"version": ...}``.
    """

    name: ClassVar[str] = "vllm-bare"
    model: ClassVar[str] = "Qwen/Qwen2.5-7B-Instruct"
    version: ClassVar[str] = "0.8.5"
    quirks: ClassVar[Mapping[str, Any]] = {
        "tool_choice": frozenset({"required", "named", "none"}),
        "schema_with_tools": False,
    }

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        if call.tools and call.body.get("tool_choice") in (None, "auto"):
            return PersonaRefusal(
                '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
                "to be set"
            )
        return None

    def reshape(self, call: Call) -> Call:
        if call.schema is not None and call.tools:
            return replace(call, forced_tool=None)
        return call

    def describe(self, method: str, path: str) -> Outcome | None:
        if method == "GET" and path.rstrip("/") == "/version":
            return json_send(200, {"version": self.version})
        return None


@dataclass(frozen=True)
class LlamaCpp(Persona):
    """llama.cpp's ``llama-server``: a named ``tool_choice`` is read as ``auto`` (it takes
    ``auto``, ``required`` and ``none``), and ``GET /props`` describes the server, its build
    in ``build_info`` (the shape of tools/server/README.md's ``/props``)."""

    name: ClassVar[str] = "llamacpp"
    model: ClassVar[str] = "qwen2.5-7b-instruct-q4_k_m.gguf"
    build: ClassVar[str] = "b5890-6efcd659"
    quirks: ClassVar[Mapping[str, Any]] = {"tool_choice": frozenset({"auto", "required", "none"})}

    def reshape(self, call: Call) -> Call:
        if _named_choice(call):
            return replace(call, forced_tool=None)
        return call

    def describe(self, method: str, path: str) -> Outcome | None:
        if method == "GET" and path.rstrip("/") == "/props":
            return json_send(
                200,
                {
                    "default_generation_settings": {"n_ctx": 4096, "temperature": 0.8},
                    "total_slots": 1,
                    "model_path": f"/models/{self.model}",
                    "chat_template": "{{ messages }}",
                    "build_info": self.build,
                },
            )
        return None


@dataclass(frozen=True)
class Groq(Persona):
    """Groq: ``strict: true`` schemas only on the models its structured-outputs page lists
    (``STRICT_MODELS``; elsewhere the schema is best-effort), and a schema cannot stream or be
    sent with tools (console.groq.com/docs/structured-outputs: "Streaming and tool use are
    not currently supported with Structured Outputs").

    The streaming 400 is quoted in langchain-ai/langchain#23629: ``response_format` does not
    support streaming``. The wording of the strict and tools refusals is ours (no public
    report quotes them).
    """

    name: ClassVar[str] = "groq"
    model: ClassVar[str] = "llama-3.3-70b-versatile"
    STRICT_MODELS: ClassVar[frozenset[str]] = frozenset(
        {"openai/gpt-oss-20b", "openai/gpt-oss-120b"}
    )
    quirks: ClassVar[Mapping[str, Any]] = {
        "json_schema": "best-effort",
        "schema_with_tools": False,
        "schema_with_streaming": False,
    }

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        if call.schema is None:
            return None
        if call.stream:
            return PersonaRefusal("response_format` does not support streaming")
        if _strict(call) and call.model not in self.STRICT_MODELS:
            return PersonaRefusal(
                f"response_format json_schema with strict: true is not supported by model "
                f"`{call.model}`; set strict to false",
                param="response_format",
            )
        if call.tools:
            return PersonaRefusal(
                "response_format` does not support tool use", param="response_format"
            )
        return None


@dataclass(frozen=True)
class BedrockSilent(Persona):
    """Bedrock Converse answering 200 with prose when a schema is sent: the schema is dropped
    on the way (BerriAI/litellm#35214, PR #39070). Tools work."""

    name: ClassVar[str] = "bedrock-silent"
    api: ClassVar[str] = "bedrock.converse"
    model: ClassVar[str] = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    quirks: ClassVar[Mapping[str, Any]] = {"json_schema": "best-effort", "json_object": False}

    def reshape(self, call: Call) -> Call:
        return replace(call, schema=None, schema_name=None)


@dataclass(frozen=True)
class VertexClaudePolicy(Persona):
    """Claude on Vertex AI before the organisation policy allows structured outputs: a schema
    (``output_config.format``) is a 400 ``output_config.format: Extra inputs are not
    permitted`` (anthropics/anthropic-sdk-python#1188). ``allowed=True`` is the policy on:
    ``emu.persona(VertexClaudePolicy(allowed=True))``."""

    name: ClassVar[str] = "vertex-claude-policy"
    api: ClassVar[str] = "anthropic.vertex"
    model: ClassVar[str] = "claude-sonnet-4-5@20250929"
    quirks: ClassVar[Mapping[str, Any]] = {**_NO_SCHEMA, "json_object": False}
    allowed: bool = False

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        if call.schema is not None and not self.allowed:
            return PersonaRefusal("output_config.format: Extra inputs are not permitted")
        return None


#: The first Azure OpenAI API version that takes ``response_format`` ``json_schema``.
AZURE_JSON_SCHEMA_VERSION = "2024-08-01-preview"


@dataclass(frozen=True)
class AzureOldAPI(Persona):
    """Azure OpenAI called with an ``api-version`` older than ``2024-08-01-preview``: a
    ``json_schema`` response format is a 400 ``response_format value as json_schema is enabled
    only for api versions 2024-08-01-preview and later`` (langgenius/dify#8994, code
    ``BadRequest``). The v1 API (no ``api-version``) is unaffected."""

    name: ClassVar[str] = "azure-old-api"
    model: ClassVar[str] = "gpt-4o"
    #: The version the persona's tests send (``OPENAI_API_VERSION``).
    api_version: ClassVar[str] = "2024-06-01"
    quirks: ClassVar[Mapping[str, Any]] = _NO_SCHEMA

    def refusal(self, call: Call, incoming: Incoming) -> PersonaRefusal | None:
        version = incoming.query_value("api-version")
        if call.schema is not None and version and _older(version, AZURE_JSON_SCHEMA_VERSION):
            return PersonaRefusal(
                f"response_format value as json_schema is enabled only for api versions "
                f"{AZURE_JSON_SCHEMA_VERSION} and later",
                code="BadRequest",
            )
        return None


def _older(version: str, than: str) -> bool:
    """Azure API versions compare by date, a ``-preview`` before the release of its date."""
    return (version[:10], "-preview" not in version) < (than[:10], "-preview" not in than)


#: The personas by name.
PERSONAS: dict[str, type[Persona]] = {
    cls.name: cls
    for cls in (
        DeepSeek,
        LMStudio,
        VLLMBare,
        LlamaCpp,
        Groq,
        BedrockSilent,
        VertexClaudePolicy,
        AzureOldAPI,
    )
}


def persona_named(persona: str | Persona, **options: Any) -> Persona:
    """A persona by name (with its options), or the one given."""
    if isinstance(persona, Persona):
        return persona
    cls = PERSONAS.get(persona)
    if cls is None:
        raise ValueError(f"unknown persona {persona!r}; known: {', '.join(sorted(PERSONAS))}")
    return cls(**options)
