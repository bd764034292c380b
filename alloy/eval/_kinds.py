"""The scorer of each kind of field: what one answer scores against the expected value
(:meth:`observe`, on the JSON forms of both), and the field's figures over all cases
(:meth:`summarize`, each with a bootstrap interval).

An observation is a dict holding at least ``score`` (0..1): the field's one number per run,
what ``record_exact``, ``field_mean`` and the paired comparisons are made of. A run that failed
(no output) has no observation: it counts as wrong (0) in the field's headline rate (accuracy,
exact, F1...) and is left out of the figures that describe answers (confusion, errors, days
off, similarity); the failure itself is counted by kind in ``report.failures``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from itertools import chain
from typing import Any, Protocol

from ._matching import best_matching
from ._stats import Metric, Resampler, quantile_figures, ratio, tallied
from ._text import normalise, similarity_of_normalised

Observation = dict[str, Any]
#: Per case, per repeat: the observation, or None where the run failed.
Runs = Sequence[Sequence[Observation | None]]


class Scorer(Protocol):
    @property
    def kind(self) -> str: ...

    def observe(self, expected: Any, got: Any) -> Observation: ...

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]: ...


def pooled(
    runs: Runs,
    pick: Callable[[Observation], float | None],
    resampler: Resampler,
    *,
    failed_as: float | None = None,
) -> Metric:
    """The mean of ``pick(observation)`` over all runs, pooled per case (None: does not
    apply); a failed run counts as ``failed_as``, or not at all when that is None."""
    sums: list[float] = []
    counts: list[float] = []
    for case in runs:
        total = count = 0.0
        for obs in case:
            value = failed_as if obs is None else pick(obs)
            if value is not None:
                total += value
                count += 1
        sums.append(total)
        counts.append(count)
    return ratio(sums, counts, resampler)


def quantiles(
    runs: Runs,
    pick: Callable[[Observation], float | None],
    qs: Sequence[float],
    resampler: Resampler,
) -> list[Metric]:
    """The ``qs`` quantiles of ``pick(observation)`` over the answered runs, resampled by case."""
    per_case = [
        [v for v in (pick(obs) for obs in case if obs is not None) if v is not None]
        for case in runs
    ]
    return quantile_figures(per_case, qs, resampler)


def _score(obs: Observation) -> float:
    return float(obs["score"])


def _metrics(**figures: Metric) -> dict[str, dict[str, float | None]]:
    return {name: m.to_dict() for name, m in figures.items()}


def label(value: Any) -> str:
    """A class's name in a confusion matrix: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class Classes:
    """Enum, Literal and bool: accuracy, a confusion matrix (rows expected, columns got), and
    precision, recall and F1 per class, with their macro mean."""

    labels: tuple[str, ...]
    kind: str = "enum"

    def observe(self, expected: Any, got: Any) -> Observation:
        e, g = label(expected), label(got)
        return {"score": float(e == g), "expected": e, "got": g}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        labels = list(self.labels)
        seen = {
            obs[k] for case in runs for obs in case if obs is not None for k in ("expected", "got")
        }
        labels += sorted(seen - set(labels))
        where = {name: i for i, name in enumerate(labels)}
        k = len(labels)
        # each answered run as one number, expected * k + got: a confusion matrix is a count
        codes = [
            [where[obs["expected"]] * k + where[obs["got"]] for obs in case if obs is not None]
            for case in runs
        ]

        def confusion(tally: list[int]) -> list[list[int]]:
            return [tally[e * k : (e + 1) * k] for e in range(k)]

        def figures(tally: list[int]) -> list[float | None]:
            """Macro-F1, then precision, recall and F1 of each class in turn."""
            table = confusion(tally)
            out: list[float | None] = [None]
            f1s = []
            for c in range(k):
                hit, expected = table[c][c], sum(table[c])
                got = sum(row[c] for row in table)
                p = hit / got if got else None
                r = hit / expected if expected else None
                f1 = None if p is None or r is None else (2 * p * r / (p + r) if p + r else 0.0)
                out += [p, r, f1]
                if f1 is not None:
                    f1s.append(f1)
            out[0] = sum(f1s) / len(f1s) if f1s else None
            return out

        found = tallied(codes, k * k, figures, resampler)
        total = [0] * (k * k)
        for code in chain.from_iterable(codes):
            total[code] += 1
        classes = {
            name: _metrics(precision=found[1 + 3 * c], recall=found[2 + 3 * c], f1=found[3 + 3 * c])
            for c, name in enumerate(labels)
        }
        return {
            "kind": self.kind,
            "metrics": _metrics(
                accuracy=pooled(runs, _score, resampler, failed_as=0.0), macro_f1=found[0]
            ),
            "labels": labels,
            "confusion": confusion(total),
            "per_class": classes,
        }


