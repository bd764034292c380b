"""instructor's partial streaming of one answer, in its venv; prints JSON (chunks read, CPU s).

``python stream_instructor.py PAYLOAD CHUNK CAP``: the answer's text is read from the file
PAYLOAD and fed in CHUNK-character pieces to ``Partial[Ledger].model_from_chunks``, the
generator instructor's streaming runs on, until the stream ends or CAP CPU seconds are spent.
The models mirror ``benchmarks.bigoutput``'s dataclasses (instructor takes pydantic models).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import date


def main() -> None:
    from instructor.dsl.partial import Partial
    from pydantic import BaseModel

    class Address(BaseModel):
        street: str
        city: str
        postcode: str

    class Line(BaseModel):
        sku: str
        description: str
        quantity: int
        unit_price: float
        shipped: date
        tags: list[str]
        address: Address
        note: str | None

    class Ledger(BaseModel):
        account: str
        lines: list[Line]

    path, size, cap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with open(path, encoding="utf-8") as source:
        text = source.read()
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    clock = time.process_time
    start = clock()
    read = 0
    for _ in Partial[Ledger].model_from_chunks(iter(chunks)):  # type: ignore[misc]
        read += 1
        if clock() - start > cap:
            break
    print(json.dumps({"chunks": read, "seconds": clock() - start}))


if __name__ == "__main__":
    main()
