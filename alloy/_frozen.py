"""Frozen dataclasses that are quick to make.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` (to get
past its own ``__setattr__``, which refuses), a call per field; alloy makes a request, a reply,
its usage, a transcript and a result on every call, so that is a measurable share of a call's
own work (figures in the benchmark report). :func:`quick_init` gives such a class an
``__init__`` with the same signature, defaults and ``__post_init__`` that stores each field
the way a class that is not frozen does: through its slot's descriptor (the documented
``__set__`` of a member descriptor) in a slotted class, into the instance ``__dict__`` in
another. Instances stay frozen: only ``__init__`` changes.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

__all__ = ["quick_init"]

C = TypeVar("C", bound=type)


class _Factory:
    """The default of a field made by its default factory (shown as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def quick_init(cls: C) -> C:
    """Replace the ``__init__`` of ``cls`` (a frozen dataclass whose fields are all positional
    ``__init__`` parameters) with one that stores the fields directly; apply it above
    ``@dataclass``."""
    params_of = getattr(cls, "__dataclass_params__", None) if is_dataclass(cls) else None
    if params_of is None or not (params_of.frozen and params_of.init):
        raise TypeError(f"quick_init takes a frozen dataclass, not {cls.__name__}")
    slotted = "__slots__" in vars(cls)
    names: dict[str, Any] = {"_FACTORY": _FACTORY}
    params = []
    lines = [] if slotted else ["    _fields = self.__dict__"]
    for field in fields(cls):
        if not field.init or field.kw_only:
            raise TypeError(f"quick_init: {cls.__name__}.{field.name} is not a positional field")
        name = field.name
        value = name
        if field.default_factory is not MISSING:
            names[f"_make_{name}"] = field.default_factory
            params.append(f"{name}=_FACTORY")
            value = f"_make_{name}() if {name} is _FACTORY else {name}"
        elif field.default is not MISSING:
            names[f"_default_{name}"] = field.default
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
        if slotted:
            names[f"_set_{name}"] = vars(cls)[name].__set__
            lines.append(f"    _set_{name}(self, {value})")
        else:
            lines.append(f"    _fields[{name!r}] = {value}")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines) + "\n"
    exec(source, names)  # as dataclasses itself writes __init__: no loop over fields per call
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    generated = vars(cls)["__init__"]  # the one @dataclass wrote: its annotations say the types
    init.__doc__ = generated.__doc__
    init.__annotations__ = dict(generated.__annotations__)
    cls.__init__ = init  # type: ignore[misc]
    return cls
