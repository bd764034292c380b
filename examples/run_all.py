"""Run every numbered example and print what each one returns.

With no provider key set, the examples run on alloy's built-in offline model (ALLOY_MODEL=offline),
so this works on any machine. Set ALLOY_MODEL, or a provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY,
GEMINI_API_KEY / GOOGLE_API_KEY), to run them against a real model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

DEFAULT_MODELS = {
    "OPENAI_API_KEY": "openai:gpt-5-mini",
    "ANTHROPIC_API_KEY": "anthropic:claude-sonnet-4-6",
    "GEMINI_API_KEY": "gemini:gemini-2.5-flash",
    "GOOGLE_API_KEY": "gemini:gemini-2.5-flash",
}


def choose_model(env: dict[str, str]) -> str:
    if env.get("ALLOY_MODEL"):
        return env["ALLOY_MODEL"]
    for key, model in DEFAULT_MODELS.items():
        if env.get(key):
            return model
    return "offline"


def main() -> int:
    env = dict(os.environ)
    env["ALLOY_MODEL"] = choose_model(env)
    env.setdefault("PYTHONPATH", str(HERE.parent))
    print(f"Running the examples with ALLOY_MODEL={env['ALLOY_MODEL']}\n")
    failures = []
    scripts = sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))
    for script in scripts:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
        )
        elapsed = time.perf_counter() - started
        status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        print(f"=== {script.name} [{status}, {elapsed:.1f}s]")
        print(done.stdout.rstrip() or "(no output)")
        if done.returncode != 0:
            print(done.stderr.rstrip())
            failures.append(script.name)
        print()
    print(f"{len(scripts) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
