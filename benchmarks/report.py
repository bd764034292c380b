"""Write ``results/report.md`` and ``results/chart.png`` from the suites' results."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._measure import Figure, SuiteResult
from .profiling import Profile

INTRO = """\
Every figure compares alloy with a baseline measured **side by side in the same run**
(interleaved calls, or alternating processes), because this is a shared 2-core machine and
absolute times drift with its load. The ratio is alloy / baseline: lower is better, except
for throughput. Medians are printed next to every ratio; intervals are 95% paired bootstrap
intervals of the ratio where calls were interleaved one by one. Where a target is missed,
the suite says where the time goes: the warm suite splits alloy's extra time into the adapter
path and the core, and the in-process suite separates each library's own work (canned reply)
from its fake model. Tests never assert times: the targets live here."""

#: What profiling showed on the hot path, and what the code does about it today.
FINDINGS = (
    (
        "Command: one plan per command while its sources hold",
        "Resolving the option layers, finding the model and deriving the request parts cost "
        "more than the rest of a call's own work. A command keeps its plan, model and driver "
        "runtime under a key of what they came from (the ALLOY_* variables, configure(), "
        "use_config(), the model cache and the listeners), so a call reads the environment "
        "but resolves nothing while that key holds.",
    ),
    (
        "Plan: request parts and schema dialects once per plan",
        "The output spec, the system prompt, the settings and the output and tool schemas in "
        "the provider's dialect (the descriptor's, applied by the plan) are worked out when a "
        "plan first sends a request and reused by its calls; adapters send them as they are.",
    ),
    (
        "Engine: build no events when nobody listens",
        "Without handlers or debug logging the engine builds no event and draws no call id, "
        "reads the clock only for a time budget, and returns the Result itself; a command "
        "without rails looks none up.",
    ),
    (
        "Command: check once, at decoration, whether the prompt function is async",
        "inspect.iscoroutinefunction does not run per call.",
    ),
    (
        "OpenAI, Anthropic, Gemini: read whole replies as raw wire JSON",
        "Each adapter parses the reply's JSON itself, so the SDK does not build its response "
        "models first: with_raw_response for OpenAI and Anthropic, and for Gemini a config with "
        "should_return_http_response (the same request on the wire), which takes Gemini's "
        "adapter path from above the raw SDK call to about 120 µs below it. google-genai does "
        "not follow continuation tokens for a body it hands back, so the adapter resumes such "
        "a generation through the SDK's own call and joins the hops as the SDK does.",
    ),
    (
        "Ollama: read whole replies as raw JSON through the SDK's request helper",
        "ollama-python's chat() returns a ChatResponse model and has no raw-reply API; the "
        "adapter sends its plain JSON body through the client's request helper and reads the "
        "reply's JSON, about 90k instructions a call under the raw chat() call.",
    ),
    (
        "Gemini: contents in the form google-genai validates fastest",
        "google-genai validates contents against a wide union: a prompt of one text goes as "
        "that string, another lone turn as one Content, a conversation as dicts (a list of "
        "Content objects costs it ~180 µs a turn); the body on the wire is the same.",
    ),
    (
        "Outputs: wrapped values validate through a TypedDict envelope",
        'A primitive output is validated inside {"value": ...}; a TypedDict envelope '
        "validates in half the time of the pydantic model it replaced.",
    ),
    (
        "Parsers: one Response per reply",
        "Stream parsers (also used for whole Ollama replies) build the Response once, with its "
        "provider details, instead of building one and copying it; a Response checks its field "
        "types without building tuples, and a price lookup copies no registry.",
    ),
    (
        "Offline model: a stand-in sampler with a cheap generator",
        "alloy/providers/offline/_sample.py walks the schema drawing from SplitMix64 seeded with the "
        "prompt's CRC-32 (alloy/providers/offline/_draws.py): a draw costs ~0.3 µs, where random.Random "
        "took ~4 µs to seed and ~1.5 µs a choice. The offline model binds its output's sampler "
        "once per plan: a flat record or wrapped primitive is drawn property by property, the "
        "values the walk makes, without walking the schema. The same prompt gets the same value "
        "in any process. The value is written with pydantic_core.to_json: 0.16 µs for a wrapped "
        "float and 0.28 µs for a five-field record, where json.dumps takes 1.3 and 1.6 µs.",
    ),
)

#: Every cache on the call path, with what the benchmarks showed when it was taken out.
CACHES = (
    "Kept: the provider registry's models (one per model, key and endpoint) and PerLoop's "
    "async clients (one per event loop): SDK clients and their connection pools live as long "
    "as the process.",
    "Kept: Command._prepared, the one plan cache (plan, model and runtime per command).",
    "Kept: Plan.request_parts, part of the plan cache. Worked out per call instead, it costs "
    "~126k instructions (1.4% of a Gemini call's client-side instructions) and moved Gemini's "
    "warm ratio by 2.5 to 3.6 points in interleaved A/B runs (+32 to +44 µs a call).",
    "Removed (issue 28): gemini.ConfigObjects; the GenerateContentConfig is validated per "
    "call. Targeted warm run: Gemini 0.972 -> 0.994 sync, 0.990 -> 0.986 async.",
    "Kept: _openai_common._KNOWN, the parameter names of each OpenAI resource's create(): "
    "inspect.signature takes ~82 µs per call, which moved the OpenAI Responses warm ratio by "
    "about 6 points (+70 to +77 µs).",
    "Removed: _schema.memoize_by_identity (an id()-keyed memo of the OpenAI and Ollama "
    "dialects): the plan applies every dialect once, so nothing needs it.",
    "Removed: Plan.budget and Plan.rails_by_kind: ~2k instructions a call, and rails only "
    "when a command has some (no published figure does); worked out when used.",
    "Removed: JsonOutput._validate_bare: a validator built only for a reply that is not the "
    '{"value": ...} envelope (a second reading, reached by no published figure); built then.',
    "Kept: the offline model's sampler, bound once per output (alloy/providers/offline/__init__.py). "
    "Walking the schema on every call instead measured 20.1 against 16.9 µs (Person) and 15.7 "
    "against 14.3 µs (float) in the in-process suite, moving those ratios by 13 and 9 points.",
    "Removed (issue 28): pricing._PriceBook.looked_up; every call scans the overrides and "
    "its provider's price table. Targeted warm run: every ratio moved under 2%.",
    "Removed (issue 28): the audit hook import alloy installed; the ALLOY_* variables are "
    "read from os.environ on every call. Targeted warm run: ratios moved 0.3 to 3.8%.",
    "Removed (issue 28): alloy/_frozen.py's quick_init; the core types are plain frozen "
    "dataclasses. Targeted warm run: ratios moved under 1%.",
    "Kept: CachedModel._keyed (the last request keyed, with its key and whether it is "
    "repeatable) and CachedModel._last (the last entry read, decoded). Targeted interleaved run "
    "(the cache suite's hit and round trip, 200 a side, 3 rounds): a repeated hit took 151 "
    "against 88 us (SQLite) and 120 against 65 us (memory) without them, moving the hit vs "
    "round trip ratio from about 0.06 to 0.10, far over 5%. Their key heads and schema text "
    "are made once when the model is built, as parts of every key.",
    "Removed (issue 28): CachedModel._repeatable (the settings object last judged repeatable); "
    "is_deterministic runs for each request keyed. The same targeted run: repeated hits 88 "
    "against 88 us, first hits 151 against 151 us (SQLite), under 3%.",
)

#: Seen while profiling and left as it is, with the reason.
LEFT_AS_IS = (
    "The environment: settings resolve per call, as documented, from the ALLOY_* variables "
    "as they are now, read from os.environ on every call (~10-14 µs with ~47 variables).",
    "Frozen records: they stay frozen, so a transcript can be shared and replayed; each "
    "plain frozen dataclass still checks "
    "its field types (a Usage's seven counts, a Response's finish reason and ids), because "
    "they hold what an untrusted reply said.",
    "Provider registry: `get_model()` hashes an explicit `api_key=` with SHA-256; it runs "
    "only when a command rebuilds its plan, not per call.",
    "Ollama keeps the SDK's private request helpers (Client._request_raw, Client._request): "
    "its public chat() drops tool schema keywords, takes no per-request timeout and returns "
    "a ChatResponse model; the emulator tests drive the helpers through the real SDK.",
)


def _ratio(f: Figure) -> str:
    text = f"{f.ratio:.3f}" if f.ratio < 10 else f"{f.ratio:.1f}"
    if f.ci is not None and f.ci[0] != f.ci[1]:
        text += f" ({f.ci[0]:.3f} to {f.ci[1]:.3f})"
    return text


def _value(value: float, unit: str) -> str:
    if unit in ("µs", "calls/s") or value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"


def _met(f: Figure) -> str:
    return {True: "yes", False: "**no**", None: ""}[f.met]


def _table(figures: Sequence[Figure], *, suite_column: bool) -> list[str]:
    head = "| Suite | Figure | alloy | baseline | ratio (95% CI) | target | met |"
    rule = "| --- | --- | ---: | ---: | ---: | :---: | :---: |"
    if not suite_column:
        head = head.replace("| Suite ", "", 1)
        rule = rule.replace("| --- ", "", 1)
    lines = [head, rule]
    for f in figures:
        cells = [
            f.name,
            _value(f.alloy, f.unit),
            f"{_value(f.baseline, f.unit)} ({f.baseline_label})",
            _ratio(f),
            str(f.target or ""),
            _met(f),
        ]
        if suite_column:
            cells.insert(0, f.suite)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _profile(p: Profile) -> list[str]:
    lines = [
        f"**{p.title}** — {p.calls} calls under cProfile: {p.per_call_us:,.0f} µs and "
        f"{p.functions_per_call:.0f} function calls per call (profiled, so inflated).",
        "",
        "| Where the time goes | share |",
        "| --- | ---: |",
    ]
    lines += [f"| {group} | {share:.0%} |" for group, share in p.shares]
    lines += ["", "| alloy function | own µs/call | cumulative µs/call |", "| --- | ---: | ---: |"]
    lines += [f"| `{name}` | {own:.1f} | {cum:.1f} |" for name, own, cum in p.top_alloy]
    return [*lines, ""]


def chart(figures: Sequence[Figure], path: Path, python: str | None, log: list[str]) -> bool:
    """Draw the PNG in the chart venv; False (with the reason in ``log``) when it cannot."""
    if python is None:
        return False
    rows = [
        {
            "label": f.name,
            "suite": f.suite,
            "ratio": f.ratio,
            "low": f.ci[0] if f.ci else None,
            "high": f.ci[1] if f.ci else None,
            "target": f.target.value if f.target else None,
            "met": f.met,
        }
        for f in figures
        if f.ratio > 0
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as data:
        json.dump(rows, data)
    script = Path(__file__).parent / "chart.py"
    done = subprocess.run(
        [python, str(script), data.name, str(path)], capture_output=True, text=True, check=False
    )
    Path(data.name).unlink()
    if done.returncode != 0:
        log.append(f"chart failed: {done.stderr[-500:]}")
        return False
    return True


def write(
    out: Path,
    suites: Sequence[SuiteResult],
    profiles: Sequence[Profile],
    environment: Sequence[str],
    problems: Sequence[str],
    chart_python: str | None,
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    figures = [f for s in suites if s.key != "changes" for f in s.figures]
    problems = list(problems)
    drawn = chart(figures, out / "chart.png", chart_python, problems)
    lines = ["# alloy benchmarks", "", INTRO, "", *[f"- {e}" for e in environment], ""]
    lines += ["## Summary", "", *_table(figures, suite_column=True), ""]
    if drawn:
        lines += ["![Every ratio with its interval and target](chart.png)", ""]
    for n, suite in enumerate((s for s in suites if s.key != "changes"), 1):
        lines += [f"## {n}. {suite.title}", ""]
        lines += [*suite.notes, ""] if suite.notes else []
        if suite.figures:
            lines += [*_table(suite.figures, suite_column=False), ""]
        lines += [f"- {d}" for d in suite.details]
        lines += ["", f"_{suite.seconds:.0f} s._", ""]
    lines += ["## Profile of the hot path", ""]
    for p in profiles:
        lines += _profile(p)
    lines += ["## What the profile showed and what changed", ""]
    lines += [f"- **{title}.** {why}" for title, why in FINDINGS]
    changes = next((s for s in suites if s.key == "changes"), None)
    if changes is not None:
        lines += [
            "",
            "Measured in this run, today's core against the core before those commits:",
            "",
        ]
        lines += [*changes.notes, ""]
        if changes.figures:
            lines += [*_table(changes.figures, suite_column=False), ""]
    lines += ["", "Seen and left as it is:", ""]
    lines += [f"- {o}" for o in LEFT_AS_IS]
    lines += ["", "## Caches on the call path", ""]
    lines += [f"- {c}" for c in CACHES]
    if problems:
        lines += ["", "## Problems during this run", "", *[f"- {p}" for p in problems]]
    report = out / "report.md"
    report.write_text("\n".join(lines).rstrip() + "\n")
    return report
