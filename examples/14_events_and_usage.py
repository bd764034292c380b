"""Every stage of a call is an event; each call's record carries usage per turn, in total, and cost."""

from alloy import command, events, tool


@tool
def population(city: str) -> int:
    """Population of a city."""
    return 2_100_000


@command(output=int, tools=[population])
def people(city: str) -> str:
    return f"How many people live in {city}?"


seen = []
unsubscribe = events.subscribe(lambda event: seen.append(type(event).__name__))
result = people.run("Paris")
unsubscribe()
print("value:", result.value)
print("events:", " -> ".join(seen))
print(
    "tokens per turn:",
    [u.total_tokens for u in result.transcript.turn_usage],
    "total:",
    result.usage.total_tokens,
)
print("cost (USD):", result.cost)
