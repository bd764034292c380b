"""Dataclasses (and TypedDicts, pydantic models) become strict JSON Schemas and come back as objects."""

from dataclasses import dataclass

from alloy import command


@dataclass
class Invoice:
    """An invoice read from text."""

    vendor: str
    total: float
    lines: list[str]
    due: str | None = None


@command(output=Invoice)
def read_invoice(text: str) -> str:
    return f"Extract the invoice fields from:\n{text}"


invoice = read_invoice(
    "ACME Corp. 2 x widgets at $5, 1 x gadget at $10. Total $20. Due 2026-12-01."
)
print(invoice)
assert isinstance(invoice, Invoice)
