"""The core types made on every call: plain frozen dataclasses that check what a reply said."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, fields, replace

import pytest

from alloy._engine import CallModel
from alloy._types import Request, Response, Result, Text, Transcript, Usage


def test_the_core_types_stay_frozen_and_survive_pickling() -> None:
    made = [Text("hi"), Usage(1, 2), Response((Text("a"),)), Transcript(), Request("m", ())]
    for item in made:
        with pytest.raises(FrozenInstanceError):
            setattr(item, fields(item)[0].name, None)
        assert pickle.loads(pickle.dumps(item)) == item
        assert copy.deepcopy(item) == item
    result = Result(1, "1", Transcript())
    with pytest.raises(FrozenInstanceError):
        result.value = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(result)) == result
    assert replace(result, value=3).value == 3
    assert CallModel(Request("m", ())) == CallModel(Request("m", ()))


def test_a_result_can_be_made_through_its_generic_alias() -> None:
    result = Result[int](1, "1", Transcript())
    assert result.value == 1 and result.cost is None and result.reports == ()


def test_the_core_types_check_their_fields() -> None:
    with pytest.raises(TypeError, match="token count"):
        Usage("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="finish reason"):
        Response((), finish_reason="done")  # type: ignore[arg-type]
    assert Response(()).provider_details == {}
    assert Response(()).usage == Usage()
