"""Rows from files, records to files: what ``alloy map`` reads and writes.

Input is JSON Lines (a JSON object per line is keyword arguments, an array positional ones, any
other value the one argument) or CSV (a header row naming parameters). Values are converted to
the prompt function's parameter types the way ``alloy run`` converts its flags, so a CSV cell
``"3"`` reaches an ``int`` parameter as ``3``. A line that cannot be read (not UTF-8, not JSON),
or whose values do not convert, becomes a :class:`BadRow` that fails alone, naming its line;
the run goes on. The input is read with ``errors="surrogateescape"`` (``open_input``), so a byte
that is not UTF-8 reaches the reader as a lone surrogate instead of ending the read.

Output is JSON Lines, a record per row: ``{"index", "line", "ok", "value" | "error", "usage",
"attempts", "resumed"}``.
"""

from __future__ import annotations

import contextlib
import csv
import inspect
import io
import json
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from pydantic import TypeAdapter, ValidationError

from ..rows import Args, BadRow, Failed, Row

#: JSON and CSV inputs are read by these file suffixes; anything else is JSON Lines.
CSV_SUFFIXES = (".csv",)


class FileRow(Args):
    """A row read from a file: its arguments, and the line it came from (1-based)."""

    __slots__ = ("line",)

    def __init__(self, line: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line = line


def read_rows(
    stream: IO[str], fn: Callable[..., Any], *, csv_format: bool
) -> Iterator[FileRow | BadRow]:
    """The rows of ``stream`` as arguments for ``fn``, converted to its parameter types."""
    convert = _Converter(fn)
    if csv_format:
        yield from _csv_rows(stream, convert)
    else:
        yield from _jsonl_rows(stream, convert)


def open_input(path: str) -> IO[str]:
    """The input file ``path`` (``-``: standard input) as UTF-8 text, bytes that are not UTF-8
    kept as lone surrogates for the readers to refuse line by line. OSError if it cannot open."""
    if path != "-":
        newline = "" if is_csv(path) else None
        return open(path, encoding="utf-8", errors="surrogateescape", newline=newline)
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper):
        with contextlib.suppress(ValueError, io.UnsupportedOperation):  # already read from
            stdin.reconfigure(encoding="utf-8", errors="surrogateescape")
    return stdin


def _not_utf8(text: str) -> str | None:
    """Why ``text`` (read with surrogateescape) is not UTF-8, or None when it is."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        byte = ord(exc.object[exc.start]) - 0xDC00
        return f"not UTF-8 text (it holds the byte 0x{byte:02x})"
    return None


def _jsonl_rows(stream: IO[str], convert: _Converter) -> Iterator[FileRow | BadRow]:
    for number, text in enumerate(stream, 1):
        if not text.strip():
            continue
        undecoded = _not_utf8(text)
        if undecoded is not None:
            yield BadRow(undecoded, number)
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield BadRow(f"not JSON ({exc})", number)
            continue
        try:
            if isinstance(value, dict):
                yield FileRow(number, **convert.keywords(value))
            elif isinstance(value, list):
                yield FileRow(number, *convert.positional(value))
            else:
                yield FileRow(number, *convert.positional([value]))
        except _Unconvertible as exc:
            yield BadRow(str(exc), number)


def _csv_rows(stream: IO[str], convert: _Converter) -> Iterator[FileRow | BadRow]:
    reader = csv.DictReader(stream)
    for record in reader:
        number = reader.line_num
        if None in record:
            yield BadRow("more cells than the header has names", number)
            continue
        undecoded = _not_utf8("".join(str(cell) for pair in record.items() for cell in pair))
        if undecoded is not None:
            yield BadRow(undecoded, number)
            continue
        given = {name: cell for name, cell in record.items() if cell not in (None, "")}
        try:
            yield FileRow(number, **convert.keywords(given, text=True))
        except _Unconvertible as exc:
            yield BadRow(str(exc), number)


class _Unconvertible(Exception):
    pass


class _Converter:
    """Converts values to the parameter types of a prompt function (cached per parameter)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.parameters = list(inspect.signature(fn).parameters.values())
        try:
            self.hints = typing.get_type_hints(fn)
        except Exception:  # unresolvable annotations: pass values as they are
            self.hints = {}
        self._adapters: dict[str, TypeAdapter[Any] | None] = {}

    def keywords(self, values: Mapping[str, Any], *, text: bool = False) -> dict[str, Any]:
        known = {p.name for p in self.parameters}
        takes_any = any(p.kind is p.VAR_KEYWORD for p in self.parameters)
        unknown = sorted(set(values) - known)
        if unknown and not takes_any:
            raise _Unconvertible(
                f"no parameter named {', '.join(map(repr, unknown))} "
                f"(the parameters are {', '.join(sorted(known)) or 'none'})"
            )
        return {name: self._convert(name, value, text) for name, value in values.items()}

    def positional(self, values: list[Any]) -> list[Any]:
        names = [
            p.name
            for p in self.parameters
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        return [
            self._convert(names[i], value, False) if i < len(names) else value
            for i, value in enumerate(values)
        ]

    def _convert(self, name: str, value: Any, text: bool) -> Any:
        adapter = self._adapter(name)
        if adapter is None:
            return value
        try:
            if not text:
                return adapter.validate_python(value)
            try:
                return adapter.validate_strings(value)
            except ValidationError:
                if value.strip()[:1] not in ("[", "{", '"'):
                    raise
                return adapter.validate_json(value)  # a list or a record written as JSON
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            raise _Unconvertible(f"{name}: {error['msg']} (got {value!r:.60})") from None

    def _adapter(self, name: str) -> TypeAdapter[Any] | None:
        if name not in self._adapters:
            hint = self.hints.get(name)
            adapter = None
            if hint is not None and hint is not Any and hint is not str:
                try:
                    adapter = TypeAdapter(hint)
                except Exception:  # a type pydantic cannot check: pass the value through
                    adapter = None
            self._adapters[name] = adapter
        return self._adapters[name]


def record_of(row: Row[Any], line: int | None) -> dict[str, Any]:
    """The JSON record ``alloy map`` writes for a row."""
    from pydantic_core import to_jsonable_python

    record: dict[str, Any] = {"index": row.index, "line": line, "ok": row.ok}
    if row.ok:
        record["value"] = to_jsonable_python(row.value, serialize_unknown=True)
    else:
        assert isinstance(row, Failed)
        record["error"] = {"type": type(row.error).__name__, "message": str(row.error)}
    usage = row.usage
    record["usage"] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    record["attempts"] = row.attempts
    record["resumed"] = row.resumed
    return record


def is_csv(path: str) -> bool:
    return Path(path).suffix.lower() in CSV_SUFFIXES
