"""Enums, Literals, lists, optionals and unions all work as output types."""

import enum
from dataclasses import dataclass
from typing import Literal, Union

from alloy import command


class Sentiment(enum.Enum):
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    NEGATIVE = "negative"


@dataclass
class Topic:
    name: str
    weight: float


@command(output=Sentiment)
def sentiment(text: str) -> str:
    return f"Classify the sentiment of: {text}"


@command(output=list[Topic])
def topics(text: str) -> str:
    return f"List the topics of: {text}"


@command(output=Literal["low", "medium", "high"] | None)
def urgency(text: str) -> str:
    return f"How urgent is this (or null if unclear)? {text}"


@command(output=Union[int, str])
def answer(question: str) -> str:
    return question


print(sentiment("I love this library!"))
print(topics("Rust, Python and type systems"))
print(urgency("The server is on fire"))
print(answer("How many legs does a spider have?"))
