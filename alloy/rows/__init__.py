"""Running a command over rows: ``cmd.map(rows)`` and ``await cmd.amap(rows)``.

The records a run hands back (:class:`Ok`, :class:`Failed`), the :class:`Args` spelling of a
row's arguments, the run's :class:`Summary`, and what paces calls to a provider's limits
(:class:`Pacer`), and the budgets that keep runs in many workers together within those limits
(:class:`Budget`, :class:`LocalBudget`, :class:`RedisBudget`), and a run's
:class:`Settings` (``cmd.map(rows, settings=...)``). See the "Running over datasets"
and "Scaling out" guides.
"""

from ._budget import LocalBudget, RedisBudget
from ._handles import AsyncRows, Rows
from ._inputs import RowInputError
from ._pacer import Budget, PacedModel, Pacer
from ._records import Args, BadRow, Failed, Ok, Row, Summary
from ._run import ResumedFailure, Settings

__all__ = [
    "Args",
    "AsyncRows",
    "BadRow",
    "Budget",
    "Failed",
    "LocalBudget",
    "Ok",
    "PacedModel",
    "Pacer",
    "RedisBudget",
    "ResumedFailure",
    "Row",
    "RowInputError",
    "Rows",
    "Settings",
    "Summary",
]
