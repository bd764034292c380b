"""What importing costs: ``import alloy`` does not load ``alloy.eval``, and ``import alloy.eval``
loads no numpy, scipy or plotting library (each in a fresh process)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "scipy", "matplotlib", "pandas")


def loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_import_alloy_does_not_load_alloy_eval() -> None:
    assert not [m for m in loaded_after("import alloy") if m.startswith("alloy.eval")]


def test_import_alloy_eval_loads_no_numeric_or_plotting_library() -> None:
    modules = loaded_after("import alloy.eval")
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
