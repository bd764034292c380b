"""alloy-ai's spellings: accepted with a DeprecationWarning naming alloy's, or refused naming it.

alloy's scope comes from alloy-ai (PyPI 0.3.1), and its users have code. An option alloy-ai
spelled differently must either still work or fail with the replacement in the message; a bare
"unknown option" would leave them guessing. docs/migrating.md has the whole table.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from .errors import ConfigurationError

#: alloy-ai option -> alloy option, for the ones that only changed their name (or their count).
RENAMED_OPTIONS = {"default_system": "system", "extra": "extra_json", "retry": "retries"}
#: alloy-ai options alloy cannot honour, with what to do instead.
REMOVED_OPTIONS = {
    "retry_on": (
        "transient provider failures (error.transient: rate limits, 5xx, timeouts) are retried "
        "by retries=, and invalid answers are re-asked with the validation errors by max_reasks="
    ),
}
LEGACY_OPTIONS = frozenset(RENAMED_OPTIONS) | frozenset(REMOVED_OPTIONS)

_OPENAI_TOOL_CHOICE = 'extra_json={"tool_choice": ...} (the body parameter itself)'
_OLLAMA_OPENAI = (
    'model "openai-chat:<model>" with base_url="http://localhost:11434/v1" (Ollama\'s '
    "OpenAI-compatible API)"
)
#: Keys alloy-ai read out of ``extra`` itself. alloy merges ``extra_json`` into the request body
#: as it is, so these would reach the provider as unknown parameters.
LEGACY_EXTRA_KEYS = {
    "openai_tool_choice": _OPENAI_TOOL_CHOICE,
    "anthropic_tool_choice": 'extra_json={"tool_choice": {"type": "auto"}} (any, tool, none)',
    "anthropic_disable_parallel_tool_use": (
        'extra_json={"tool_choice": {"type": "auto", "disable_parallel_tool_use": true}}'
    ),
    "gemini_tool_choice": 'extra_json={"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}',
    "gemini_allowed_tools": (
        'extra_json={"toolConfig": {"functionCallingConfig": {"mode": "ANY", '
        '"allowedFunctionNames": [...]}}}'
    ),
    "ollama_api": f"\"ollama:<model>\" for Ollama's /api/chat (alloy's way), or {_OLLAMA_OPENAI}",
    "ollama_tool_choice": f"{_OLLAMA_OPENAI} and {_OPENAI_TOOL_CHOICE}",
}

#: Variables alloy-ai's documentation named that alloy does not read (nor did alloy-ai's library:
#: its test suite read ALLOY_OLLAMA_API, and ALLOY_EXPERIMENTAL_STREAMING gated a preview).
#: Setting one warns, naming what does the job in alloy.
LEGACY_ENV_VARS = {
    "ALLOY_OLLAMA_API": (
        '"ollama:<model>" always uses Ollama\'s /api/chat (alloy-ai\'s "native"); in place of '
        f'alloy-ai\'s "openai_chat" use {_OLLAMA_OPENAI}'
    ),
    "ALLOY_EXPERIMENTAL_STREAMING": (
        "no flag is needed: cmd.stream_items() (or astream_items()) yields each item of a list "
        "output as soon as it is complete, and cmd.stream_partial() streams any typed output"
    ),
}


def warn_legacy_env(environ: Mapping[str, str]) -> None:
    """A DeprecationWarning for each of :data:`LEGACY_ENV_VARS` that is set."""
    for name, advice in LEGACY_ENV_VARS.items():
        if environ.get(name, "").strip():
            deprecated(f"{name} was named in alloy-ai's docs, and alloy does not read it: {advice}")


def translate_options(
    options: Mapping[str, Any], source: str, *, warn: bool = True
) -> Mapping[str, Any]:
    """``options`` with alloy-ai's names replaced by alloy's (with a DeprecationWarning unless
    ``warn`` is false), or a ConfigurationError for what has no replacement. ``source`` names
    where they came from."""
    if options.keys().isdisjoint(LEGACY_OPTIONS):  # every call but a migrating one
        if "extra_json" in options:
            check_extra(options["extra_json"], f"extra_json= in {source}")
        return options
    note = deprecated if warn else _quiet
    result = dict(options)
    for old, advice in REMOVED_OPTIONS.items():
        if old not in result:
            continue
        if result.pop(old) is not None:
            raise ConfigurationError(f"{old}= in {source} was alloy-ai's and is gone: {advice}")
        note(f"{old}= in {source} was alloy-ai's and does nothing in alloy: {advice}")
    for old, new in RENAMED_OPTIONS.items():
        if old not in result:
            continue
        if new in result:
            raise ConfigurationError(
                f"{source} sets both {old}= and {new}=; {old}= is alloy-ai's spelling of {new}=, "
                f"so keep only {new}="
            )
        value = result.pop(old)
        if old == "retry":
            value = _retries_from_attempts(value, source)
            note(
                f"retry= in {source} is alloy-ai's spelling: use retries=, which counts the "
                f"retries after the first attempt (retry=N is retries=N-1). Transient provider "
                "failures are retried; invalid answers are re-asked (max_reasks=)"
            )
        else:
            note(f"{old}= in {source} is alloy-ai's spelling: use {new}=")
        if new == "extra_json":
            check_extra(value, f"{old}= in {source}")
        if value is not None:
            result[new] = value
    if "extra_json" in options:
        check_extra(options["extra_json"], f"extra_json= in {source}")
    return result


def _quiet(message: str) -> None:
    """For a caller that has already warned about the whole thing."""


def _retries_from_attempts(attempts: Any, source: str) -> int | None:
    """alloy-ai's ``retry`` counted every attempt (at least one); alloy counts the retries."""
    if attempts is None:
        return None
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise ConfigurationError(
            f"Invalid value for option 'retry' in {source}: expected a whole number of attempts "
            f"(alloy's option is retries=, the retries after the first attempt)"
        )
    return max(attempts - 1, 0)


def check_extra(extra: Any, where: str) -> None:
    """Refuse the keys alloy-ai read out of ``extra``: alloy would send them to the provider."""
    if not isinstance(extra, Mapping):
        return  # the option's own validation says what is wrong
    for key, replacement in LEGACY_EXTRA_KEYS.items():
        if key in extra:
            raise ConfigurationError(
                f"{key!r} in {where} was an alloy-ai setting, which alloy would send to the "
                f"provider as an unknown parameter: use {replacement}"
            )


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CONTEXTLIB = contextlib.__file__


def deprecated(message: str) -> None:
    """A DeprecationWarning pointing at the caller's line: the first frame outside alloy (and
    outside contextlib, which runs the body of ``use_config``), so Python shows it there."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE) or frame.f_code.co_filename == _CONTEXTLIB
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, DeprecationWarning, stacklevel=level)
