"""The provider emulator in its own process.

In-process, the emulator's request handling would hold the GIL against the client being
measured; in its own process it gets the second core, like a remote server would.
"""

from __future__ import annotations

import subprocess
import sys
from types import TracebackType


class EmulatorProcess:
    """``python -m alloy.testing.emulator --port 0``; ``url`` is read from its banner."""

    def __init__(self, *options: str) -> None:
        self.options = options  # more flags, such as ``--rate-limit openai:6000``
        self._process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> EmulatorProcess:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "alloy.testing.emulator", "--port", "0", *self.options],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        banner = self._process.stdout.readline()
        if "listening on" not in banner:
            self.__exit__(None, None, None)
            raise RuntimeError(f"the emulator did not start: {banner!r}")
        self.url = banner.split()[-1]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None
