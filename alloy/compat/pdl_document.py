"""Read a whole ragit PDL document: its ``<|schema|>`` turn as an output type, its turns as messages.

::

    doc = read_pdl(TEXT, context={"query": "How does git merge?"})

    @command(output=doc.output)
    def keywords() -> list:
        return list(doc.messages)

The format is ragit's (``docs/pdl_format.md``): a turn starts at a line holding only
``<|user|>``, ``<|assistant|>``, ``<|system|>``, ``<|schema|>`` or ``<|reasoning|>`` (any case).
Reasoning turns are not sent; ``&lt;|`` in a turn is a literal ``<|``; ``<|media(path)|>`` and
``<|raw_media(png:BASE64)|>`` embed an image. A document is a Tera template: with ``context`` it
is rendered first (with jinja2, which reads the Tera that PDL files use; values are escaped so
they cannot open a turn), and without one, template syntax is refused when strict (as ragit
refuses a variable it has no value for) or kept as written when not. ``{# comments #}`` are
dropped either way.

A template is rendered in jinja2's immutable sandbox: it can read the values it is given, not
Python's internals (``cycler.__init__.__globals__`` is refused), call no method that changes a
value, and build no range, repetition or power beyond a bound. Whatever goes wrong while it
renders (a syntax error, an undefined variable, a division by zero, a refused attribute) is a
ConfigurationError naming the document line.

Strict (the default) also follows ragit's checks: content before the first turn, two schemas,
an unknown ``<|turn|>``, a system turn that is not first, two user or two assistant turns in a
row, and a document ending with an assistant turn are ConfigurationErrors. Lenient reading
makes leading content a system turn and keeps the last schema.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from .._output import OutputType, TextOutput
from .._types import ModelTurn, System, UserTurn
from ..errors import ConfigurationError
from ..media import Image
from ._pdl_schema import load_schema

__all__ = ["PdlDocument", "read_pdl"]

PdlMessage = Union[System, UserTurn, ModelTurn]

_TURNS = ("user", "system", "assistant", "schema", "reasoning")
_TEMPLATE = re.compile(r"\{\{|\{%")
#: A media token. Its argument stops at ``<`` too, where the next token would start: a search
#: from each of many unclosed ``<|media(`` to the line's end took quadratic time.
_MEDIA = re.compile(r"<\|(media|raw_media)\(([^)<\n]*)\)\|>")


@dataclass(frozen=True)
class PdlDocument:
    """A PDL document read: the output its ``<|schema|>`` turn describes (plain text without
    one, since then ragit checks nothing) and its turns, ready to return from a prompt function."""

    output: OutputType
    messages: tuple[PdlMessage, ...]


def read_pdl(
    text: str,
    context: Mapping[str, Any] | None = None,
    *,
    strict: bool = True,
    base_dir: str | Path | None = None,
) -> PdlDocument:
    """The output type and messages of a PDL document.

    ``context`` fills the template's variables; ``base_dir`` is where ``<|media(path)|>`` paths
    are found (the current directory by default).
    """
    rendered = _render(text, context, strict)
    reader = _Reader(strict, Path(base_dir) if base_dir is not None else Path.cwd())
    for line in rendered.splitlines():
        reader.line(line)
    return reader.finish()


def _render(text: str, context: Mapping[str, Any] | None, strict: bool) -> str:
    if context is None:
        text = _without_comments(text)
        found = _TEMPLATE.search(text)
        if found is not None and strict:
            line = text.count("\n", 0, found.start()) + 1
            raise ConfigurationError(
                f"PDL document line {line}: it is a template ({text[found.start() :][:20]!r}...); "
                "pass context={...} to fill it, or strict=False to keep the text as written"
            )
        return text
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 is optional
        raise ConfigurationError(
            'Rendering a PDL template needs jinja2: pip install "alloy[pdl]"'
        ) from None
    from ._pdl_sandbox import render_error, sandbox

    undefined = jinja2.StrictUndefined if strict else jinja2.Undefined
    env = sandbox(undefined=undefined, finalize=_escape)
    try:
        return env.from_string(text).render(**context)
    except Exception as exc:  # a template is code: whatever it raises is the document's fault
        error = render_error(exc)
    raise error


def _without_comments(text: str) -> str:
    """``text`` without its ``{# ... #}`` comments, in one pass: a search for each comment's end
    from each ``{#`` (``\\{#.*?#\\}``) took quadratic time on many that never end."""
    kept: list[str] = []
    position = 0
    while (start := text.find("{#", position)) >= 0:
        end = text.find("#}", start + 2)
        if end < 0:
            break  # no comment ends after this one starts, so none after it does either
        kept.append(text[position:start])
        position = end + 2
    kept.append(text[position:])
    return "".join(kept)


def _escape(value: Any) -> Any:
    """A template value as ragit's renderer escapes it: it cannot open a turn or a media token.
    ``|safe`` values are kept as they are."""
    if getattr(value, "__html__", None) is not None:  # jinja2's Markup, from |safe
        return value
    return str(value).replace("&", "&amp;").replace("|>", "|&gt;").replace("<|", "&lt;|")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class _Reader:
    def __init__(self, strict: bool, base_dir: Path) -> None:
        self.strict = strict
        self.base_dir = base_dir
        self.role: str | None = None
        self.lines: list[str] = []
        self.schema: str | None = None
        self.turns: list[tuple[str, str]] = []

    def line(self, line: str) -> None:
        trimmed = line.strip()
        if trimmed.startswith("<|") and trimmed.endswith("|>") and len(trimmed) > 4:
            name = trimmed[2:-2].lower()
            if name in _TURNS:
                self.close()
                self.role = name
                return
            if self.strict and name.isascii() and name.isalpha():
                raise ConfigurationError(f"PDL document: <|{trimmed[2:-2]}|> is not a turn")
        self.lines.append(line)

    def close(self) -> None:
        content = "\n".join(self.lines).strip()
        self.lines = []
        role = self.role
        if role is None:
            if not content:
                return
            if self.strict:
                raise ConfigurationError(
                    "PDL document: text comes before the first turn (<|user|>, <|system|>...)"
                )
            role = "system"
        if role == "schema":
            if self.schema is not None and self.strict:
                raise ConfigurationError("PDL document: <|schema|> appears more than once")
            self.schema = content
        elif role != "reasoning":
            self.turns.append((role, content))

    def finish(self) -> PdlDocument:
        self.close()
        if self.turns and not self.turns[-1][1]:
            self.turns.pop()  # an empty last turn (``<|assistant|>`` to end on) is left out
        if self.strict:
            self.validate()
        output = (
            TextOutput() if self.schema is None else load_schema(self.schema, strict=self.strict)
        )
        return PdlDocument(output, tuple(self.message(role, c) for role, c in self.turns))

    def validate(self) -> None:
        """ragit's checks of a document's turns."""
        if not self.turns:
            raise ConfigurationError("PDL document: it has no turns")
        for index, ((role, _), previous) in enumerate(
            zip(self.turns, [None, *self.turns], strict=False)
        ):
            if role == "system" and index != 0:
                raise ConfigurationError("PDL document: <|system|> must be the first turn")
            if previous is not None and role == previous[0] and role in ("user", "assistant"):
                raise ConfigurationError(f"PDL document: <|{role}|> appears twice in a row")
        if self.turns[-1][0] == "assistant":
            raise ConfigurationError("PDL document: it ends with <|assistant|>")

    def message(self, role: str, content: str) -> PdlMessage:
        if role == "system":
            return System(_unescape(content))
        parts: list[Any] = []
        position = 0
        for match in _MEDIA.finditer(content):
            if content[position : match.start()].strip():
                parts.append(_unescape(content[position : match.start()].strip()))
            parts.append(self.media(match.group(1), match.group(2)))
            position = match.end()
        if content[position:].strip() or not parts:
            parts.append(_unescape(content[position:].strip()))
        return UserTurn(*parts) if role == "user" else ModelTurn(*parts)

    def media(self, kind: str, argument: str) -> Any:
        if kind == "media":
            return Image.from_path(self.base_dir / argument.strip())
        _, sep, data = argument.partition(":")
        try:
            if not sep:
                raise binascii.Error("expected <|raw_media(type:BASE64)|>")
            return Image.from_bytes(base64.b64decode(data.strip(), validate=True))
        except (binascii.Error, ValueError) as exc:
            raise ConfigurationError(f"PDL document: bad raw_media ({exc})") from None
