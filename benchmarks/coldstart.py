"""Suite 4: cold start. Fresh interpreters, launched alternately, timed from spawn to exit.

* ``python -c "import alloy"`` against ``python -c "import openai"`` (what the raw path imports
  first); the child also reports the import alone, and a bare interpreter is the floor.
* Process start to the first typed result over the emulator: an alloy command against the raw
  ``openai`` SDK call plus pydantic validation, both printing the Person they got.

alloy runs installed from a wheel of this checkout, as users get it, not from the editable
install of the project's venv: with bytecode writing off (as here, so no run leaves caches for
the next), an editable install recompiles alloy's sources in every process, about +90 ms at
import. The report says which install was measured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ._measure import Figure, SuiteResult, median
from ._setup import VENVS
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


REPO = Path(__file__).resolve().parents[1]
#: Where alloy's wheel is built and installed (``--target``), afresh on every run.
WHEEL_DIR = VENVS / "alloy-wheel"


def install_wheel() -> Path:
    """alloy built as a wheel from this checkout and installed, bytecode compiled as pip does,
    into a directory of its own, put first on the children's PYTHONPATH."""
    shutil.rmtree(WHEEL_DIR, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    dist, site = WHEEL_DIR / "dist", WHEEL_DIR / "site"
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dist), str(REPO)], check=True)
    (wheel,) = dist.glob("alloy-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    return site


def _how_installed(env: dict[str, str]) -> str:
    """Where the children import alloy from."""
    _, where = _launch("import alloy; print(alloy.__file__)", env)
    return where


def run(root: str, runs: int) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("cold", "Cold start")
    env = {**os.environ, **emulator_env(root), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        site = install_wheel()
    except (subprocess.CalledProcessError, OSError, ValueError) as exc:
        installed = (
            f"alloy ran from the project's editable install (no wheel could be built: {exc})"
        )
    else:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        where = _how_installed(env)
        if not where.startswith(str(site)):
            raise RuntimeError(f"the children import alloy from {where}, not from its wheel")
        installed = "alloy ran installed from a wheel of this checkout (pip, bytecode compiled)"
    result.details.append(
        f"{installed}; bytecode writing off in every child (PYTHONDONTWRITEBYTECODE=1)."
    )
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
