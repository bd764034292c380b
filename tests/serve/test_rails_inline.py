"""Synchronous rails run inline on the server's event loop, not in a worker thread (issue 33
item 3): a thread per rail cost a served request 11% of its p50. A rail marked blocking still
goes to a worker thread."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from alloy.rails import Block, input_rail, output_rail
from alloy.serve import RailConfig
from alloy.testing.emulator import ReplyText


def test_a_synchronous_rail_runs_on_the_event_loop(on_emulator: Any, start: Any) -> None:
    on_emulator.push("openai", ReplyText("fine"))
    on_loop: list[bool] = []

    def running_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread has no running loop
            return False
        return True

    @input_rail
    def look_in(text: str) -> Block | None:
        on_loop.append(running_loop())
        return None

    @output_rail
    def look_out(value: object) -> Block | None:
        on_loop.append(running_loop())
        return None

    url = start({"gate": RailConfig("gate", rails=[look_in, look_out])})
    answer = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "gate", "messages": [{"role": "user", "content": "hi"}]},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    assert on_loop == [True, True]


def test_a_rail_marked_blocking_runs_in_a_worker_thread(on_emulator: Any, start: Any) -> None:
    on_emulator.push("openai", ReplyText("fine"))
    on_loop: list[bool] = []

    def running_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    @input_rail(blocking=True)
    def looks_up(text: str) -> Block | None:
        on_loop.append(running_loop())
        return None

    url = start({"gate": RailConfig("gate", rails=[looks_up])})
    answer = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "gate", "messages": [{"role": "user", "content": "hi"}]},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    assert on_loop == [False]  # a worker thread has no running loop
