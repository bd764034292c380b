"""A command over a dataset: 200 tickets classified, paced to the provider's rate limit, resumed.

The provider emulator plays OpenAI here (the real SDK, no network) with a limit of 1,200
requests a minute, which it states in its replies' headers as OpenAI does. `map` reads the limit
from the first reply and keeps to it; the run then stops half-way (as Ctrl-C would) and a second
run takes the finished rows from the checkpoint and calls only the rest.
"""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from alloy import command
from alloy.testing.emulator import Emulator

TICKETS = [
    f"Ticket {n}: the {('printer', 'VPN', 'invoice', 'laptop')[n % 4]} is broken"
    for n in range(200)
]


@dataclass
class Label:
    category: str
    urgent: bool


with tempfile.TemporaryDirectory() as folder, Emulator() as emu:
    os.environ.update(emu.env())  # every SDK in this process talks to the emulator
    limit = emu.rate_limit("openai", rpm=1200)  # 20 requests a second
    checkpoint = Path(folder) / "tickets.sqlite"

    @command(output=Label, model="openai:gpt-4o-mini")
    def classify(ticket: str) -> str:
        return f"Label this support ticket: {ticket}"

    # The first run stops after 60 rows; every finished row is already in the checkpoint.
    with classify.map(TICKETS, concurrency=8, checkpoint=checkpoint) as rows:
        for row in rows:
            if row.index == 59:
                break

    rows = classify.map(TICKETS, concurrency=8, checkpoint=checkpoint)
    labels = [row.value for row in rows]  # every row succeeded here; a Failed row's value raises
    summary = rows.summary
    assert summary is not None and len(labels) == 200
    print(f"{summary.rows} rows: {summary.ok} ok, {summary.resumed} from the checkpoint")
    print(f"limits kept to: {summary.limits}")
    print(f"requests the emulator admitted: {limit.admitted}, answered 429: {limit.refused}")
    print(f"first label: {labels[0]}")