def _number(value: Any, decimal: bool) -> Any:
    if decimal:
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Number:
    """int, float and Decimal: exact rate, absolute and relative error (mean, p50, p90), and,
    with a tolerance, the rate within it (then the field's score)."""

    tolerance: float | None = None
    decimal: bool = False
    kind: str = "number"

    def observe(self, expected: Any, got: Any) -> Observation:
        e, g = _number(expected, self.decimal), _number(got, self.decimal)
        if e is None or g is None:
            return {"score": float(expected == got), "exact": expected == got}
        err = abs(float(g - e))
        rel = 0.0 if err == 0 else (err / abs(float(e)) if e != 0 else None)
        exact = g == e
        obs: Observation = {"exact": exact, "abs_err": err, "rel_err": rel}
        if self.tolerance is not None:
            obs["within"] = err <= self.tolerance + 1e-12 * max(1.0, abs(float(e)))
        obs["score"] = float(obs["within"] if self.tolerance is not None else exact)
        return obs

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        def picked(name: str) -> Callable[[Observation], float | None]:
            return lambda obs: None if obs.get(name) is None else float(obs[name])

        figures = {"exact": pooled(runs, picked("exact"), resampler, failed_as=0.0)}
        if self.tolerance is not None:
            figures["within"] = pooled(runs, picked("within"), resampler, failed_as=0.0)
        for err in ("abs_err", "rel_err"):
            figures[f"{err}_mean"] = pooled(runs, picked(err), resampler)
            p50, p90 = quantiles(runs, picked(err), (0.5, 0.9), resampler)
            figures[f"{err}_p50"], figures[f"{err}_p90"] = p50, p90
        entry: dict[str, Any] = {"kind": self.kind, "metrics": _metrics(**figures)}
        if self.tolerance is not None:
            entry["tolerance"] = self.tolerance
        return entry


@dataclass(frozen=True)
class Text:
    """str: exact after normalisation (NFC, whitespace), and the normalised edit similarity.
    ``mode`` says which is the field's score: ``exact`` (normalised), ``raw`` (plain
    equality, from ``exact()``) or ``similar`` (the similarity, or reaching ``at_least``)."""

    mode: str = "exact"
    at_least: float | None = None
    kind: str = "str"

    def observe(self, expected: Any, got: Any) -> Observation:
        if not (isinstance(expected, str) and isinstance(got, str)):
            same = float(expected == got)
            return {"score": same, "exact": same, "similarity": same}
        e, g = normalise(expected), normalise(got)
        exact = e == g
        sim = 1.0 if exact else similarity_of_normalised(e, g)
        if self.mode == "raw":
            score = float(expected == got)
        elif self.mode == "similar":
            score = sim if self.at_least is None else float(sim >= self.at_least)
        else:
            score = float(exact)
        return {"score": score, "exact": float(exact), "similarity": sim}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        figures = {
            "exact": pooled(runs, lambda o: o["exact"], resampler, failed_as=0.0),
            "similarity": pooled(runs, lambda o: o["similarity"], resampler),
        }
        if self.mode != "exact":
            figures["score"] = pooled(runs, _score, resampler, failed_as=0.0)
        return {"kind": self.kind, "metrics": _metrics(**figures)}


def _when(value: Any, with_time: bool) -> date | datetime | None:
    if not isinstance(value, str):
        return None
    try:
        if not with_time:
            return date.fromisoformat(value)
        # pydantic writes UTC as "Z", which fromisoformat reads only from Python 3.11
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None


@dataclass(frozen=True)
class When:
    """date and datetime: exact, and how many days off (fractional for datetimes)."""

    with_time: bool = False
    kind: str = "date"

    def observe(self, expected: Any, got: Any) -> Observation:
        e, g = _when(expected, self.with_time), _when(got, self.with_time)
        if e is None or g is None:
            return {"score": float(expected == got), "days_off": None}
        try:
            gap = g - e
        except TypeError:  # a naive and an aware datetime: not comparable
            return {"score": 0.0, "days_off": None}
        days = abs(gap.total_seconds()) / 86400
        return {"score": float(days == 0), "days_off": days}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metrics": _metrics(
                exact=pooled(runs, _score, resampler, failed_as=0.0),
                days_off_mean=pooled(runs, lambda o: o["days_off"], resampler),
                days_off_p90=quantiles(runs, lambda o: o["days_off"], (0.9,), resampler)[0],
            ),
        }


@dataclass(frozen=True)
class Same:
    """Any other value (a dict, a union, ``exact()``): right when its JSON form is equal."""

    kind: str = "exact"

    def observe(self, expected: Any, got: Any) -> Observation:
        return {"score": float(expected == got)}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metrics": _metrics(exact=pooled(runs, _score, resampler, failed_as=0.0)),
        }


