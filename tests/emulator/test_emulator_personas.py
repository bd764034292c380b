"""Emulator personas, through the real openai SDK: each one's quirks, its own error bodies, and
how a persona is chosen and dropped."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from alloy.cli import main
from alloy.testing.emulator import PERSONAS, Emulator, ReplyEmpty

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOL = {"type": "function", "function": {"name": "lookup", "parameters": SCHEMA}}
NAMED = {"type": "function", "function": {"name": "lookup"}}


def schema_format(strict: bool = True) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": strict}}


def client(emu: Emulator, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=emu.openai_base_url, api_key="k", max_retries=0, **options)


def chat(emu: Emulator, model: str = "m", **body: Any) -> Any:
    messages = [{"role": "user", "content": "Answer in json."}]
    return client(emu).chat.completions.create(model=model, messages=messages, **body)


def refused(emu: Emulator, **body: Any) -> str:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(emu, **body)
    return str(caught.value.message)


def test_a_persona_lasts_until_reset_and_one_given_to_the_constructor_comes_back() -> None:
    with Emulator(persona="deepseek") as emu:
        emu.persona("lmstudio")
        assert emu.app.persona is not None and emu.app.persona.name == "lmstudio"
        emu.reset()
        assert emu.app.persona is not None and emu.app.persona.name == "deepseek"
        emu.persona(None)
        assert emu.app.persona is None


def test_an_unknown_persona_names_the_known_ones(emu: Emulator) -> None:
    with pytest.raises(ValueError, match="unknown persona 'ollama'; known: azure-old-api"):
        emu.persona("ollama")


def test_deepseek_refuses_a_schema_and_answers_blank_when_scripted(emu: Emulator) -> None:
    emu.persona("deepseek")
    assert "This response_format type is unavailable now" in refused(
        emu, response_format=schema_format()
    )
    emu.push("openai", ReplyEmpty())
    blank = chat(emu, response_format={"type": "json_object"})
    assert blank.choices[0].message.content == ""
    assert chat(emu, response_format={"type": "json_object"}).choices[0].message.content == "{}"


def test_lmstudio_refuses_json_object_only(emu: Emulator) -> None:
    emu.persona("lmstudio")
    message = refused(emu, response_format={"type": "json_object"})
    assert message.endswith("'response_format.type' must be 'json_schema' or 'text'")
    assert chat(emu, response_format=schema_format()).choices[0].message.content.startswith("{")


def test_vllm_bare_refuses_auto_tool_choice_and_drops_tool_calls_under_a_schema(
    emu: Emulator,
) -> None:
    emu.persona("vllm-bare")
    assert "--enable-auto-tool-choice" in refused(emu, tools=[TOOL])
    assert chat(emu, tools=[TOOL], tool_choice=NAMED).choices[0].message.tool_calls
    both = chat(emu, tools=[TOOL], tool_choice=NAMED, response_format=schema_format())
    assert both.choices[0].message.tool_calls is None
    assert both.choices[0].message.content.startswith('{"city"')


def test_llamacpp_reads_a_named_tool_choice_as_auto_and_describes_itself(emu: Emulator) -> None:
    emu.persona("llamacpp")
    assert chat(emu, tools=[TOOL], tool_choice=NAMED).choices[0].message.tool_calls is None
    assert chat(emu, tools=[TOOL], tool_choice="required").choices[0].message.tool_calls
    props = client(emu).get("/../props", cast_to=object)
    assert props["build_info"] == PERSONAS["llamacpp"].build


def test_groq_is_strict_only_on_listed_models_and_streams_no_schema(emu: Emulator) -> None:
    emu.persona("groq")
    assert "strict" in refused(emu, response_format=schema_format())
    assert chat(emu, response_format=schema_format(strict=False)).choices[0].message.content
    listed = chat(emu, model="openai/gpt-oss-20b", response_format=schema_format())
    assert listed.choices[0].message.content.startswith("{")
    assert "does not support streaming" in refused(
        emu, response_format=schema_format(strict=False), stream=True
    )
    assert "tool use" in refused(emu, response_format=schema_format(strict=False), tools=[TOOL])


def test_azure_old_api_refuses_json_schema_below_2024_08_01_preview(emu: Emulator) -> None:
    emu.persona("azure-old-api")
    for version, ok in (("2024-06-01", False), ("2024-08-01-preview", True), ("2024-10-21", True)):
        azure = openai.AzureOpenAI(
            azure_endpoint=emu.url, api_key="k", api_version=version, max_retries=0
        )

        def create(azure: openai.AzureOpenAI = azure) -> Any:
            return azure.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "hi"}],
                response_format=schema_format(),  # type: ignore[arg-type]
            )

        if ok:
            assert create().choices[0].message.content.startswith("{")
        else:
            with pytest.raises(openai.BadRequestError, match="2024-08-01-preview and later"):
                create()


def test_a_persona_leaves_other_wires_alone(emu: Emulator) -> None:
    emu.persona("vertex-claude-policy")
    assert chat(emu, response_format=schema_format()).choices[0].message.content.startswith("{")


def test_alloy_emulate_refuses_an_unknown_persona_before_serving(capsys: Any) -> None:
    assert main(["emulate", "--port", "0", "--persona", "vllm"]) == 2
    err = capsys.readouterr().err
    assert "unknown persona 'vllm'; known:" in err and "vllm-bare" in err
