"""A command over a Ray Dataset: two actors label 60 tickets, sharing one rate limit.

A local Ray cluster of two CPUs runs `alloy.ray.CommandBatches` in two actors, each with its own
warm SDK client; the provider emulator plays OpenAI (the real SDK, no network) with a limit of
1,200 requests a minute, stated in its replies' headers. The actors share a `RayBudget`, so
together they keep within the limit instead of each sending its own full share. Needs
`pip install 'alloy[ray]'` (`make run` installs it); without Ray the example says so and fails.
"""

import os
import sys
from dataclasses import dataclass

try:
    import ray
    from ray.data import ActorPoolStrategy, DataContext
except ImportError:
    sys.exit("Ray is not installed: pip install 'alloy[ray]' to run this example.")

from alloy import command
from alloy.ray import CommandBatches, RayBudget, typed
from alloy.testing.emulator import Emulator

TICKETS = [
    {"id": n, "ticket": f"Ticket {n}: the {('printer', 'VPN', 'invoice', 'laptop')[n % 4]} broke"}
    for n in range(60)
]


@dataclass
class Label:
    category: str
    urgent: bool


@command(output=Label, model="openai:gpt-4o-mini")
def classify(ticket: str) -> str:
    return f"Label this support ticket: {ticket}"


with Emulator() as emu:
    os.environ.update(emu.env())  # Ray's workers start with this environment: the emulator's
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    limit = emu.rate_limit("openai", rpm=1200)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",  # this machine only
        configure_logging=False,
        log_to_driver=False,
    )
    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.wait_for_min_actors_s = 120

    labelled = ray.data.from_items(TICKETS).map_batches(
        CommandBatches,
        fn_constructor_args=(classify,),  # pickled by value: it is defined in this script
        fn_constructor_kwargs={"concurrency": 8, "budget": RayBudget()},
        compute=ActorPoolStrategy(size=2),
        batch_size=30,
        batch_format="pandas",
    )
    rows = sorted(labelled.take_all(), key=lambda row: row["id"])
    ray.shutdown()

    print("columns:", ", ".join(rows[0]))
    for row in rows[:3]:
        print(row["id"], typed(classify, row), "attempts:", row["attempts"])
    print(f"{sum(row['ok'] for row in rows)} of {len(rows)} rows labelled")
    print(f"the emulator admitted {limit.admitted} requests and refused {limit.refused}")
