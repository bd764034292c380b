"""Suite 4: cold start. Fresh interpreters, launched alternately, timed from spawn to exit.

* ``python -c "import alloy"`` against ``python -c "import openai"`` (what the raw path imports
  first); the child also reports the import alone, and a bare interpreter is the floor.
* Process start to the first typed result over the emulator: an alloy command against the raw
  ``openai`` SDK call plus pydantic validation, both printing the Person they got.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ._measure import Figure, SuiteResult, median
from ._subjects import emulator_env

_IMPORT = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"

_PERSON = """
from dataclasses import dataclass

@dataclass
class Person:
    name: str
    age: int
    email: str
    score: float
    active: bool
"""

ALLOY_FIRST = (
    _PERSON
    + """
from alloy import command

@command(output=Person, model="openai:gpt-4o-mini")
def describe(subject: str) -> str:
    return f"Describe {subject} as a person record."

print(describe("Ada"))
"""
)

RAW_FIRST = (
    _PERSON
    + """
import openai
from pydantic import TypeAdapter

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "email": {"type": "string"},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "email", "score", "active"],
    "additionalProperties": False,
}
client = openai.OpenAI(max_retries=0)
reply = client.responses.create(
    model="gpt-4o-mini",
    input="Describe Ada as a person record.",
    text={"format": {"type": "json_schema", "name": "Person", "schema": SCHEMA, "strict": True}},
)
print(TypeAdapter(Person).validate_json(reply.output_text, strict=True))
"""
)


def _launch(code: str, env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds from spawn to exit, and what the child printed. cwd is outside the repo."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.path.dirname(os.path.abspath(__file__)) + "/workers",
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"cold-start child failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout.strip()


def _alternate(
    codes: dict[str, str], runs: int, env: dict[str, str]
) -> dict[str, list[tuple[float, str]]]:
    out: dict[str, list[tuple[float, str]]] = {name: [] for name in codes}
    names = list(codes)
    for i in range(runs):
        for name in names if i % 2 == 0 else reversed(names):
            out[name].append(_launch(codes[name], env))
    return out


def run(root: str, runs: int) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("cold", "Cold start")
    env = {**os.environ, **emulator_env(root), "PYTHONDONTWRITEBYTECODE": "1"}
    imports = _alternate(
        {
            "alloy": _IMPORT.format(module="alloy"),
            "openai": _IMPORT.format(module="openai"),
            "bare": "pass",
        },
        runs,
        env,
    )
    how = f"{runs} launches per side, alternating"
    wall = {name: [t for t, _ in values] for name, values in imports.items()}
    inner = {name: [float(out) for _, out in imports[name]] for name in ("alloy", "openai")}
    result.figures.append(
        Figure(
            "cold",
            "python -c 'import alloy'",
            median(wall["alloy"]) * 1e3,
            median(wall["openai"]) * 1e3,
            "python -c 'import openai'",
            "ms",
            how,
        )
    )
    result.figures.append(
        Figure(
            "cold",
            "import alloy, in-process",
            median(inner["alloy"]) * 1e3,
            median(inner["openai"]) * 1e3,
            "import openai, in-process",
            "ms",
            how,
        )
    )
    result.details.append(
        f"A bare interpreter (`python -c pass`) takes {median(wall['bare']) * 1e3:.0f} ms here; "
        "`import alloy` loads no provider SDK and no pydantic until a command needs them."
    )
    first = _alternate({"alloy": ALLOY_FIRST, "raw": RAW_FIRST}, runs, env)
    printed = {name: {out for _, out in values} for name, values in first.items()}
    result.figures.append(
        Figure(
            "cold",
            "start to first typed result (OpenAI Responses)",
            median([t for t, _ in first["alloy"]]) * 1e3,
            median([t for t, _ in first["raw"]]) * 1e3,
            "raw openai SDK + pydantic",
            "ms",
            how,
        )
    )
    result.details.append(
        f"First results printed: alloy {sorted(printed['alloy'])[0]}; raw {sorted(printed['raw'])[0]}."
    )
    result.seconds = time.perf_counter() - started
    return result
