"""Test your own commands without a provider: script the model's replies and assert on the requests."""

from dataclasses import dataclass

from alloy import command
from alloy.testing import json_reply, override_model, script, tool_call


@dataclass
class Order:
    item: str
    quantity: int


def stock(item: str) -> int:
    """How many of an item are in stock."""
    return 3


@command(output=Order, tools=[stock])
def take_order(text: str) -> str:
    return f"Turn this into an order, checking stock: {text}"


model = script(
    tool_call("stock", {"item": "apple"}),
    json_reply({"item": "apple", "quantity": 3}),
)
with override_model(model):
    order = take_order("three apples please")

assert order == Order("apple", 3)
assert model.requests[1].messages[-1].parts[0].content == "3"  # the tool result went back
print("scripted test passed:", order)
