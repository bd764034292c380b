"""How commands, tools and rails travel to other processes (``pickle`` and ``cloudpickle``).

Dask, Spark UDFs, Ray and ``ProcessPoolExecutor`` send callables to their workers pickled. A
decorator puts the command (or tool, or rail) where the function was, so the function can no
longer be found by its own name, which is how pickle finds a function: pickling a command's
``__dict__`` as it is fails ("not the same object as module.name") and would drag along what
belongs to this process (SDK clients, the plan cache). So these objects say themselves how to
travel:

* **By reference**, when the module and qualified name find the very object: the other process
  imports the module and takes it from there, with whatever that import set up.
* **By value** otherwise (a copy made by ``with_options()`` or ``using()``, or one made inside
  a function): what it was made from, its function included. A function whose module-level
  name now holds a command, tool or rail made from it goes as "the function of that object";
  any other function goes as pickle sends it (``cloudpickle`` sends one made in a function by
  value; ``pickle`` cannot).

``cloudpickle`` (Ray's copy too) sends what is defined in ``__main__`` and modules registered
with ``register_pickle_by_value`` by value, since the other side cannot import them: a Ray
worker's ``__main__`` is Ray's. So when cloudpickle is the one pickling, those go by value here
too. ``pickle`` (which ``ProcessPoolExecutor`` uses) has no such mode, and finds ``__main__`` in
the other process through the same script (multiprocessing loads it there as ``__mp_main__``).

An ``api_key`` option never travels (:func:`without_key`): the copy reads its key where it
runs, from that process's configuration and environment.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import typing
from collections.abc import Mapping
from types import FrameType
from typing import Any


def located(module: str, qualname: str) -> Any:
    """The object at ``module``.``qualname``, importing the module if need be."""
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def at_own_name(obj: Any, module: str | None, qualname: str | None) -> bool:
    """Whether ``module``.``qualname`` finds ``obj`` itself, in a module already imported
    (an object is found by a name only if its module has been run)."""
    if not module or not qualname or "<locals>" in qualname:
        return False
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is obj


def by_reference(obj: Any, module: str | None, qualname: str | None) -> bool:
    """Whether ``obj`` may go by its name: it is found there, and the pickler at work does not
    send that module by value (cloudpickle's ``__main__`` and registered modules)."""
    return at_own_name(obj, module, qualname) and not _sent_by_value(module or "")


def function_ref(fn: Any) -> Any:
    """``fn``, or a stand-in that unpickles to it when its module-level name now holds the
    command, tool or rail made from it (which keeps it as ``__wrapped__`` or ``fn``)."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname or at_own_name(fn, module, qualname):
        return fn
    holder: Any = sys.modules.get(module)
    for part in qualname.split("."):
        holder = getattr(holder, part, None)
    for attribute in ("__wrapped__", "fn"):
        if getattr(holder, attribute, None) is fn and by_reference(holder, module, qualname):
            return FunctionOf(module, qualname, attribute)
    return fn


class FunctionOf:
    """Stands in for a function, found in the other process as an attribute of the object at
    its name (the command made from it)."""

    def __init__(self, module: str, qualname: str, attribute: str) -> None:
        self.where = (module, qualname, attribute)

    def __reduce__(self) -> tuple[Any, ...]:
        return (function_of, self.where)


def function_of(module: str, qualname: str, attribute: str) -> Any:
    return getattr(located(module, qualname), attribute)


def without_key(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` without ``api_key``: a pickle is read by whoever holds it (a task queue, a
    cluster's object store, a file), so the key stays in this process; the copy made from it
    reads its key from the configuration where it runs."""
    return {name: value for name, value in options.items() if name != "api_key"}


def _sent_by_value(module: str) -> bool:
    """Whether the cloudpickle pickling now (if one is) sends ``module``'s objects by value."""
    pickler = _cloudpickler()
    if pickler is None:
        return False
    if module == "__main__":
        return True
    registered = getattr(
        sys.modules.get(type(pickler).__module__), "_is_registered_pickle_by_value", None
    )
    loaded = sys.modules.get(module)
    return bool(registered is not None and loaded is not None and registered(loaded))


def _cloudpickler() -> Any:
    """The cloudpickle Pickler whose ``dump`` is running in this thread, if any.

    An object's ``__reduce__`` is not told which pickler calls it; cloudpickle's ``dump`` is a
    Python method (pickle's is C, which leaves no frame), so it is on the stack above, a few
    frames up at most."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(64):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if owner is not None and frame.f_code.co_name == "dump":
            kind = type(owner)
            if "cloudpickle" in kind.__module__ and hasattr(kind, "reducer_override"):
                return owner
        frame = frame.f_back
    return None


def mended(tp: Any, seen: set[int] | None = None) -> Any:
    """``tp`` with the dataclasses in it (itself, its arguments, its fields' types) mended
    after cloudpickle sent them by value: it makes a new ``dataclasses.MISSING`` for each field
    left without a default, and pydantic then reads the field as having both a default and a
    default factory (cloudpickle issue 424). Sent by reference, nothing here changes."""
    seen = set() if seen is None else seen
    if id(tp) in seen:
        return tp
    seen.add(id(tp))
    for argument in typing.get_args(tp):
        mended(argument, seen)
    if not isinstance(tp, type):
        return tp
    for found in getattr(tp, "__dataclass_fields__", {}).values():
        for name in ("default", "default_factory"):
            value = getattr(found, name)
            if isinstance(value, type(dataclasses.MISSING)) and value is not dataclasses.MISSING:
                setattr(found, name, dataclasses.MISSING)
    if getattr(tp, "__module__", "builtins") != "builtins":
        try:
            hints = typing.get_type_hints(tp)
        except Exception:  # a name the annotations use is not found: nothing more to mend
            hints = {}
        for hint in hints.values():
            mended(hint, seen)
    return tp
