"""Quality criteria with on-fail actions, attached to output types through ``Annotated``.

::

    @dataclass
    class Title:
        text: Annotated[str, TwoWords(on_fail="reask"), UpperCase(on_fail="fix")]
        tags: list[Annotated[str, LowerCase(on_fail="filter")]]

    @command(output=Title)
    def title(topic: str) -> str: ...

The JSON is validated as usual first; then each criterion runs and its action is carried out:
``reask`` (the model is told each failing field, its value and the criterion's error),
``fix``, ``filter``, ``refrain`` (the call returns None), ``noop`` (recorded only),
``exception`` (``CriterionFailed`` at once) or ``fix_reask``. What happened is in
``Result.reports`` (one :class:`CheckReport` per attempt).
"""

from ._builtin import (
    BugFreePython,
    BugFreeSql,
    EndsWith,
    IsJson,
    Length,
    LowerCase,
    OneLine,
    ReadingTime,
    RegexMatch,
    TwoWords,
    UpperCase,
    ValidChoices,
    ValidEmail,
    ValidRange,
    ValidUrl,
)
from ._checked import CheckedOutput, checked, checked_output_for
from ._criterion import ACTIONS, NO_FIX, Action, Check, Criterion, Judged, check, judged_by
from ._report import CheckReport, CriterionResult
from ._spec import CRITERIA, SpecWarning, parse_criteria

__all__ = [
    "ACTIONS",
    "CRITERIA",
    "NO_FIX",
    "Action",
    "BugFreePython",
    "BugFreeSql",
    "Check",
    "CheckReport",
    "CheckedOutput",
    "Criterion",
    "CriterionResult",
    "EndsWith",
    "IsJson",
    "Judged",
    "Length",
    "LowerCase",
    "OneLine",
    "ReadingTime",
    "RegexMatch",
    "SpecWarning",
    "TwoWords",
    "UpperCase",
    "ValidChoices",
    "ValidEmail",
    "ValidRange",
    "ValidUrl",
    "check",
    "checked",
    "checked_output_for",
    "judged_by",
    "parse_criteria",
]
