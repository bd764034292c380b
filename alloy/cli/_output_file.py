"""The file ``alloy map`` writes its records to, never over an output it has not finished.

The records go to a new file beside the output, ``<output>.<random>.partial``, made when the
first record is written (so a mistake found as the run starts, a bad ``--model`` say, touches
nothing). Only a run that reaches its end replaces the output with it, by an atomic rename, so
an existing output is never lost: not to a mistake, a crash, Ctrl-C or ``kill -9``. A run that
stops early leaves the records it wrote in the partial file, and one that wrote none leaves
nothing. ``-`` is standard output, written as the records come, and so is an output that is not
a regular file (``/dev/null``, a pipe), which nothing could be lost from.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import stat
import sys
from typing import IO, Any


class OutputFile:
    """Where the records of one ``alloy map`` run go; ``finish`` or ``abandon`` it at the end.

    Raises OSError at once when the output cannot be written: its folder is missing or not
    writable, or it is a folder."""

    def __init__(self, path: str) -> None:
        self.path = path
        #: Records written so far.
        self.written = 0
        self._stream: IO[str] | None = sys.stdout if path == "-" else None
        #: The file written until the run ends; None when the records go straight to the output.
        self.partial: str | None = None
        self._target = os.path.realpath(path)  # a symbolic link stays a link, to the new file
        self._in_place = path == "-" or _is_special(self._target)
        if self._in_place:
            return
        if os.path.isdir(self._target):
            raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
        folder = os.path.dirname(self._target)
        if not os.path.isdir(folder):
            raise FileNotFoundError(errno.ENOENT, f"the folder {folder!r} does not exist", path)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, f"the folder {folder!r} is not writable", path)

    def write(self, record: dict[str, Any]) -> None:
        """Add one record (a line of JSON), flushed at once."""
        stream = self._stream or self._open()
        stream.write(json_line(record))
        stream.flush()
        self.written += 1

    def finish(self) -> None:
        """The run reached its end: its records become the output."""
        stream = self._stream or self._open()
        if self.partial is None:
            self._close()
            return
        os.fsync(stream.fileno())  # on disk before the rename makes it the output
        self._close()
        if os.path.exists(self._target):
            shutil.copymode(self._target, self.partial)
        os.replace(self.partial, self._target)

    def abandon(self) -> str | None:
        """The run stopped before its end, and the output stays as it was. The partial file
        holding the records written, or None when there were none (and no file is left)."""
        self._close()
        if self.partial is not None and not self.written:
            os.unlink(self.partial)
            return None
        return self.partial

    def _open(self) -> IO[str]:
        if self._in_place:
            self._stream = open(self._target, "w", encoding="utf-8")  # noqa: SIM115
            return self._stream
        while True:
            name = f"{self._target}.{secrets.token_hex(4)}.partial"
            try:
                self._stream = open(name, "x", encoding="utf-8")  # noqa: SIM115
            except FileExistsError:
                continue
            self.partial = name
            return self._stream

    def _close(self) -> None:
        if self._stream is not None and self._stream is not sys.stdout:
            self._stream.close()


def _is_special(path: str) -> bool:
    """Whether ``path`` is there and not a regular file or a folder (a device, a pipe)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def json_line(record: dict[str, Any]) -> str:
    """``record`` as a line of JSON in UTF-8 text; text that is not valid Unicode in it (a lone
    surrogate) is written as its ``\\u`` escape, which reads back as the same text."""
    text = json.dumps(record, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        text = json.dumps(record)
    return text + "\n"
