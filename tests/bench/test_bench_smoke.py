"""The benchmark runner works: each suite here runs at tiny scale and yields well-formed figures.

No timing is asserted anywhere; the numbers are only checked to be finite and positive.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from alloy.testing.emulator import Emulator
from benchmarks import (
    _setup,
    batch,
    bigoutput,
    cache,
    evalreport,
    inprocess,
    mcp_calls,
    report,
    rows,
    scaleout,
    serve,
    streaming,
    warm,
)
from benchmarks._measure import Figure, SuiteResult
from benchmarks._scale import TINY


def well_formed(result: SuiteResult, count: int) -> None:
    assert len(result.figures) == count
    for figure in result.figures:
        assert isinstance(figure, Figure)
        assert figure.alloy > 0 and figure.baseline > 0
        assert math.isfinite(figure.ratio)
        assert figure.samples and figure.baseline_label


def test_big_output_suite() -> None:
    result = bigoutput.run(TINY)
    well_formed(result, 2)
    assert all(f.ci is not None for f in result.figures)


def test_eval_report_suite() -> None:
    result = evalreport.run(TINY)
    well_formed(result, 2)
    assert [f.name.rsplit(", ", 1)[-1] for f in result.figures] == ["HTML page", "build + save"]
    assert result.notes[0].startswith("The page: median ")
    assert result.notes[1].startswith("After the model calls: median ")


def test_mcp_suite_in_memory() -> None:
    pytest.importorskip("mcp")
    result = mcp_calls.run(TINY, stdio=False)  # the stdio rows start servers: make bench only
    well_formed(result, 2)
    assert all(f.target is not None for f in result.figures)


def test_warm_suite_against_the_emulator() -> None:
    with Emulator() as emulator:
        result = warm.run(emulator.url, TINY, providers=("openai",))
    well_formed(result, 2)
    assert [f.name for f in result.figures] == ["OpenAI Responses, sync", "OpenAI Responses, async"]
    assert result.details[0] == "OpenAI Responses (`openai:gpt-4o-mini`): request bodies identical."
    assert result.details[1].startswith("OpenAI Responses, sync: of alloy's extra time")


def test_cache_suite_against_the_emulator() -> None:
    with Emulator() as emulator:
        result = cache.run(emulator.url, TINY)
    well_formed(result, 7)
    assert [f.name.split(", ", 1)[1] for f in result.figures[:6]] == [
        "hit (SQLite) vs warm round trip",
        "hit (SQLite) vs raw SDK",
        "hit (memory) vs warm round trip",
        "hit (memory) vs raw SDK",
        "first hit (SQLite) vs warm round trip",
        "first hit (memory) vs warm round trip",
    ]
    assert result.figures[6].name.startswith("hit path on a ")


@pytest.mark.fuzz
def test_ray_suite_gives_one_process_s_records_and_keeps_the_limit(fuzz_scale: int) -> None:
    """Two actors on a local Ray cluster and one process over the same rows: the suite itself
    raises if any row's record differs."""
    if fuzz_scale == 1:
        pytest.skip("starts two Ray clusters (~45 s): run under `make fuzz`; tests/scale runs Ray")
    pytest.importorskip("ray", reason="the ray suite needs Ray Data: pip install 'alloy[ray]'")
    result = scaleout.run(TINY)
    assert [f.name for f in result.figures] == [
        "Ray Data, 2 actors vs cmd.map in one process, rows/s",
        "2 actors sharing a RayBudget: share of the limit used",
        "2 actors sharing a RayBudget: requests answered 429",
    ]
    for figure in result.figures:  # 429s may well be none
        assert figure.alloy >= 0 and figure.baseline > 0 and math.isfinite(figure.ratio)
    assert "every row's record the same both ways" in result.notes[0]


def test_rows_suite_against_rate_limited_emulators() -> None:
    result = rows.run(TINY)
    assert len(result.figures) == 5
    for figure in result.figures:  # counts of 429s may well be zero
        assert figure.alloy >= 0 and figure.baseline > 0 and math.isfinite(figure.ratio)
    assert result.figures[0].unit == "rows/min" and result.figures[0].baseline == TINY.rows_rpm
    assert "Paced map:" in result.notes[0]


def test_batch_suite_gives_the_same_values_at_half_the_cost() -> None:
    result = batch.run(TINY)
    well_formed(result, 2)
    assert "Same value for every row both ways: True" in result.notes[0]
    assert result.figures[1].met


def test_report_is_written(tmp_path: Path) -> None:
    result = bigoutput.run(TINY)
    path = report.write(tmp_path, [result], [], ["environment line"], [], chart_python=None)
    text = path.read_text()
    assert text.startswith("# alloy benchmarks")
    assert "| Suite | Figure | alloy | baseline |" in text
    assert result.figures[0].name in text


@pytest.mark.skipif(
    not all((_setup.VENVS / name / ".installed").exists() for name in _setup.PEERS),
    reason="the peer libraries' venvs are built by `make bench` (they need the network)",
)
def test_inprocess_suite_with_peers() -> None:
    peers = {name: str(_setup.VENVS / name / "bin" / "python") for name in _setup.PEERS}
    result = inprocess.run(TINY, peers)
    well_formed(result, len(inprocess.ROWS))


def test_streaming_suite() -> None:
    peers = {
        name: str(_setup.VENVS / name / "bin" / "python")
        for name in _setup.PEERS
        if (_setup.VENVS / name / ".installed").exists()
    }
    result = streaming.run(TINY, peers)
    well_formed(result, 5 if "instructor" in peers else 4)
    assert [f.target is not None for f in result.figures[:2]] == [True, True]
    assert result.notes and "partials" in result.notes[0]


def test_serve_suite_against_the_emulator() -> None:
    pytest.importorskip("fastapi")
    with Emulator() as emulator:
        result = serve.run(emulator.url, TINY)
    well_formed(result, 6)
    assert [f.name for f in result.figures] == [
        "POST /commands/greet, p50",
        "POST /commands/greet, p99",
        f"POST /commands/greet, requests/s at {TINY.serve_concurrency} in flight",
        "/v1/chat/completions, p50",
        "/v1/chat/completions, p99",
        "/v1/chat/completions with one rail (blocklist), p50",
    ]
    assert [f.unit for f in result.figures] == ["ms", "ms", "req/s", "ms", "ms", "ms"]
    assert str(result.figures[5].target) == "≤ 1.05"
