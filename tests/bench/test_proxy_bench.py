"""The proxy row of ``make bench`` runs: alloy serve and the bare forwarder front the emulator
and yield well-formed figures (LiteLLM's proxy, which needs a venv of its own, is left out)."""

from __future__ import annotations

import math

import pytest

from alloy.testing.emulator import Emulator
from benchmarks import proxy
from benchmarks._scale import TINY

pytest.importorskip("fastapi")


def test_the_proxy_suite_compares_alloy_serve_with_the_bare_forwarder() -> None:
    with Emulator() as emulator:
        result = proxy.run(emulator.url, TINY, litellm=False)
    assert [f.name for f in result.figures] == [
        "/v1/chat/completions added p50 vs bare forwarder",
        "/v1/chat/completions p99 vs bare forwarder",
        f"/v1/chat/completions req/s at {TINY.serve_concurrency} vs bare forwarder",
    ]
    for figure in result.figures:
        assert math.isfinite(figure.ratio) and figure.baseline_label and figure.samples
