"""Each kind of field is scored by what it is (issue 31 item 1): the scorers on their own, and
the paths an output type gets."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from alloy import ConfigurationError, command
from alloy.checks import judged_by
from alloy.eval import Ordered, Tolerance, exact, similar, within
from alloy.eval._fields import Fields
from alloy.eval._kinds import Classes, Items, Number, Text
from alloy.eval._matching import best_matching
from alloy.eval._stats import Resampler
from alloy.testing import FunctionModel, json_reply


class Status(enum.Enum):
    PAID = "paid"
    OPEN = "open"
    VOID = "void"


@dataclass
class Line:
    sku: str
    qty: int


@dataclass
class Address:
    city: str
    zip: str


@dataclass
class Invoice:
    vendor: str
    total: float
    status: Status
    lines: list[Line]
    address: Address
    note: Optional[str] = None


def runs(observations: list[dict]) -> list[list[dict]]:
    return [[o] for o in observations]


def test_enum_fields_get_accuracy_a_confusion_matrix_and_per_class_f1() -> None:
    scorer = Classes(("paid", "open", "void"))
    pairs = (
        [("paid", "paid")] * 6
        + [("paid", "open")] * 2
        + [("open", "open")] * 3
        + [("void", "paid")]
    )
    entry = scorer.summarize(runs([scorer.observe(e, g) for e, g in pairs]), Resampler(12, 0))
    assert entry["labels"] == ["paid", "open", "void"]
    assert entry["confusion"] == [[6, 2, 0], [0, 3, 0], [1, 0, 0]]
    assert entry["metrics"]["accuracy"]["value"] == pytest.approx(9 / 12)
    paid = entry["per_class"]["paid"]
    assert paid["precision"]["value"] == pytest.approx(6 / 7)
    assert paid["recall"]["value"] == pytest.approx(6 / 8)
    assert paid["f1"]["value"] == pytest.approx(2 * (6 / 7) * (6 / 8) / (6 / 7 + 6 / 8))
    f1_open = 2 * (3 / 5) * 1 / (3 / 5 + 1)
    # void was never answered: no precision, so no F1; the macro mean is over the others
    assert entry["per_class"]["void"]["f1"]["value"] is None
    assert entry["metrics"]["macro_f1"]["value"] == pytest.approx(
        (paid["f1"]["value"] + f1_open) / 2
    )
    low, high = entry["metrics"]["accuracy"]["low"], entry["metrics"]["accuracy"]["high"]
    assert low <= 9 / 12 <= high


def test_literal_and_bool_fields_are_classes_too() -> None:
    fields = Fields(Literal["a", "b"]).fields
    assert fields["value"].scorer == Classes(("a", "b"))
    assert Fields(bool).fields["value"].scorer.kind == "bool"
    assert Fields(bool).observe(True, False)["value"]["score"] == 0.0


def test_numbers_get_exact_errors_and_within_a_tolerance() -> None:
    scorer = Number(tolerance=0.01)
    obs = scorer.observe(100.0, 100.005)
    assert obs["within"] and not obs["exact"] and obs["score"] == 1.0
    assert obs["abs_err"] == pytest.approx(0.005)
    assert obs["rel_err"] == pytest.approx(0.00005)
    far = scorer.observe(100.0, 110.0)
    assert far["score"] == 0.0 and far["rel_err"] == pytest.approx(0.1)
    entry = scorer.summarize(runs([obs, far, scorer.observe(1, 1)]), Resampler(3, 0))
    assert entry["tolerance"] == 0.01
    assert entry["metrics"]["within"]["value"] == pytest.approx(2 / 3)
    assert entry["metrics"]["exact"]["value"] == pytest.approx(1 / 3)
    assert entry["metrics"]["abs_err_p50"]["value"] == pytest.approx(0.005)
    assert entry["metrics"]["abs_err_mean"]["value"] == pytest.approx((0.005 + 10) / 3)


def test_a_tolerance_comes_from_within_or_from_the_type() -> None:
    @dataclass
    class Out:
        total: Annotated[float, Tolerance(0.5)]
        amount: Decimal
        count: int

    fields = Fields(Out, {"amount": within(0.01)}).fields
    assert fields["total"].scorer == Number(0.5)
    assert fields["amount"].scorer == Number(0.01, decimal=True)
    assert fields["count"].scorer == Number()
    seen = Fields(Out, {"amount": within(0.01)}).observe(
        {"total": 1.0, "amount": "2.00", "count": 3}, {"total": 1.4, "amount": "2.009", "count": 4}
    )
    assert seen["total"]["score"] == 1.0 and seen["amount"]["score"] == 1.0
    assert seen["count"]["score"] == 0.0


def test_strings_are_exact_after_nfc_and_whitespace_and_get_an_edit_similarity() -> None:
    text = Text()
    assert text.observe("Café  Noir", " Cafe\u0301 Noir\n")["score"] == 1.0  # NFC, whitespace
    near = text.observe("ACME Corp", "ACME Corp.")
    assert near["score"] == 0.0 and near["similarity"] == pytest.approx(1 - 1 / 10)
    assert Fields(str, {"value": similar()}).observe("ACME Corp", "ACME Corp.")["value"][
        "score"
    ] == pytest.approx(0.9)
    assert (
        Fields(str, {"value": similar(0.85)}).observe("ACME Corp", "ACME Corp.")["value"]["score"]
        == 1.0
    )
    assert Fields(str, {"value": exact()}).observe("a  b", "a b")["value"]["score"] == 0.0


def test_lists_are_matched_whatever_their_order_unless_ordered() -> None:
    items = Items(Text())
    obs = items.observe(["a", "b", "c"], ["c", "a", "b", "d"])
    assert obs["recall"] == 1.0 and obs["precision"] == 0.75 and obs["count_err"] == 1
    ordered = Fields(Annotated[list[str], Ordered]).fields["value"].scorer
    assert ordered == Items(Text(), ordered=True)
    assert ordered.observe(["a", "b"], ["b", "a"])["score"] == 0.0
    assert Items(Text()).observe([], [])["score"] == 1.0


def test_the_matching_is_optimal_where_a_greedy_one_is_not() -> None:
    # greedy takes (0, 0) = 0.9 and is left with (1, 1) = 0.0; the best is 0.8 + 0.8
    scores = [[0.9, 0.8], [0.8, 0.0]]
    assert sorted(best_matching(scores)) == [(0, 1), (1, 0)]
    assert best_matching([[0.1, 0.9, 0.2]]) == [(0, 1)]


def test_optional_fields_tell_missed_from_invented() -> None:
    scorer = Fields(Optional[str]).fields["value"].scorer
    missed, invented = scorer.observe("x", None), scorer.observe(None, "x")
    both_null, wrong = scorer.observe(None, None), scorer.observe("x", "y")
    assert (missed["score"], invented["score"], both_null["score"], wrong["score"]) == (0, 0, 1, 0)
    entry = scorer.summarize(runs([missed, invented, both_null, wrong]), Resampler(4, 0))
    assert entry["kind"] == "optional" and entry["value_kind"] == "str"
    assert entry["metrics"]["missed"]["value"] == pytest.approx(1 / 2)  # of the 2 expecting a value
    assert entry["metrics"]["invented"]["value"] == pytest.approx(1 / 2)  # of the 2 expecting null
    assert entry["metrics"]["exact"]["value"] == 0.0  # the value, where both exist


def test_dates_are_exact_and_days_off() -> None:
    seen = Fields(date).observe("2026-01-01", "2026-01-04")["value"]
    assert seen == {"score": 0.0, "days_off": 3.0}
    half = Fields(datetime).observe("2026-01-01T00:00:00", "2026-01-01T12:00:00")["value"]
    assert half["days_off"] == 0.5
    utc = Fields(datetime).observe("2026-01-01T00:00:00Z", "2026-01-02T00:00:00+00:00")["value"]
    assert utc["days_off"] == 1.0


def test_records_are_scored_field_by_field_recursively() -> None:
    fields = Fields(Invoice)
    assert list(fields.fields) == [
        "vendor",
        "total",
        "status",
        "lines",
        "lines[*].sku",
        "lines[*].qty",
        "address.city",
        "address.zip",
        "note",
    ]
    assert "lines[*].sku" not in fields.headline
    assert fields.fields["status"].scorer.kind == "enum"


def test_a_reordered_invoice_scores_above_one_whose_total_is_ten_percent_off() -> None:
    fields = Fields(Invoice)
    expected = {
        "vendor": "ACME",
        "total": 100.0,
        "status": "paid",
        "lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}, {"sku": "C", "qty": 3}],
        "address": {"city": "Oslo", "zip": "0150"},
        "note": None,
    }
    reordered = {**expected, "lines": expected["lines"][::-1]}
    off = {**expected, "total": 110.0}
    scores = {k: v["score"] for k, v in fields.observe(expected, reordered).items()}
    assert all(s == 1.0 for s in scores.values())
    assert fields.observe(expected, off)["total"]["score"] == 0.0


def test_a_scorer_for_a_path_the_type_does_not_have_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"'totl'.*vendor"):
        Fields(Invoice, {"totl": within(1)})
    with pytest.raises(ConfigurationError, match="within"):
        within(-1)


def _judge_reply(request: Any) -> str:
    return json_reply("please" in str(request.messages[-1].parts[0].text), wrap=True)


@command(output=bool, model=FunctionModel(_judge_reply, name="function:judge"))
def is_polite(text: str) -> str:
    return f"Is this polite? {text}"


@dataclass
class Reply:
    text: Annotated[str, judged_by(is_polite, on_fail="noop")]


def test_a_field_judged_by_a_command_is_scored_by_its_judge() -> None:
    fields = Fields(Reply)
    assert fields.fields["text"].scorer.kind == "judged"
    polite = fields.observe({"text": "Send it now."}, {"text": "Send it please."})["text"]
    rude = fields.observe({"text": "Send it please."}, {"text": "Send it!"})["text"]
    assert (polite["judged"], polite["score"], polite["exact"]) == (1.0, 1.0, 0.0)
    assert (rude["judged"], rude["score"]) == (0.0, 0.0)
    entry = fields.fields["text"].scorer.summarize(runs([polite, rude]), Resampler(2, 0))
    assert entry["kind"] == "judged" and entry["value_kind"] == "str"
    assert entry["metrics"]["judged"]["value"] == 0.5


class Item(BaseModel):
    name: str
    price: Annotated[float, Field(ge=0), Tolerance(0.5)]


class Order(TypedDict):
    items: list[Item]
    when: NotRequired[date]


def test_pydantic_models_and_typeddicts_are_records_too() -> None:
    fields = Fields(Order)
    assert list(fields.fields) == ["items", "items[*].name", "items[*].price", "when"]
    price = fields.fields["items[*].price"].scorer
    assert price == Items(Number(0.5))
    seen = fields.observe(
        {"items": [{"name": "a", "price": 1.0}], "when": "2026-01-01"},
        {"items": [{"name": "a", "price": 1.4}], "when": "2026-01-02"},
    )
    assert seen["items[*].price"]["score"] == 1.0 and seen["when"]["days_off"] == 1.0
