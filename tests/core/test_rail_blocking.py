"""``blocking=True`` rails (issue 33 item 3): a synchronous rail runs inline, on the event loop
under ``acall``; one marked blocking runs in a worker thread there, so the loop keeps serving
while it waits. Plain calls run every rail inline. The flag travels with the rail."""

from __future__ import annotations

import asyncio
import pickle
import threading
from dataclasses import dataclass
from typing import Any

import cloudpickle
import pytest

from alloy import ConfigurationError, Context, RailBlocked, command
from alloy.rails import Block, Rail, input_rail, output_rail, tool_rail
from alloy.testing import FunctionModel, override_model, script


@input_rail(blocking=True)
def slow_screen(text: str) -> Block | None:
    return Block("no") if "forbidden" in text else None


def plain_screen(text: str) -> None:
    return None


@dataclass
class Tenant:
    name: str


def echo(rails: list[Any]) -> Any:
    @command(rails=rails)
    def talk(text: str) -> str:
        return text

    return talk


def test_a_blocking_rail_lets_the_loop_run_while_it_waits() -> None:
    """The rail waits until a coroutine on the loop releases it: inline, it would stall the
    loop and never be released (it gives up after a while and says so)."""
    released = threading.Event()
    threads: list[int] = []

    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        entered = asyncio.Event()

        @input_rail(blocking=True)
        def waits(text: str) -> Block | None:
            threads.append(threading.get_ident())
            loop.call_soon_threadsafe(entered.set)
            return None if released.wait(timeout=10) else Block("the loop stalled")

        async def release() -> str:
            await entered.wait()
            released.set()
            return "released"

        with override_model(script("ok")):
            return list(await asyncio.gather(echo([waits]).acall("hi"), release()))

    loop_thread = threading.get_ident()  # asyncio.run runs the loop on this thread
    assert asyncio.run(main()) == ["ok", "released"]
    assert threads and threads[0] != loop_thread


def test_a_synchronous_rail_not_marked_blocking_runs_on_the_loop_thread() -> None:
    seen: list[tuple[int, bool]] = []

    def on_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    @input_rail
    def look_in(text: str) -> None:
        seen.append((threading.get_ident(), on_loop()))

    @output_rail
    def look_out(value: object) -> None:
        seen.append((threading.get_ident(), on_loop()))

    async def main() -> tuple[Any, int]:
        with override_model(script("ok")):
            return await echo([look_in, look_out]).acall("hi"), threading.get_ident()

    answer, loop_thread = asyncio.run(main())
    assert answer == "ok"
    assert seen == [(loop_thread, True), (loop_thread, True)]


def test_a_blocking_rail_runs_inline_in_a_plain_call_and_still_blocks() -> None:
    seen: list[int] = []

    @output_rail(blocking=True)
    def look(value: object) -> Block | None:
        seen.append(threading.get_ident())
        return Block("not that") if value == "bad" else None

    with override_model(script("ok", "bad")):
        assert echo([look])("hi") == "ok"
        with pytest.raises(RailBlocked, match="not that"):
            echo([look])("hi")
    assert seen == [threading.get_ident()] * 2


def test_a_blocking_rail_blocks_rewrites_and_sees_deps_under_acall() -> None:
    seen: list[str] = []

    @input_rail(blocking=True)
    def tag(text: str, ctx: Context[Tenant]) -> str:
        seen.append(ctx.deps.name)
        return f"{text} for {ctx.deps.name}"

    model = FunctionModel(lambda request: "ok")

    async def main() -> Any:
        with override_model(model):
            answer = await echo([tag]).acall("hi", deps=Tenant("acme"))
            with pytest.raises(RailBlocked, match="no"):
                await echo([slow_screen]).acall("forbidden")
            return answer

    assert asyncio.run(main()) == "ok"
    assert seen == ["acme"] and len(model.requests) == 1
    assert "hi for acme" in repr(model.requests[0])


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_the_flag_survives_pickling(dumps: Any) -> None:
    assert pickle.loads(dumps(slow_screen)) is slow_screen  # by reference: the module's own
    by_parts = Rail("input", "plain", plain_screen, blocking=True)
    again = pickle.loads(dumps(by_parts))
    assert again == by_parts and again.blocking is True


def test_a_local_blocking_rail_travels_by_value_with_its_flag() -> None:
    @tool_rail(blocking=True)
    def guard(call: Any, result: Any) -> None:
        return None

    again = pickle.loads(cloudpickle.dumps(guard))
    assert again.blocking is True and again.kind == "tool" and again.name == "guard"


def test_the_flag_shows_in_the_repr() -> None:
    assert "blocking=True" in repr(slow_screen)
    assert "blocking=False" in repr(input_rail(plain_screen))


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_bad_blocking_value_is_a_clear_error(value: Any) -> None:
    with pytest.raises(
        ConfigurationError, match=r"rail 'plain_screen': blocking must be True or False"
    ):
        input_rail(plain_screen, blocking=value)


def test_an_async_rail_marked_blocking_is_refused_with_the_reason() -> None:
    async def lookup(text: str) -> None:
        return None

    with pytest.raises(ConfigurationError, match="is async: blocking=True is for synchronous"):
        input_rail(blocking=True)(lookup)


def test_a_rail_s_signature_is_read_once_not_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cheap rail must stay cheap (issue 33: one rail adds at most 5% to p50): reading its
    signature on every call cost more than the check itself."""
    import inspect

    read: list[object] = []
    signature = inspect.signature

    def counted(fn: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        read.append(fn)
        return signature(fn, *args, **kwargs)

    @input_rail
    def screen(text: str, media: Any) -> None:
        return None

    monkeypatch.setattr(inspect, "signature", counted)
    with override_model(script("ok", "ok")):
        assert echo([screen])("hi") == "ok"
        assert asyncio.run(echo([screen]).acall("hi")) == "ok"
    assert screen.fn not in read


def test_an_unmarked_rail_that_holds_the_loop_is_named_once_with_the_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A synchronous rail that waits on I/O but is not marked blocking stalls every call the
    loop serves: alloy cannot know beforehand, so it says so the first time one does."""
    import time

    @input_rail(name="waits-on-io-unmarked")
    def waits(text: str) -> None:
        time.sleep(0.15)  # longer than SLOW_RAIL_SECONDS (0.1 s), however fast the machine

    @input_rail(name="waits-on-io-marked", blocking=True)
    def marked(text: str) -> None:
        time.sleep(0.15)

    async def main() -> None:
        with override_model(script("ok", "ok")):
            talk = echo([waits, marked])
            await talk.acall("hi")
            await talk.acall("hi again")

    with caplog.at_level("WARNING", logger="alloy"):
        asyncio.run(main())
    slow = [r.getMessage() for r in caplog.records if "held the event loop" in r.getMessage()]
    assert len(slow) == 1
    assert "'waits-on-io-unmarked'" in slow[0] and "blocking=True" in slow[0]
