"""Commands call Python tools in a loop; parallel calls run concurrently; contracts guard the tools."""

from alloy import command, ensure, require, tool


@tool
def exchange_rate(base: str, quote: str) -> float:
    """Current exchange rate between two currencies.

    Args:
        base: ISO code of the currency to convert from, e.g. EUR.
        quote: ISO code of the currency to convert to, e.g. USD.
    """
    return 1.08 if (base, quote) == ("EUR", "USD") else 1.0


@tool
@require(lambda args: args.arguments["amount"] >= 0, "amount must not be negative")
@ensure(lambda result: result >= 0, "a converted amount is never negative")
def convert(amount: float, rate: float) -> float:
    """Multiply an amount by an exchange rate."""
    return round(amount * rate, 2)


@command(output=float, tools=[exchange_rate, convert])
def to_dollars(amount: float, currency: str) -> str:
    return f"Convert {amount} {currency} to USD using the tools."


result = to_dollars.run(100, "EUR")  # the value with the call's record
print(result.value)
print("model requests:", result.transcript.attempts)
