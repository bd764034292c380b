"""Suite 2: in-process cost per call with no network, against alloy-ai 0.3.1 and instructor.

Each library runs in a worker script in its own virtual environment (alloy-ai's import name is
``alloy`` too), in a fresh process, alternating with the others for several rounds; each worker
times batches of calls and prints JSON. The workers say exactly what each case does; the three
tiers are:

* **fake model** -- alloy's built-in offline model (generates a schema-valid value per call) vs
  alloy-ai's fake backend (builds a value from the schema per call). instructor has no fake
  model, so its row uses its **canned** tier.
* **canned reply** -- the library's whole pipeline over a model that returns one prebuilt reply
  (alloy: a Model object returning a Response; instructor: a ``chat.completions.create``
  returning a ChatCompletion). This is the library's own work and nothing else.
* **SDK over a mock transport** -- through the real ``openai`` SDK with an httpx MockTransport,
  next to the raw SDK over the same transport in the same venv (SDK versions differ per venv).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ._measure import Figure, SuiteResult, Target, median
from ._scale import Scale

WORKERS = Path(__file__).parent / "workers"
TARGET = Target("max", 1.0, strict=True)

#: (figure name, alloy case, peer, peer case, target)
ROWS: tuple[tuple[str, str, str, str, Target | None], ...] = (
    ("float, fake model", "fake_float", "alloy-ai", "fake_float", TARGET),
    ("Person, fake model", "fake_person", "alloy-ai", "fake_person", TARGET),
    ("float, offline vs canned", "fake_float", "instructor", "canned_float", TARGET),
    ("Person, offline vs canned", "fake_person", "instructor", "canned_person", TARGET),
    ("float, canned model vs fake backend", "canned_float", "alloy-ai", "fake_float", None),
    ("Person, canned model vs fake backend", "canned_person", "alloy-ai", "fake_person", None),
    ("float, canned reply", "canned_float", "instructor", "canned_float", None),
    ("Person, canned reply", "canned_person", "instructor", "canned_person", None),
    (
        "Person, openai SDK + mock (Responses)",
        "sdk_responses_person",
        "alloy-ai",
        "sdk_responses_person",
        None,
    ),
    ("Person, openai SDK + mock (Chat)", "sdk_chat_person", "instructor", "sdk_chat_person", None),
)
SDK_BASELINES = {
    "sdk_responses_person": "raw_responses_person",
    "sdk_chat_person": "raw_chat_person",
}


def _worker(python: str, script: str, scale: Scale) -> dict[str, Any]:
    """Run one worker in a fresh process (cwd outside the repo, so ``alloy`` is the venv's)."""
    done = subprocess.run(
        [python, str(WORKERS / script), str(scale.inproc_batch), str(scale.inproc_batches)],
        capture_output=True,
        text=True,
        cwd=WORKERS,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run(scale: Scale, peers: dict[str, str]) -> SuiteResult:
    """``peers`` maps a peer's name (``alloy-ai``, ``instructor``) to its venv's python."""
    started = time.perf_counter()
    result = SuiteResult("inprocess", "In-process overhead, no HTTP")
    workers = {"alloy": (sys.executable, "inproc_alloy.py")}
    scripts = {"alloy-ai": "inproc_alloy_ai.py", "instructor": "inproc_instructor.py"}
    for name, python in peers.items():
        workers[name] = (python, scripts[name])
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in workers}
    meta: dict[str, dict[str, Any]] = {}
    order = list(workers)
    for round_ in range(scale.inproc_rounds):
        for name in order[round_ % len(order) :] + order[: round_ % len(order)]:
            python, script = workers[name]
            report = _worker(python, script, scale)
            meta[name] = report
            for case, values in report["cases"].items():
                samples[name].setdefault(case, []).extend(values)
    count = scale.inproc_rounds * scale.inproc_batches
    how = f"{count} batches of {scale.inproc_batch} calls per side, {scale.inproc_rounds} processes each"
    for label, mine, peer, theirs, target in ROWS:
        if peer not in samples or theirs not in samples[peer]:
            continue
        a, b = samples["alloy"][mine], samples[peer][theirs]
        result.figures.append(
            Figure("inprocess", label, median(a), median(b), peer, "µs", how, target)
        )
    for name, report in meta.items():
        notes = "; ".join(f"{k}: {v}" for k, v in report.get("notes", {}).items())
        result.details.append(f"{name} {report['version']} ({report['sdk']}). {notes}")
        for case, baseline in SDK_BASELINES.items():
            if case in samples[name] and baseline in samples[name]:
                mine_us, raw_us = median(samples[name][case]), median(samples[name][baseline])
                result.details.append(
                    f"{name}, `{case}`: {mine_us:.0f} µs vs the raw SDK in the same venv "
                    f"{raw_us:.0f} µs (+{mine_us - raw_us:.0f} µs, ratio {mine_us / raw_us:.2f})."
                )
    missing = sorted(set(scripts) - set(peers))
    if missing:
        result.notes.append(f"Skipped (not installed): {', '.join(missing)}.")
    result.notes.append(
        "Median µs per call over batches; each library in its own process and venv, alternating "
        f"({how}). Rows marked 'offline vs canned' compare alloy's offline model, which "
        "generates a value per call, with instructor's canned reply, which generates nothing."
    )
    result.seconds = time.perf_counter() - started
    return result
