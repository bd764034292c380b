"""An incremental JSON parser for an answer that is still arriving, and snapshots of what it shows.

Theory of operation. The parser keeps its state between chunks (the stack of open objects and
lists, and the token being read), so each character is looked at once: the cost of a stream is
linear in its size however finely it is chunked. Re-parsing the whole buffer on every chunk (what
``jiter``'s partial mode and pydantic's ``experimental_allow_partial`` are built for) is quadratic.

What it builds only grows. A value is put into its parent only once it is complete (a number once
the character after it arrives, so ``12`` of ``123`` is never shown; ``true`` once its last letter
has; a string once its closing quote has), and a complete value is never touched again. Only the
containers on the *open path* (the stack) still change, so a snapshot is the open path with each
container's current length: taken in O(depth), turned into values only when someone reads it.

A :class:`Shape` says how each position is shown: ``hide`` (never: a checked field, whose value
is only shown once the whole answer passed its checks), ``hold`` (only once complete),
``grow`` (a string shown while it is written) and ``needs`` (an object shown only once these
keys have values). A string inside a string, a ``}`` or an escaped quote inside one, changes
nothing: string contents are skipped with one regex search, escapes included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import islice
from typing import Any

_STRING_STOP = re.compile(r'["\\]')
_BLANKS = re.compile(r"[ \t\n\r]*")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z")
_WORDS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}
_BLANK = " \t\n\r"
_BRACE = re.compile(r"\{")
_OPENING = re.compile(r"[{\[]")

# Parser states.
SEEK = 0  # before the root object: skip to its "{"
VALUE = 1  # a value must come
FIRST_VALUE = 2  # after "[": a value or "]"
FIRST_KEY = 3  # after "{": a key or "}"
KEY = 4  # after "," in an object: a key
COLON = 5
AFTER = 6  # after a value: "," or the container's end
STRING = 7
KEY_STRING = 8
NUMBER = 9
WORD = 10  # true, false or null
DONE = 11  # the root object is complete
FAILED = 12  # not JSON: nothing more is shown

#: A position not in the shape (an unknown key): shown as it arrives, strings only complete.
_NO_FIELDS: dict[str, Shape] = {}


class Shape:
    """How one position of the answer is shown while it streams (see the module docstring)."""

    __slots__ = ("fields", "grow", "hide", "hold", "item", "needs")

    def __init__(
        self,
        *,
        fields: dict[str, Shape] | None = None,
        item: Shape | None = None,
        hold: bool = False,
        hide: bool = False,
        grow: bool = False,
        needs: frozenset[str] = frozenset(),
    ) -> None:
        self.fields = _NO_FIELDS if fields is None else fields
        self.item = item
        self.hold = hold
        self.hide = hide
        self.grow = grow
        self.needs = needs

    def field(self, key: str) -> Shape:
        return self.fields.get(key, ANY)

    def items(self) -> Shape:
        return self.item if self.item is not None else ANY


ANY = Shape()


class _Frame:
    """An open object or list: its complete members so far, and the member being read."""

    __slots__ = ("items", "key", "shape", "shown", "waiting")

    def __init__(self, items: dict[str, Any] | list[Any], shape: Shape, shown: bool) -> None:
        self.items = items
        self.shape = shape
        self.key: str | None = None
        self.waiting: set[str] | None = set(shape.needs) if shape.needs else None
        self.shown = shown and self.waiting is None


Snapshot = tuple[tuple[tuple[Any, int, Any], ...], "tuple[list[str], int] | None"]
"""The shown part of the open path: (container, length, key of the open member) per level, then
the growing string (its raw pieces and how many of them) or None."""

#: Called with the start and end offsets (in the whole text) of each complete list member.
ItemHook = Callable[[int, int], None]


class JsonStream:
    """Feed it the answer's text in chunks; it says when what it shows has changed.

    ``lenient`` skips text before the root object (prose, a code fence) and stops at its end;
    otherwise the text must be one JSON object. ``bare_list`` reads a list where the object
    should be as ``{"value": [...]}`` (models often answer the bare value). ``on_item(start,
    end)`` is told the offsets of each complete member of the list in ``{"value": [...]}``.
    """

    def __init__(
        self,
        shape: Shape,
        *,
        lenient: bool = True,
        bare_list: bool = False,
        on_item: ItemHook | None = None,
    ) -> None:
        self.shape = shape
        self.lenient = lenient
        self.bare_list = bare_list
        self.bare = False  # reading a bare list as {"value": [...]}
        self.on_item = on_item
        # The stack's depth while a member of {"value": [...]}'s list is read.
        self.item_depth = 2 if on_item is not None else -1
        self.state = SEEK
        self.stack: list[_Frame] = []
        self.root: dict[str, Any] | None = None
        self.offset = 0  # of the current chunk in the whole text
        self.changed = False
        self.error: str | None = None
        # The token being read: a string's or a number's raw pieces, or a word's characters.
        self.pieces: list[str] = []
        self.escaped = False  # the last piece ended with a backslash
        self.token = ""
        self.token_shape = ANY
        self.item_start = 0

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    def feed(self, chunk: str) -> bool:
        """Read ``chunk``; True when a snapshot would now show something new."""
        self.changed = False
        state = self.state
        if state >= DONE:
            return False
        i, n = 0, len(chunk)
        while i < n and self.state < DONE:
            state = self.state
            if state in (STRING, KEY_STRING):
                i = self._string(chunk, i, n)
            elif state == NUMBER:
                i = self._number(chunk, i, n)
            elif state == WORD:
                i = self._word(chunk, i, n)
            elif chunk[i] in _BLANK:
                i = _BLANKS.match(chunk, i).end()  # type: ignore[union-attr]
            elif state == SEEK:
                i = self._seek(chunk, i)
            else:
                i = self._structure(chunk, i)
        self.offset += n
        return self.changed

    # -- tokens ----------------------------------------------------------------------------
    def _string(self, chunk: str, i: int, n: int) -> int:
        start = i
        if self.escaped:  # the character after a backslash that ended the last chunk
            self.escaped = False
            i += 1
        while True:
            found = _STRING_STOP.search(chunk, i)
            if found is None:
                if start < n:
                    self._grow(chunk[start:])
                return n
            j = found.start()
            if chunk[j] == "\\":
                if j + 1 < n:
                    i = j + 2
                    continue
                self.escaped = True
                self._grow(chunk[start:])
                return n
            if start < j:
                self.pieces.append(chunk[start:j])
            self._end_string(j + 1)
            return j + 1

    def _grow(self, piece: str) -> None:
        self.pieces.append(piece)
        if self.state == STRING:
            shape = self.token_shape
            if shape.grow and not shape.hide and not shape.hold and self.stack[-1].shown:
                self.changed = True

    def _end_string(self, end: int) -> None:
        raw = "".join(self.pieces)
        self.pieces = []
        if "\\" in raw:
            try:
                text = json.loads(f'"{raw}"')
            except ValueError:
                self._fail("a string has an invalid escape")
                return
        else:
            text = raw
        if self.state == KEY_STRING:
            self.stack[-1].key = text
            self.state = COLON
        else:
            self._put(text, self.token_shape, end)

    def _number(self, chunk: str, i: int, n: int) -> int:
        # A number's pieces are kept in a list and joined once: adding each chunk to a string
        # copied the digits so far every time, quadratic in a long number sent in small chunks.
        end = _NUMBER_CHARS.match(chunk, i).end()  # type: ignore[union-attr]
        self.pieces.append(chunk[i:end])
        if end == n:
            return n  # the number may go on in the next chunk
        token = "".join(self.pieces)
        self.pieces = []
        match = _JSON_NUMBER.match(token)
        if match is None:
            self._fail(f"{token[:40]!r} is not a JSON number")
            return end
        try:
            value: int | float = float(token) if match.group(1) or match.group(2) else int(token)
        except ValueError:  # more digits than int() reads (sys.get_int_max_str_digits())
            self._fail("a number is out of range")  # as the whole answer's parser says
            return end
        self._put(value, self.token_shape, end)
        return end

    def _word(self, chunk: str, i: int, n: int) -> int:
        word, value = _WORDS[self.token[0]]
        need = len(word) - len(self.token)
        taken = chunk[i : i + need]
        self.token += taken
        end = i + len(taken)
        if self.token == word:
            self._put(value, self.token_shape, end)
        elif not word.startswith(self.token):
            self._fail(f"{self.token!r} is not a JSON value")
        return end

    # -- structure -------------------------------------------------------------------------
    def _seek(self, chunk: str, i: int) -> int:
        c = chunk[i]
        if c == "{":
            self._open_root()
            self.state = FIRST_KEY
            return i + 1
        if c == "[" and self.bare_list:
            # A bare list where {"value": [...]} was asked for: read it as that envelope.
            self._open_root().key = "value"
            self.bare = True
            self.state = VALUE
            return i
        if not self.lenient:
            self._fail("the answer does not start with a JSON object")
            return i
        found = (_OPENING if self.bare_list else _BRACE).search(chunk, i)
        return len(chunk) if found is None else found.start()

    def _open_root(self) -> _Frame:
        shape = self.shape
        frame = _Frame({}, shape, not shape.hide and not shape.hold)
        self.stack.append(frame)
        self.changed = self.changed or frame.shown
        return frame

    def _structure(self, chunk: str, i: int) -> int:
        c = chunk[i]
        state = self.state
        if state == AFTER:
            top = self.stack[-1]
            if c == ",":
                self.state = KEY if type(top.items) is dict else VALUE
            elif c == "}" if type(top.items) is dict else c == "]":
                self._close(i + 1)
            else:
                self._fail(f"unexpected {c!r} after a value")
            return i + 1
        if state == COLON:
            if c == ":":
                self.state = VALUE
            else:
                self._fail(f"unexpected {c!r} after a key")
            return i + 1
        if state in (FIRST_KEY, KEY):
            if c == '"':
                self.state = KEY_STRING
                self.escaped = False
            elif c == "}" and state == FIRST_KEY:
                self._close(i + 1)
            else:
                self._fail(f"unexpected {c!r} where a key should be")
            return i + 1
        # VALUE or FIRST_VALUE
        if c == "]" and state == FIRST_VALUE:
            self._close(i + 1)
            return i + 1
        top = self.stack[-1]
        shape = top.shape.field(top.key) if type(top.items) is dict else top.shape.items()  # type: ignore[arg-type]
        if len(self.stack) == self.item_depth:
            self.item_start = self.offset + i
        if c == '"':
            self.state = STRING
            self.token_shape = shape
            self.escaped = False
            return i + 1
        if c == "{" or c == "[":
            frame = _Frame(
                {} if c == "{" else [],
                shape,
                top.shown and not shape.hide and not shape.hold,
            )
            self.stack.append(frame)
            self.state = FIRST_KEY if c == "{" else FIRST_VALUE
            self.changed = self.changed or frame.shown
            return i + 1
        if c == "-" or "0" <= c <= "9":
            self.state = NUMBER
            self.pieces = []
            self.token_shape = shape
            return i
        if c in _WORDS:
            self.state = WORD
            self.token = c
            self.token_shape = shape
            return i + 1
        self._fail(f"unexpected {c!r} where a value should be")
        return i + 1

    def _close(self, end: int) -> None:
        frame = self.stack.pop()
        if not self.stack:
            self.root = frame.items  # type: ignore[assignment]
            self.state = DONE
            self.changed = True
            return
        self._put(frame.items, frame.shape, end)

    def _put(self, value: Any, shape: Shape, end: int) -> None:
        """A complete value joins the open container on top of the stack."""
        top = self.stack[-1]
        self.state = AFTER
        if not shape.hide:
            items = top.items
            if type(items) is dict:
                key: str = top.key  # type: ignore[assignment]
                items[key] = value
                waiting = top.waiting
                if waiting is not None and key in waiting:
                    waiting.discard(key)
                    if not waiting:
                        top.waiting = None
                        below = self.stack[-2].shown if len(self.stack) > 1 else True
                        top.shown = below and not top.shape.hide and not top.shape.hold
            else:
                items.append(value)  # type: ignore[union-attr]
            if top.shown:
                self.changed = True
        if len(self.stack) == self.item_depth and self.on_item is not None:
            self.on_item(self.item_start, self.offset + end)
        if self.bare and len(self.stack) == 1:  # the bare list was the whole answer
            self._close(end)

    def _fail(self, why: str) -> None:
        if self.lenient and not any(frame.items for frame in self.stack):
            # Braces in prose before the JSON ("{Here it is}: {...}"): look for the next object.
            self.stack.clear()
            self.state = SEEK
            self.bare = False
            return
        self.error = why
        self.state = FAILED

    # -- what is shown ---------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """What is shown now, in O(depth): see :func:`materialize`."""
        if self.state == DONE:
            root = self.root if not self.shape.hide else None
            return (((root, len(root), None),) if root is not None else ()), None
        levels = []
        for frame in self.stack:
            if not frame.shown:
                break
            levels.append((frame.items, len(frame.items), frame.key))
        string = None
        if (
            self.state == STRING
            and len(levels) == len(self.stack)
            and self.token_shape.grow
            and not self.token_shape.hide
            and not self.token_shape.hold
            and self.pieces
        ):
            string = (self.pieces, len(self.pieces))
        return tuple(levels), string


def materialize(snapshot: Snapshot) -> Any:
    """The value a snapshot shows: its open containers copied at their lengths then, holding the
    complete members they had (shared, never copied: they no longer change) and the open member
    above them. None when nothing is shown."""
    levels, string = snapshot
    child: Any = _NOTHING if string is None else growing_text(*string)
    for items, count, key in reversed(levels):
        if type(items) is dict:
            copy: Any = dict(islice(items.items(), count)) if count < len(items) else dict(items)
            if child is not _NOTHING and key is not None:
                copy[key] = child
        else:
            copy = items[:count]
            if child is not _NOTHING:
                copy.append(child)
        child = copy
    return None if child is _NOTHING else child


def open_path(snapshot: Snapshot) -> tuple[str | int, ...]:
    """Where the member being written sits: every shown value not on this path is complete."""
    levels, string = snapshot
    path: list[str | int] = []
    for index, (items, count, key) in enumerate(levels):
        last = index == len(levels) - 1
        if last and string is None:
            break
        path.append(key if type(items) is dict else count)
    return tuple(path)


def growing_text(pieces: list[str], count: int) -> str:
    """The text of a string's first ``count`` raw pieces, without an escape cut in half."""
    raw = "".join(pieces[:count])
    if "\\" not in raw:
        return raw
    for _ in range(3):  # a cut escape, then the high half of a surrogate pair before it
        try:
            text: str = json.loads(f'"{raw}"')
        except ValueError:
            raw = raw[: raw.rfind("\\")]
            continue
        if text and "\ud800" <= text[-1] <= "\udbff":
            return text[:-1]
        return text
    return ""


_NOTHING: Any = object()
