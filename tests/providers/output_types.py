"""Output types the Gemini and Ollama adapter tests both use (imported by those modules)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import BaseModel


@dataclasses.dataclass
class Point:
    x: int
    y: int


class City(BaseModel):
    name: str
    population: int


class Trip(BaseModel):
    title: str
    stops: list[City]
    mode: Literal["car", "train"]
    note: str | None
