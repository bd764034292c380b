"""``python -m tests.interop.run --instructor-python PY``: what ``make interop`` runs.

Starts the emulator and ``alloy serve`` on it (as the suite's interop tests do), then the
clients that cannot run in the suite: the JavaScript clients (``node js/clients.mjs``) and
instructor (``instructor_client.py``, in its own virtualenv). Each checks its rows of
clients.json and prints a line per row; the exit status is 1 when any row failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from alloy.testing.emulator import Emulator
from tests.serve.test_process import serve

from .conftest import TARGETS

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.interop.run")
    parser.add_argument("--node", default="node", help="the node to run js/clients.mjs with")
    parser.add_argument(
        "--instructor-python", required=True, help="a Python with instructor installed"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    runners = [
        [args.node, str(HERE / "js" / "clients.mjs")],
        [args.instructor_python, str(HERE / "instructor_client.py")],
    ]
    with Emulator() as emulator:
        os.environ.update(emulator.env(), ALLOY_MODEL="openai:gpt-5-mini")
        process, url = serve(*TARGETS, "--no-playground")
        try:
            statuses = [subprocess.run([*runner, f"{url}/v1"]).returncode for runner in runners]
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"make interop: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 1 if any(statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
