"""Half-price runs through a provider's batch API: the same command, the same rows, `mode="batch"`.

The provider emulator plays Anthropic here (the real SDK, no network), with batches that finish
as soon as they are looked at and a tenth of their requests failed (a real batch takes minutes
to hours, and `poll_interval` says how often to look). The failed rows are asked online, and
every row still gets its own answer: results are matched by custom id, never by position.
"""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from alloy import command
from alloy.testing.emulator import Emulator


@dataclass
class Review:
    sentiment: str
    stars: int


REVIEWS = [f"Review {n}: {('great', 'awful', 'fine')[n % 3]} product" for n in range(60)]

with tempfile.TemporaryDirectory() as folder, Emulator() as emu:
    os.environ.update(emu.env())  # every SDK in this process talks to the emulator
    emu.batch_options(fail=0.1, seed=1)

    @command(output=Review, model="anthropic:claude-haiku-4-5")
    def review(text: str) -> str:
        return f"Rate this review: {text}"

    checkpoint = Path(folder) / "reviews.sqlite"  # jobs and rows survive a crash: run again
    rows = review.map(REVIEWS, mode="batch", checkpoint=checkpoint, poll_interval=0.1)
    reviews = [row.value for row in rows]
    summary = rows.summary
    assert summary is not None and len(reviews) == 60 and summary.failed == 0
    (online,) = review.map(REVIEWS[:1])  # one row online, for its price
    one = online.cost or 0.0
    print(f"{summary.rows} reviews through {len(emu.batches.jobs)} batch job(s)")
    print(
        f"cost ${summary.cost:.6f}, against ${one * 60:.6f} online (batched tokens at half price)"
    )
    print(f"first: {reviews[0]}")