@dataclass(frozen=True)
class Items:
    """list[T]: precision, recall and F1 of the items, matched to the expected ones so that
    their summed item scores are highest (order-insensitive), or position by position when
    ``ordered``; and the count error (answered minus expected, its absolute mean)."""

    item: Scorer
    ordered: bool = False
    kind: str = "list"

    def observe(self, expected: Any, got: Any) -> Observation:
        e = expected if isinstance(expected, list) else []
        g = got if isinstance(got, list) else []
        if self.ordered:
            matched = sum(self.item.observe(x, y)["score"] for x, y in zip(e, g, strict=False))
        else:
            table = [[self.item.observe(x, y)["score"] for y in g] for x in e]
            matched = sum(table[i][j] for i, j in best_matching(table))
        precision = matched / len(g) if g else (1.0 if not e else 0.0)
        recall = matched / len(e) if e else (1.0 if not g else 0.0)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "score": f1,
            "precision": precision,
            "recall": recall,
            "count_err": len(g) - len(e),
        }

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metrics": _metrics(
                precision=pooled(runs, lambda o: o["precision"], resampler, failed_as=0.0),
                recall=pooled(runs, lambda o: o["recall"], resampler, failed_as=0.0),
                f1=pooled(runs, _score, resampler, failed_as=0.0),
                count_err=pooled(runs, lambda o: abs(o["count_err"]), resampler),
            ),
            "ordered": self.ordered,
        }


@dataclass(frozen=True)
class Maybe:
    """An Optional field: *missed* (a value was expected, null came back) and *invented*
    (null was expected, a value came back), then the value's own figures where both exist."""

    inner: Scorer
    kind: str = "optional"

    def observe(self, expected: Any, got: Any) -> Observation:
        if expected is None:
            return {"score": float(got is None), "invented": got is not None, "value": None}
        if got is None:
            return {"score": 0.0, "missed": True, "value": None}
        value = self.inner.observe(expected, got)
        return {"score": value["score"], "missed": False, "value": value}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        inner_runs = [[None if o is None else o["value"] for o in case] for case in runs]
        answered = [[o for o in case if o is not None] for case in inner_runs]
        entry = self.inner.summarize(answered, resampler)
        figures = {
            "missed": pooled(
                runs, lambda o: None if "missed" not in o else float(o["missed"]), resampler
            ),
            "invented": pooled(
                runs, lambda o: None if "invented" not in o else float(o["invented"]), resampler
            ),
            "score": pooled(runs, _score, resampler, failed_as=0.0),
        }
        entry["metrics"] = {**_metrics(**figures), **entry["metrics"]}
        entry["value_kind"] = entry["kind"]
        entry["kind"] = self.kind
        return entry


@dataclass(frozen=True)
class Record:
    """A nested record scored as one value (a list's items, an Optional record): the mean of
    its fields' scores; exact when every field is right."""

    fields: dict[str, Scorer] = field(default_factory=dict)
    kind: str = "record"

    def observe(self, expected: Any, got: Any) -> Observation:
        if not (isinstance(expected, dict) and isinstance(got, dict)):
            return {"score": float(expected == got), "exact": expected == got}
        scores = [s.observe(expected.get(n), got.get(n))["score"] for n, s in self.fields.items()]
        mean = sum(scores) / len(scores) if scores else float(expected == got)
        return {"score": mean, "exact": all(s == 1 for s in scores)}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metrics": _metrics(
                exact=pooled(runs, lambda o: float(o["exact"]), resampler, failed_as=0.0),
                field_mean=pooled(runs, _score, resampler, failed_as=0.0),
            ),
        }


@dataclass(frozen=True)
class Judged:
    """A field with ``judged_by(command)`` in its ``Annotated`` metadata: right when the judge
    says yes. The judge is called with the answer, or with the answer and the expected value
    when its prompt function takes two parameters. ``base`` still gives the field's other
    figures (exact, similarity, ...)."""

    judge: Any
    base: Scorer
    kind: str = "judged"

    def observe(self, expected: Any, got: Any) -> Observation:
        obs = dict(self.base.observe(expected, got))
        verdict = self.judge(got, expected) if _takes_two(self.judge) else self.judge(got)
        obs["judged"] = float(bool(verdict))
        obs["score"] = obs["judged"]
        return obs

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        entry = self.base.summarize(runs, resampler)
        judged = pooled(runs, lambda o: o["judged"], resampler, failed_as=0.0)
        entry["metrics"] = {"judged": judged.to_dict(), **entry["metrics"]}
        entry["value_kind"] = entry["kind"]
        entry["kind"] = self.kind
        return entry


def _takes_two(judge: Any) -> bool:
    try:
        parameters = inspect.signature(judge).parameters.values()
    except (TypeError, ValueError):
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters) >= 2


@dataclass(frozen=True)
class Custom:
    """A field scored by the caller's own function, ``fn(expected, got) -> 0..1`` (on the JSON
    forms)."""

    fn: Callable[[Any, Any], float]
    kind: str = "custom"

    def observe(self, expected: Any, got: Any) -> Observation:
        return {"score": float(self.fn(expected, got))}

    def summarize(self, runs: Runs, resampler: Resampler) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metrics": _metrics(score=pooled(runs, _score, resampler, failed_as=0.0)),
        }
