"""A command for the ``alloy eval`` tests: its model answers every case right except the
numbers listed in ``EVAL_WRONG`` (read at each call)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from alloy import command
from alloy.testing import FunctionModel


@dataclass
class Sum:
    total: int
    parity: str


def _reply(request: Any) -> str:
    n = int(str(request.messages[-1].parts[0].text).rsplit(" ", 1)[-1])
    wrong = {int(x) for x in os.environ.get("EVAL_WRONG", "").split(",") if x}
    total = n + n + (1 if n in wrong else 0)
    return json.dumps({"total": total, "parity": "even"})


@command(output=Sum, model=FunctionModel(_reply, name="function:adder"))
def add(n: int) -> str:
    return f"Add a number to itself: {n}"
