"""The criterion protocol: a named check on one value, its programmatic fix, and an on-fail action.

A criterion only answers "does this value pass, and if not, why" (for the model to read) and,
where one makes sense, "what would the fixed value be". What happens on failure is its
``on_fail`` action, carried out by the checker, so every criterion gets every action for free.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, get_args, runtime_checkable

from .._blocking import run_blocking
from .._deps import context_parameter, current
from .._output import OutputType
from ..errors import ConfigurationError

Action = Literal["reask", "fix", "filter", "refrain", "noop", "exception", "fix_reask"]
ACTIONS: tuple[str, ...] = get_args(Action)


class _NoFix:
    """Returned by ``Criterion.fix`` when this particular value cannot be repaired."""

    _instance: ClassVar[_NoFix | None] = None

    def __new__(cls) -> _NoFix:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_FIX"


NO_FIX: Any = _NoFix()


@dataclass(frozen=True)
class Criterion:
    """Base class of every quality criterion; subclass it and override ``validate`` (and ``fix``).

    ``validate`` returns None when the value passes, else an error written for the model, such as
    ``"must be exactly two words, but it has 3"``. ``fix`` returns the repaired value or NO_FIX.
    """

    on_fail: Action = field(default="reask", kw_only=True)

    #: The criterion's spec name (RAIL spelling), used in reports and messages.
    _name: ClassVar[str] = "criterion"
    #: The value types the criterion can check; another type fails with a type error.
    accepts: ClassVar[tuple[type, ...]] = (object,)

    def __post_init__(self) -> None:
        if self.on_fail not in ACTIONS:
            raise ConfigurationError(
                f"Unknown on_fail action {self.on_fail!r} for {self.name}; "
                f"use one of {', '.join(ACTIONS)}"
            )
        if self.on_fail in ("fix", "fix_reask") and not self.fixable:
            raise ConfigurationError(
                f"Criterion {self.name} has no programmatic fix, so on_fail={self.on_fail!r} "
                "cannot work; use reask, filter, refrain, noop or exception"
            )

    @property
    def name(self) -> str:
        return self._name

    @property
    def fixable(self) -> bool:
        """Whether the criterion offers a programmatic fix at all."""
        return type(self).fix is not Criterion.fix

    @property
    def runs_alone(self) -> bool:
        """Whether the criterion can run outside a call (it needs no ``deps=`` and no model),
        as worked examples are checked when their command is decorated."""
        return True

    def rule(self) -> str:
        """What the criterion demands, as a clause for the model: ``"must be upper case"``."""
        return f"must satisfy {self.name}"

    def validate(self, value: Any) -> str | None:
        """None when ``value`` passes; otherwise why not, written for the model."""
        raise NotImplementedError

    def fix(self, value: Any) -> Any:
        """The repaired value, or NO_FIX when this value cannot be repaired."""
        return NO_FIX


# -- custom criteria --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Check(Criterion):
    """A criterion from a plain function; see :func:`check`."""

    # Equal only to itself: equal checks of different functions would be one and the same to
    # typing's cache of Annotated[...], and a command would run another command's check.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    fn: Callable[..., Any] = field(default=lambda value: True)
    label: str = "check"
    fix_fn: Callable[[Any], Any] | None = None
    rule_text: str | None = None
    #: The parameter of ``fn`` that receives the call's Context (``deps=``), if it has one.
    context_param: str | None = None

    @property
    def name(self) -> str:
        return self.label

    @property
    def fixable(self) -> bool:
        return self.fix_fn is not None

    @property
    def runs_alone(self) -> bool:
        return self.context_param is None  # the call's deps exist only during a call

    def rule(self) -> str:
        return self.rule_text or f"must pass the check {self.label}"

    def validate(self, value: Any) -> str | None:
        try:
            if self.context_param is None:
                verdict = self.fn(value)
            else:
                context = current(f"Check {self.label!r}")
                verdict = self.fn(value, **{self.context_param: context})
        except (ValueError, AssertionError) as exc:
            return str(exc) or self.rule()
        if isinstance(verdict, str):
            return verdict
        if verdict is False:
            return self.rule()
        return None

    def fix(self, value: Any) -> Any:
        return NO_FIX if self.fix_fn is None else self.fix_fn(value)


def check(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    fix: Callable[[Any], Any] | None = None,
    rule: str | None = None,
    on_fail: Action = "reask",
) -> Check:
    """A criterion from a function of the value.

    ``fn`` passes by returning True or None; it fails by returning False (the error is ``rule``),
    by returning an error string, or by raising ValueError/AssertionError with the error.
    ``fix`` (optional) maps a failing value to a repaired one. A parameter annotated
    ``alloy.Context[...]`` receives the call's ``deps=``.
    """
    label = name or getattr(fn, "__name__", "check").replace("_", "-")
    context = context_parameter(fn)
    return Check(
        fn=fn, label=label, fix_fn=fix, rule_text=rule, on_fail=on_fail, context_param=context
    )


# -- LLM-judged criteria ----------------------------------------------------------------


@runtime_checkable
class Judge(Protocol):
    """What a judge is: an alloy command (its name and output type), called with the value."""

    @property
    def name(self) -> str: ...

    @property
    def output_type(self) -> OutputType: ...

    def __call__(self, value: Any, /) -> Any: ...


@dataclass(frozen=True, eq=False)
class Judged(Criterion):
    """A criterion decided by an alloy command answering yes or no; see :func:`judged_by`."""

    # Equal only to itself: equal checks of different functions would be one and the same to
    # typing's cache of Annotated[...], and a command would run another command's check.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    command: Any = None
    label: str = "judged"
    rule_text: str | None = None

    @property
    def name(self) -> str:
        return self.label

    def rule(self) -> str:
        return self.rule_text or f"must pass the check {self.label}"

    @property
    def runs_alone(self) -> bool:
        return False  # the judge is a model call

    def validate(self, value: Any) -> str | None:
        verdict = _call_command(self.command, value)
        if not isinstance(verdict, bool):
            raise ConfigurationError(
                f"Judge {self.label} returned {type(verdict).__name__}; it must return a bool"
            )
        return None if verdict else f"{self.rule()} (judged by {self.label})"


def judged_by(
    command: Any,
    *,
    name: str | None = None,
    rule: str | None = None,
    on_fail: Action = "reask",
) -> Judged:
    """A criterion judged by ``command(value)``, a command returning a bool (``output=YesNo()``
    or ``output=bool``). It runs through the normal command machinery: its own model, options,
    re-asks and errors. ``rule`` is the demand shown to the model, e.g. ``"must be polite"``.
    """
    if not isinstance(command, Judge) or command.output_type.expected not in ("bool", "yes or no"):
        raise ConfigurationError(
            f"judged_by() needs an alloy command with a yes/no output (output=YesNo() or "
            f"output=bool), got {command!r}"
        )
    label = name or command.name.split(".")[-1].replace("_", "-")
    return Judged(command=command, label=label, rule_text=rule, on_fail=on_fail)


def _call_command(command: Any, value: Any) -> Any:
    """Call a judge from inside a parse, which is synchronous even under the async driver: an
    async judge runs to completion on a private loop (keeping the caller's context, so
    ``override_model`` and ``use_config`` still apply)."""
    result = command(value)
    return run_blocking(result) if inspect.iscoroutine(result) else result
