"""The key-leak rows of the OpenAI-compatible presets (vllm:, groq:...): their key, read from the
preset's own variable or given as ``api_key``, never shows in an error, a log record, an event,
a span, a repr or a pickle, on the failure paths of the key-leak matrix
(tests/hardening/test_key_leaks.py): error statuses whose bodies echo the key, 200 bodies alloy
cannot read that hold it across the snippet's cut, and an error inside a running stream.

The matrix runs each wire adapter once; a preset is the Chat Completions adapter with another
endpoint and key variable, so one row per preset is enough to show its key is redacted too.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from alloy import AlloyError, CommandError
from alloy.providers import get_model, providers
from alloy.providers._presets import PRESETS
from alloy.testing.emulator import Emulator

from . import test_key_leaks as matrix
from .test_key_leaks import KEYS, chain, fault, observations, run, shown, shows_key

pytest.importorskip("openai")

#: The matrix's fixture collecting events and spans, logging at DEBUG.
observed = matrix.observed

#: One form and its failure paths per row: a typed call through statuses that echo the key,
#: and a text stream broken off by an error that echoes it.
PATHS: dict[str, tuple[Any, ...]] = {
    "call": (400, 401, 429, 500, "200-html", "200-cut-json"),
    "stream": ("in-stream",),
}


def pickled(error: BaseException) -> bytes:
    """The error as a process pool or a result cache would store it."""
    return pickle.dumps(error)


@pytest.mark.parametrize("form", sorted(PATHS))
@pytest.mark.parametrize("name", [preset.name for preset in PRESETS])
def test_a_presets_key_never_shows(
    name: str,
    form: str,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    observed: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    preset = providers()[name]
    model = f"{name}:{preset.example_models[0]}"
    # The key-shaped key from the preset's own variable for the typed call, an opaque proxy
    # token given as the option for the stream.
    source, key = (
        ("environment", KEYS["key-shaped"]) if form == "call" else ("option", KEYS["opaque"])
    )
    if source == "environment":
        monkeypatch.setenv(preset.key_env[0], key)
    statuses = PATHS[form]
    emu.push("openai", *(fault(status, key) for status in statuses))

    errors = run(form, model, source, key, statuses)

    assert not emu.pending("openai")
    assert all(key in r.headers.get("authorization", "") for r in emu.requests)
    assert len(emu.requests) == len(statuses)
    for status, error in zip(statuses, errors, strict=True):
        assert isinstance(error, CommandError), f"HTTP {status} ended in {error!r}"
        assert all(isinstance(link, AlloyError) for link in chain(error))
        for text in shown(error):
            assert not shows_key(text, key), f"HTTP {status}: the key is in {text[:400]!r}"
        assert not shows_key(repr(pickled(error)), key), f"HTTP {status}: the key is pickled"
    built = get_model(model, api_key=key if source == "option" else None)
    for text in (repr(built), repr(vars(built)), str(built)):
        assert not shows_key(text, key), text[:400]
    for text in observations(observed, caplog):
        assert not shows_key(text, key), text[:400]
