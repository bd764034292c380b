"""The seam below ``Command``: a call prepared once (``prepare``) and started many times
(``Prepared.start``), each start an engine any driver steps (see ``alloy._call``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import alloy
import alloy.rails
from alloy import configure
from alloy._call import NO_DEPS, Prepared, prepare
from alloy._engine import CallModel
from alloy._types import Response, Text, Usage, UserTurn
from alloy.errors import ConfigurationError
from alloy.rows import Ok, Settings
from alloy.testing import override_model, script


@alloy.command
def greet(name: str) -> str:
    return f"Say hello to {name}."


@alloy.command
def greet_with(name: str, deps: Any) -> str:
    return f"Say hello to {name} from {deps}."


def finished(engine: Any, reply: Response) -> Any:
    with pytest.raises(StopIteration) as stop:
        engine.send(reply)
    return stop.value.value


def test_a_prepared_call_starts_engines_whose_first_effect_is_the_request() -> None:
    configure(model="offline")
    prepared = prepare(greet.spec)
    assert isinstance(prepared, Prepared) and prepared.plan.model == "offline"
    for name in ("Ada", "Grace"):
        engine = prepared.start((name,))
        effect = next(engine)  # nobody listens and no rail: the request comes first
        assert isinstance(effect, CallModel)
        assert effect.request.messages == (UserTurn((Text(f"Say hello to {name}."),)),)
        reply = Response((Text(f"Hello, {name}!"),), usage=Usage(requests=1))
        assert finished(engine, reply).value == f"Hello, {name}!"


def test_the_options_given_to_prepare_are_the_per_call_layer() -> None:
    configure(model="offline", temperature=0.3)
    assert prepare(greet.spec).plan.config.temperature == 0.3
    assert prepare(greet.spec, {"temperature": 0.9}).plan.config.temperature == 0.9


def test_history_is_the_engines_and_deps_stay_with_the_started_call() -> None:
    configure(model="offline")
    earlier = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    engine = prepare(greet.spec).start(("Ada",), {"history": earlier})
    request = next(engine).request
    assert [m.parts for m in request.messages][-1] == (Text("Say hello to Ada."),)
    assert len(request.messages) == 3
    call = prepare(greet.spec).begin(("Ada",), {"deps": "db"})
    assert call.deps == "db"
    # A prompt function with its own ``deps`` parameter is given them instead.
    own = prepare(greet_with.spec).begin(("Ada",), {"deps": "db"})
    assert own.deps is NO_DEPS
    assert next(own.engine).request.messages[-1].parts == (Text("Say hello to Ada from db."),)


def test_a_command_keeps_its_prepared_calls_while_nothing_they_came_from_changes() -> None:
    configure(model="offline")
    first = greet.prepare()
    assert greet.prepare() is first
    assert greet.prepare(stream=True) is not first
    assert greet.prepare() is first  # a streamed call does not push out the whole one
    configure(temperature=0.2)
    assert greet.prepare() is not first and not first.current()


def test_every_call_form_runs_through_the_prepared_call() -> None:
    model = script("one", "two")
    with override_model(model):
        assert greet("Ada") == "one"
        assert "".join(greet.stream("Grace")) == "two"
    assert [r.messages[-1].parts for r in model.requests] == [
        (Text("Say hello to Ada."),),
        (Text("Say hello to Grace."),),
    ]


def test_map_takes_its_settings_as_one_object() -> None:
    settings = Settings(concurrency=2, progress=False)
    with override_model(script("a", "b", "c")):
        rows = list(greet.map(["x", "y", "z"], settings=settings))
    assert sorted(row.value for row in rows if isinstance(row, Ok)) == ["a", "b", "c"]


def test_map_refuses_settings_with_keywords_beside_them() -> None:
    settings = Settings(concurrency=2)
    with pytest.raises(ConfigurationError, match=r"settings= and concurrency=, rpm= too"):
        greet.map(["x"], settings=settings, concurrency=3, rpm=10)
    with pytest.raises(ConfigurationError, match=r"takes an alloy.rows.Settings, got dict"):
        greet.map(["x"], settings={"concurrency": 2})  # type: ignore[arg-type]


def test_a_call_is_stepped_to_its_request_and_resumed_with_a_reply_from_elsewhere() -> None:
    """What a batch run does: the request goes out by another road, and a fresh call of the
    row is sent its answer; an input rail has run before the request either way."""
    shout = alloy.rails.input_rail(lambda text: text.upper())

    @alloy.command(model="offline", rails=[shout])
    def loud(name: str) -> str:
        return f"hello {name}"

    async def stepped() -> tuple[Any, Any]:
        prepared = loud.prepare()
        call = await prepared.abegin(("ada",), {})
        first = await call.astep()
        again = await prepared.abegin(("ada",), {})
        assert (await again.astep()) == first  # the same request, made again
        reply = Response((Text("Hi, Ada."),), usage=Usage(requests=1))
        return first, await again.arun(reply)

    first, result = asyncio.run(stepped())
    assert isinstance(first, CallModel)
    assert first.request.messages[-1].parts == (Text("HELLO ADA"),)
    assert result.value == "Hi, Ada."
