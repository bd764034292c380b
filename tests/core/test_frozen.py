"""quick_init: the same constructor as @dataclass writes, storing fields through the slots."""

from __future__ import annotations

import copy
import inspect
import pickle
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields, replace
from typing import Generic, TypeVar

import pytest

from alloy._engine import CallModel
from alloy._frozen import quick_init
from alloy._types import Request, Response, Result, Text, Transcript, Usage

T = TypeVar("T")


@quick_init
@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    count: int = 1
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count must not be negative")


@dataclass(frozen=True, slots=True)
class Plain:
    name: str
    count: int = 1
    tags: list[str] = field(default_factory=list)


def test_it_takes_the_arguments_the_dataclass_constructor_takes() -> None:
    assert str(inspect.signature(Sample)) == str(inspect.signature(Plain))
    assert Sample("a") == Sample("a", 1, [])
    assert Sample("a", count=3).count == 3
    assert Sample(name="b", tags=["x"]).tags == ["x"]
    with pytest.raises(TypeError):
        Sample()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Sample("a", 1, [], "extra")  # type: ignore[call-arg]


def test_a_default_factory_makes_a_new_value_each_time() -> None:
    first, second = Sample("a"), Sample("b")
    assert first.tags == [] and first.tags is not second.tags


def test_post_init_still_runs() -> None:
    with pytest.raises(ValueError, match="negative"):
        Sample("a", -1)


def test_instances_stay_frozen_and_behave_as_dataclass_instances() -> None:
    sample = Sample("a", 2, ["t"])
    with pytest.raises(FrozenInstanceError):
        sample.count = 3  # type: ignore[misc]
    assert replace(sample, count=5) == Sample("a", 5, ["t"])
    assert pickle.loads(pickle.dumps(sample)) == sample
    assert copy.deepcopy(sample) == sample
    assert repr(sample) == "Sample(name='a', count=2, tags=['t'])"
    assert Sample.__init__.__qualname__ == "Sample.__init__"


@pytest.mark.parametrize("cls", [Text, Request, Usage, Response, Transcript, Result, CallModel])
def test_the_core_types_keep_their_constructor(cls: type) -> None:
    """Each type made on every call has one parameter per field, with the field's default."""
    parameters = inspect.signature(cls).parameters
    assert list(parameters) == [f.name for f in fields(cls)]
    for spec in fields(cls):
        default = parameters[spec.name].default
        if spec.default_factory is not MISSING:
            assert repr(default) == "<factory>"
        elif spec.default is MISSING:
            assert default is inspect.Parameter.empty
        else:
            assert default == spec.default


def test_the_core_types_check_their_fields_as_before() -> None:
    with pytest.raises(TypeError, match="token count"):
        Usage("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="finish reason"):
        Response((), finish_reason="done")  # type: ignore[arg-type]
    assert Response(()).provider_details == {}
    assert Response(()).usage == Usage()


@quick_init
@dataclass(frozen=True)
class Unslotted(Generic[T]):
    value: T
    tags: list[str] = field(default_factory=list)


def test_a_class_without_slots_is_served_too() -> None:
    item = Unslotted(1)
    assert vars(item) == {"value": 1, "tags": []}
    assert Unslotted(1, ["a"]) == Unslotted(value=1, tags=["a"])
    with pytest.raises(FrozenInstanceError):
        item.value = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(item)) == item
    assert replace(item, value=3).value == 3
    assert Unslotted[int](4).value == 4  # typing's __orig_class__ is refused quietly


def test_a_result_can_be_made_through_its_generic_alias() -> None:
    result = Result[int](1, "1", Transcript())
    assert result.value == 1 and result.cost is None and result.reports == ()


def test_it_refuses_a_class_it_cannot_serve() -> None:
    @dataclass(slots=True)
    class NotFrozen:
        x: int

    @dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        x: int

    @dataclass(frozen=True, slots=True)
    class Derived:
        x: int
        y: int = field(default=0, init=False)

    for cls in (NotFrozen, KeywordOnly, Derived, int):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)
