"""A command returns a real Python value: here a float, enforced by the provider's structured output."""

from alloy import command


@command(output=float)
def extract_price(text: str) -> str:
    return f"Extract the price (number only) from: {text}"


price = extract_price("This item costs $49.99.")
print(type(price).__name__, price)
print("schema sent:", extract_price.schema)
