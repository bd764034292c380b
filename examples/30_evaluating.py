"""Measure a typed command field by field, and compare two models with real statistics.

Two scripted models stand in for real ones (so this runs offline): "sharp" gets a case right
90% of the time, "sloppy" 60%. `eval` scores every field by its type, puts a 95% interval on
every figure, and compares the two case by case (paired), so the difference comes with its own
interval and p-value. With real models, pass model strings: models=["openai:gpt-5-mini", ...].
"""

import enum
import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from alloy import command
from alloy.eval import Case, Dataset
from alloy.testing import FunctionModel


class Kind(enum.Enum):
    BUG = "bug"
    FEATURE = "feature"
    QUESTION = "question"


@dataclass
class Ticket:
    kind: Kind
    priority: Literal["low", "high"]
    title: str


@command(output=Ticket)
def triage(text: str) -> str:
    return f"Triage this support ticket:\n{text}"


KINDS = list(Kind)
TRUTH = {
    f"ticket {n}": {
        "kind": KINDS[n % 3].value,
        "priority": "high" if n % 4 == 0 else "low",
        "title": f"Ticket number {n}",
    }
    for n in range(200)
}
cases = Dataset([Case({"text": text}, answer, id=text) for text, answer in TRUTH.items()])


def scripted(name: str, right: float) -> FunctionModel:
    """A model that answers a case right with probability ``right`` (fixed per case)."""

    def reply(request):  # type: ignore[no-untyped-def]
        text = str(request.messages[-1].parts[0].text).rsplit("\n", 1)[-1]
        answer = dict(TRUTH[text])
        if random.Random(f"{name}/{text}").random() >= right:  # a wrong kind
            answer["kind"] = KINDS[(KINDS.index(Kind(answer["kind"])) + 1) % 3].value
        return json.dumps(answer)

    return FunctionModel(reply, name=f"function:{name}")


report = triage.eval(
    cases, models={"sharp": scripted("sharp", 0.9), "sloppy": scripted("sloppy", 0.6)}
)
print(report.summary())
print()
kind = report.fields["kind"]
for model in ("sharp", "sloppy"):
    print(
        f"{model}: kind accuracy {kind[model]['accuracy']:.3f}, macro-F1 {kind[model]['macro_f1']:.3f}"
    )
(delta,) = [d for d in report.compare("sharp", "sloppy") if d.target == "record_exact"]
print(
    f"sloppy - sharp, record_exact: {delta.delta:+.3f} "
    f"(95% interval {delta.low:+.3f} to {delta.high:+.3f}, p = {delta.p:.2g}, {delta.test})"
)
with tempfile.TemporaryDirectory() as folder:
    report.save(Path(folder) / "report.json")
    page = report.save(Path(folder) / "report.html")
    print(f"report page: {page.stat().st_size // 1024} KB, one self-contained HTML file")
