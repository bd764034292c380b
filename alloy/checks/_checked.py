"""``CheckedOutput``: an output type that validates as usual, then runs the criteria.

It wraps another output type (the JSON machinery for typed outputs, or a text format such as
``Code``), so structural validation and its re-asks stay exactly as they are; the criteria only
see values that already have the right shape.
"""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

from .._output import InvalidOutput, JsonOutput, OutputType, Parsed, schema_name, type_name
from ..errors import CriterionFailed
from ._apply import DROP, Audit, Refrained, Walk
from ._criterion import Criterion
from ._plan import Builder, Node, annotated, describe, split_annotated, strip_criteria
from ._report import CheckReport, CriterionResult


class CheckedOutput:
    """An output type with quality criteria (``Annotated`` metadata) and their on-fail actions.

    ``parse`` returns ``Parsed(value, CheckReport)``; failures marked ``reask`` (or ``fix_reask``
    that the fix could not repair) raise InvalidOutput naming every failing field, its value
    and the criterion's error, which the engine sends back while the re-ask budget lasts.
    """

    def __init__(self, output: Any, *criteria: Criterion) -> None:
        if _is_output_type(output):
            self.inner: OutputType = output
            self.node: Node = Builder().build(annotated(output.value_type, criteria))
            self._expected: str = output.expected
        else:
            tp = annotated(output, criteria)
            self.node = Builder().build(tp)
            self.inner = JsonOutput(strip_criteria(tp))
            self._expected = display_name(tp)
        self._instructions = _instructions(self.inner.instructions, self.node)

    # -- the OutputType protocol --
    @property
    def expected(self) -> str:
        return self._expected

    @property
    def schema(self) -> dict[str, Any] | None:
        return self.inner.schema

    @property
    def name(self) -> str:
        return schema_name(self._expected) if self.schema is not None else self.inner.name

    @property
    def instructions(self) -> str | None:
        return self._instructions

    @property
    def value_type(self) -> Any:
        return self.inner.value_type

    def render(self, value: Any) -> str:
        return self.inner.render(value)

    def example(self) -> str | None:
        """The wrapped format's sample reply, for stand-in models (None for JSON outputs)."""
        return self.inner.example()

    @property
    def criteria(self) -> list[tuple[str, Criterion]]:
        """Every criterion with the path it applies to (``"items[].name"``)."""
        return describe(self.node)

    def parse(self, text: str) -> Parsed:
        try:
            parsed = self.inner.parse(text)
        except InvalidOutput as invalid:
            summary = invalid.summary.replace(self.inner.expected, self.expected)
            report = CheckReport(raw=text, parsed=None, value=None, parse_error=summary)
            raise InvalidOutput(summary, invalid.feedback, report=report) from invalid
        if isinstance(parsed, Parsed):
            parsed = parsed.value
        walk = Walk()
        try:
            value = walk.apply(self.node, parsed)
        except Refrained:
            return Parsed(None, self._report(text, parsed, None, walk))
        except CriterionFailed as error:
            error.report = self._report(text, parsed, None, walk)
            raise
        if value is DROP:
            value = None
        reasks = walk.reasks
        if reasks:
            feedback = "\n".join(r.line() for r in reasks)
            report = self._report(text, parsed, value, walk, feedback)
            raise InvalidOutput(_summary(reasks), feedback, report=report)
        return Parsed(value, self._report(text, parsed, value, walk))

    def audit(self, reply: str) -> list[CriterionResult]:
        """What ``reply`` (a worked example's answer) fails of the criteria that can run
        outside a call; InvalidOutput when it is not a valid value at all."""
        parsed = self.inner.parse(reply)
        if isinstance(parsed, Parsed):
            parsed = parsed.value
        walk = Audit()
        walk.apply(self.node, parsed)
        return walk.results

    @staticmethod
    def _report(
        text: str, parsed: Any, value: Any, walk: Walk, reask: str | None = None
    ) -> CheckReport:
        return CheckReport(text, parsed, value, tuple(walk.results), reask)

    def __repr__(self) -> str:
        return f"CheckedOutput({self.expected}, {len(self.criteria)} criteria)"


def checked(output: Any, *criteria: Criterion) -> CheckedOutput:
    """Criteria on a whole output: a type (``checked(Invoice, MyCheck())``) or a format
    (``checked(Code("python"), BugFreePython(on_fail="reask"))``)."""
    return CheckedOutput(output, *criteria)


def checked_output_for(output: Any) -> CheckedOutput | None:
    """The criteria-aware output type for ``output``, or None when it carries no criteria."""
    if _is_output_type(output):
        return None
    node = Builder().build(output)
    if not node.active:
        return None
    return CheckedOutput(output)


def display_name(tp: Any) -> str:
    """A type as a user would write it, criteria and module paths left out: ``list[Person]``."""
    base = split_annotated(tp)[0]
    origin, args = get_origin(base), get_args(base)
    if base is type(None):
        return "None"
    if origin in (Union, types.UnionType):
        return " | ".join(display_name(a) for a in args)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is not None and args:
        inner = ", ".join("..." if a is Ellipsis else display_name(a) for a in args)
        return f"{getattr(origin, '__name__', type_name(origin))}[{inner}]"
    return base.__qualname__ if isinstance(base, type) else type_name(base)


def _is_output_type(output: Any) -> bool:
    return not isinstance(output, type) and isinstance(output, OutputType)


def _summary(failures: list[CriterionResult]) -> str:
    parts = "; ".join(f"{r.path}: {r.error} ({r.criterion})" for r in failures)
    count = len(failures)
    return f"Output failed {count} quality criteri{'on' if count == 1 else 'a'}: {parts}"


def _instructions(base: str | None, node: Node) -> str | None:
    lines = [f"- {where}: {criterion.rule()}" for where, criterion in describe(node)]
    if not lines:
        return base
    text = "The answer must also meet these criteria:\n" + "\n".join(lines)
    return f"{base}\n\n{text}" if base else text
