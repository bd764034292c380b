"""alloy.eval: measure a typed command field by field, and compare models with real statistics.

::

    from alloy.eval import Dataset, Case, Report, RegressionError, within, similar, exact

    report = read_invoice.eval(Dataset.load("invoices.jsonl"), models=["openai:gpt-5-mini"])
    print(report.summary())

Every field of the output is scored by what it is (see ``docs/evaluating.md``); every figure
has a seeded bootstrap 95% interval; ``report.compare(a, b)`` is paired. This package imports
no numpy, scipy or plotting library (``Report.plot`` imports matplotlib when called).
"""

from ._dataset import Case, Dataset, Skipped
from ._options import Ordered, Tolerance, exact, similar, within
from ._report import Check, Delta, FieldResult, RegressionError, Report
from ._run import aevaluate, evaluate
from ._stats import Metric

__all__ = [
    "Case",
    "Check",
    "Dataset",
    "Delta",
    "FieldResult",
    "Metric",
    "Ordered",
    "RegressionError",
    "Report",
    "Skipped",
    "Tolerance",
    "aevaluate",
    "evaluate",
    "exact",
    "similar",
    "within",
]
