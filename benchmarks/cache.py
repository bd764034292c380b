"""Suite: what a response-cache hit costs, beside the round trip it saves.

Four comparisons, each interleaved (ABBA) in this process:

- a whole command call answered from the cache (SQLite file, and memory) against the same call
  made to the emulator with the cache off: a warm round trip through the real SDK, loopback
  only, so the cheapest round trip a provider call can be. The same call is hit again and again,
  so what a command keeps of its last hit (the request's key, the decoded entry) is reused;
- a hit of a request this process has not asked before (a new prompt each time, stored
  beforehand), against the same round trip (no target: what a rerun of a script pays);
- the same hit against the raw SDK making the call (no target: for scale);
- the hit path alone on a large stored reply (~100 KB: the key, the store lookup, decoding the
  entry, parsing and validating the value) against a bare ``TypeAdapter.validate_json`` of
  that reply, the least any cache that stores raw replies and re-validates them can do.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._measure import Figure, SuiteResult, Target, compare, interleave
from ._scale import Scale
from ._subjects import CASES, Case, pointing_at

HIT_VS_ROUND_TRIP = Target("max", 0.05)
HIT_VS_VALIDATE = Target("max", 2.0)
BIG_ITEMS = 1500  # ~100 KB of JSON


@dataclass
class Row:
    sku: str
    title: str
    price: float
    tags: list[str]


def _case() -> Case | None:
    return next((case for case in CASES if case.key == "openai-chat" and case.available()), None)


def _round_trips(case: Case, location: str, scale: Scale) -> list[Figure]:
    uncached = case.command().with_options(temperature=0)
    cached = uncached.with_options(cache=location)
    cached("Ada")  # stored now; every timed call below is a hit
    assert cached.run("Ada").cached
    n, warmup = scale.warm_calls, scale.warm_warmup
    hit, trip = interleave(lambda: cached("Ada"), lambda: uncached("Ada"), n=n, warmup=warmup)
    raw = case.raw_sync()
    hit_again, direct = interleave(lambda: cached("Ada"), lambda: raw("Ada"), n=n, warmup=warmup)
    kind = location.split(":", 1)[0] if location == "memory" else "SQLite"
    return [
        compare(
            "cache",
            f"{case.label}, hit ({kind}) vs warm round trip",
            hit,
            trip,
            baseline_label="same command, cache off, to the emulator",
            target=HIT_VS_ROUND_TRIP,
        ),
        compare(
            "cache",
            f"{case.label}, hit ({kind}) vs raw SDK",
            hit_again,
            direct,
            baseline_label=f"raw {case.sdk} SDK to the emulator",
        ),
    ]


def _first_hits(case: Case, location: str, scale: Scale) -> Figure:
    """Each timed hit asks for a prompt no call of this process has asked since it was stored,
    so the key is built and hashed and the entry read and decoded afresh."""
    uncached = case.command().with_options(temperature=0)
    storing = uncached.with_options(cache=location)
    n, warmup = scale.warm_calls, scale.warm_warmup
    prompts = [f"Ada the {number}th" for number in range(n + warmup)]
    for prompt in prompts:
        storing(prompt)
    hitting = uncached.with_options(cache=location)
    assert hitting.run(prompts[0]).cached
    fresh = iter(prompts[1:])  # the first was just hit
    hit, trip = interleave(
        lambda: hitting(next(fresh)), lambda: uncached("Ada"), n=n, warmup=warmup - 1
    )
    kind = "memory" if location == "memory" else "SQLite"
    return compare(
        "cache",
        f"{case.label}, first hit ({kind}) vs warm round trip",
        hit,
        trip,
        baseline_label="same command, cache off, to the emulator",
        note="a new prompt each time: nothing of an earlier hit is reused",
    )


def _hit_path(case: Case, location: str, scale: Scale) -> Figure:
    """The hit path on a large reply, against a bare ``validate_json`` of it."""
    from pydantic import TypeAdapter

    from alloy import command
    from alloy._types import ModelSettings, Request, Response, Text, UserTurn
    from alloy.cache import CachedModel, CachePolicy, new_store
    from alloy.cache._codec import Entry, encode

    @command(output=list[Row], model=case.alloy_model, temperature=0)
    def rows(subject: str) -> str:
        return subject

    rows_json = TypeAdapter(list[Row]).dump_json(
        [Row(f"sku-{i}", f"Item number {i}", i * 1.25, ["a", "b"]) for i in range(BIG_ITEMS)]
    )
    reply_text = '{"value":' + rows_json.decode() + "}" if _wrapped(rows) else rows_json.decode()
    store = new_store(location)
    inner = rows.prepare().model  # the adapter itself: no cache is set here
    request = Request(
        inner.model_id,
        (UserTurn(Text("Ada")),),
        output=None,
        settings=ModelSettings(temperature=0),
    )
    hit_model = CachedModel(inner, CachePolicy(store), rows.output_type.schema)
    stored = encode(Entry(Response((Text(reply_text),))))
    assert stored is not None
    store.put(hit_model.key(request, stream=False), stored, None)
    parse = rows.output_type.parse
    bare = TypeAdapter(list[Row])

    def hit() -> Any:
        return parse(hit_model.request(request).text)

    def validate() -> Any:
        return bare.validate_json(rows_json)

    assert len(hit()) == BIG_ITEMS
    n = max(scale.warm_calls // 4, 3)
    a, b = interleave(hit, validate, n=n, warmup=max(scale.warm_warmup // 4, 1))
    store.close()
    size = len(reply_text) // 1024
    return compare(
        "cache",
        f"hit path on a {size} KB reply vs validate_json",
        a,
        b,
        baseline_label="bare TypeAdapter.validate_json of the stored reply",
        target=HIT_VS_VALIDATE,
    )


def _wrapped(cmd: Any) -> bool:
    """Whether the output type reads a list inside an object (``{"value": [...]}``)."""
    schema = cmd.output_type.schema or {}
    return schema.get("type") == "object"


def run(root: str, scale: Scale) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("cache", "Response cache: a hit against the round trip it saves")
    case = _case()
    if case is None:
        result.notes.append("skipped: the OpenAI SDK or alloy's openai-chat adapter is missing")
        return result
    with tempfile.TemporaryDirectory() as folder, pointing_at(root):
        sqlite = f"sqlite:///{Path(folder) / 'replies.sqlite'}"
        for location in (sqlite, "memory"):
            result.figures.extend(_round_trips(case, location, scale))
        for location in (sqlite, "memory"):
            result.figures.append(_first_hits(case, location, scale))
        result.figures.append(_hit_path(case, str(Path(folder) / "big.sqlite"), scale))
    result.notes.append(
        f"{case.label} (`{case.alloy_model}`), temperature 0. A hit still resolves settings, "
        "builds the wire body to key it, reads the store, and parses and validates the value; "
        "the round trip adds the SDK call over loopback to the emulator in its own process."
    )
    result.seconds = time.perf_counter() - started
    return result
