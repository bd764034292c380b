"""Suite 1: warm overhead of a command over the same request made with the raw SDK.

Per provider and driver, an alloy command and its raw-SDK twin (see ``_subjects``) call the
same emulator one at a time, interleaved, after a warm-up that builds clients and pools. The
ratio of median latencies is alloy's whole cost on top of the SDK: settings resolution, the
engine, the adapter's request building and response parsing, and validation (which the raw
side does too).
"""

from __future__ import annotations

import asyncio
import time

from ._measure import Figure, SuiteResult, Target, ainterleave, compare, interleave, median
from ._scale import Scale
from ._subjects import CASES, Case, pointing_at, same_request

TARGET = Target("max", 1.05)


def _sync(case: Case, scale: Scale) -> Figure:
    command = case.command()
    raw = case.raw_sync()
    a, b = interleave(
        lambda: command("Ada"), lambda: raw("Ada"), n=scale.warm_calls, warmup=scale.warm_warmup
    )
    return compare(
        "warm", f"{case.label}, sync", a, b, baseline_label=f"raw {case.sdk} SDK", target=TARGET
    )


def _split(case: Case, scale: Scale) -> str:
    """Where alloy's extra time goes, sync: the adapter path alone vs the rest (the core).

    "Adapter path" is the model's ``request()`` on a prebuilt Request plus validation: request
    building, the SDK call, turning the SDK's reply into alloy's Response, and parsing. The
    rest -- settings, the engine, transcript and result -- is the core.
    """
    command = case.command()
    raw = case.raw_sync()
    prepared = command.prepare()
    model = prepared.model
    engine = prepared.start(("Ada",))
    request = next(engine).request  # no listener and no rail: the request comes first
    engine.close()

    def adapter() -> object:
        return command.output_type.parse(model.request(request).text)

    n, warmup = max(scale.warm_calls // 2, 2), scale.warm_warmup
    full, alone = interleave(lambda: command("Ada"), adapter, n=n, warmup=warmup)
    alone_again, direct = interleave(adapter, lambda: raw("Ada"), n=n, warmup=warmup)
    core = (median(full) - median(alone)) * 1e6
    adapter_cost = (median(alone_again) - median(direct)) * 1e6
    return (
        f"{case.label}, sync: of alloy's extra time, the adapter path adds {adapter_cost:+.0f} µs "
        f"over the raw call and the core {core:+.0f} µs over the adapter path "
        f"({n} interleaved pairs each)."
    )


def _async(case: Case, scale: Scale) -> Figure:
    command = case.command()

    async def measure() -> tuple[list[float], list[float]]:
        raw = case.raw_async()
        return await ainterleave(
            lambda: command.acall("Ada"),
            lambda: raw("Ada"),
            n=scale.warm_calls,
            warmup=scale.warm_warmup,
        )

    a, b = asyncio.run(measure())
    return compare(
        "warm", f"{case.label}, async", a, b, baseline_label=f"raw {case.sdk} SDK", target=TARGET
    )


def run(root: str, scale: Scale, *, providers: tuple[str, ...] | None = None) -> SuiteResult:
    """Measure every provider whose SDK and adapter are installed, against the emulator at root.

    Keys and base URLs come from the SDKs' usual environment variables, set for the suite.
    """
    started = time.perf_counter()
    result = SuiteResult("warm", "Warm overhead over the raw SDK")
    for case in CASES:
        if providers is not None and case.key not in providers:
            continue
        if not case.available():
            result.notes.append(f"{case.label}: skipped (SDK or adapter not installed).")
            continue
        same, how = same_request(case)
        result.details.append(f"{case.label} (`{case.alloy_model}`): request bodies {how}.")
        if not same:
            result.notes.append(
                f"{case.label}: alloy and the raw call send different bodies ({how})."
            )
        with pointing_at(root):
            result.figures.append(_sync(case, scale))
            result.figures.append(_async(case, scale))
            result.details.append(_split(case, scale))
    result.notes.append(
        f"{scale.warm_calls} calls per side per row after {scale.warm_warmup} warm-up pairs, "
        "one in flight, alternating alloy/raw (ABBA); emulator in its own process on loopback; "
        "keys and base URLs from the SDKs' environment variables on both sides. "
        "Interval: 95% paired bootstrap of the ratio of medians."
    )
    result.seconds = time.perf_counter() - started
    return result
