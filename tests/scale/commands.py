"""Module-level commands, tools and rails, found by name in the processes the tests start."""

from __future__ import annotations

from dataclasses import dataclass

from alloy import command, tool
from alloy.rails import input_rail


@dataclass
class Ticket:
    category: str
    urgent: bool


@tool
def lookup(order: str) -> str:
    """The state of an order."""
    return f"order {order}: shipped"


@input_rail
def no_secrets(text: str) -> str:
    return text.replace("hunter2", "[redacted]")


@command(output=Ticket, model="openai:gpt-4o-mini", tools=[lookup], rails=[no_secrets])
def classify(text: str) -> str:
    return f"Classify this support ticket: {text}"


@command(output=Ticket, model="offline")
def classify_offline(text: str) -> str:
    return f"Classify this support ticket: {text}"


@command(output=int, model="openai:gpt-4o-mini")
def count(word: str) -> str:
    return f"How many letters in {word}?"


@command(output=int, model="gemini:gemini-2.5-flash")
def count_on_gemini(word: str) -> str:
    return f"How many letters in {word}?"
