"""Virtual environments the run needs besides the project's: the peers, and one for the chart.

alloy-ai's import name is ``alloy``, the same as this project's, so each peer lives in its own
venv under ``benchmarks/.venvs/`` (gitignored) and runs only in subprocesses. A stamp file
records what was installed, so later runs reuse the venv without touching the network.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

VENVS = Path(__file__).parent / ".venvs"

#: Peer name -> (pip requirement, module that must import afterwards).
PEERS: dict[str, tuple[str, str]] = {
    "alloy-ai": ("alloy-ai==0.3.1", "alloy"),
    "instructor": ("instructor==1.17.0", "instructor"),
}
CHART = ("matplotlib>=3.8", "matplotlib")


def ensure(name: str, requirement: str, module: str, log: list[str]) -> str | None:
    """The python of a venv with ``requirement`` installed, or None (the reason goes to ``log``)."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if python.exists() and stamp.exists() and stamp.read_text() == requirement:
        return str(python)
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", requirement],
            check=True,
            timeout=600,
        )
        subprocess.run([str(python), "-c", f"import {module}"], check=True, cwd=VENVS)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        log.append(f"could not install {requirement} into {venv}: {exc}")
        return None
    stamp.write_text(requirement)
    return str(python)


def peers(log: list[str]) -> dict[str, str]:
    """Every peer that could be installed, by name."""
    found = {}
    for name, (requirement, module) in PEERS.items():
        python = ensure(name, requirement, module, log)
        if python is not None:
            found[name] = python
    return found


def chart_python(log: list[str]) -> str | None:
    return ensure("chart", *CHART, log)
