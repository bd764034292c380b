"""One side of the rows suite, in its own process: prints JSON.

``python -m benchmarks.rows_worker paced|gather ROOT ROWS CONCURRENCY`` runs ROWS calls against
an emulator that keeps OpenAI Chat to a rate limit: ``paced`` through ``cmd.amap`` (which learns
the limit from the reply headers), ``gather`` as users hand-write it, ``asyncio.gather`` with a
semaphore over the raw async SDK (its own retries on, as by default, honouring retry-after).

``python -m benchmarks.rows_worker memory ROWS`` runs ROWS rows through ``cmd.map`` on the
offline model and reports this process's peak RSS.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

from ._subjects import CASES, emulator_env
from .concurrency_worker import rss_mb


async def paced(rows: int, concurrency: int) -> dict[str, Any]:
    case = next(c for c in CASES if c.key == "openai-chat")
    command = case.command()
    started = time.perf_counter()
    run = command.amap((f"Ada {i}" for i in range(rows)), concurrency=concurrency, progress=False)
    failed = 0
    async for row in run:
        failed += not row.ok
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "failed": failed}


async def gather(rows: int, concurrency: int) -> dict[str, Any]:
    import openai

    from ._subjects import PERSON, SCHEMA, prompt

    client = openai.AsyncOpenAI()  # the SDK's own retries, as users get them
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Any:
        async with gate:
            response = await client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": prompt(f"Ada {i}")}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "Person", "schema": SCHEMA, "strict": True},
                },
            )
            return PERSON.validate_json(response.choices[0].message.content or "", strict=True)

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(i) for i in range(rows)), return_exceptions=True)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "failed": sum(isinstance(o, BaseException) for o in outcomes)}


def memory(rows: int) -> dict[str, Any]:
    from alloy import command

    @command(output=int, model="offline")
    def count(word: str) -> str:
        return f"How many letters in {word}?"

    started = time.perf_counter()
    done = sum(row.ok for row in count.map((f"w{i}" for i in range(rows)), progress=False))
    return {"seconds": time.perf_counter() - started, "ok": done, "rss_peak_mb": rss_mb()}


if __name__ == "__main__":
    side = sys.argv[1]
    if side == "memory":
        print(json.dumps(memory(int(sys.argv[2]))))
    else:
        root, rows, concurrency = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        os.environ.update(emulator_env(root))
        work = paced if side == "paced" else gather
        print(json.dumps(asyncio.run(work(rows, concurrency))))
