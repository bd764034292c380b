"""An incremental JSON parser for an answer that is still arriving, and the values it shows.

Theory of operation. The parser keeps its state between chunks (the stack of open objects and
lists, and the token being read), so each character is looked at once: the cost of a stream is
linear in its size however finely it is chunked. Re-parsing the whole buffer on every chunk (what
``jiter``'s partial mode and pydantic's ``experimental_allow_partial`` are built for) is quadratic.

What it builds only grows. A value is put into its parent only once it is complete (a number once
the character after it arrives, so ``12`` of ``123`` is never shown; ``true`` once its last letter
has; a string once its closing quote has), and a complete value is never touched again (a key
given twice is the one exception: it is counted, see ``_Frame.edits``). Only the containers on
the *open path* (the stack) still change, so a snapshot is the open path with each container's
current length, taken in O(depth).

Turning snapshots into values is the job of :class:`Live`: it keeps the value it showed last and
extends it with what arrived since (new members are appended, a growing string's new pieces are
decoded once), so showing every snapshot of a stream costs time linear in the answer, not the
sum of the sizes of everything shown. :func:`materialize` builds one snapshot's value afresh.

A :class:`Shape` says how each position is shown: ``hide`` (never: a checked field, whose value
is only shown once the whole answer passed its checks), ``hold`` (only once complete),
``grow`` (a string shown while it is written) and ``needs`` (an object shown only once these
keys have values). A string inside a string, a ``}`` or an escaped quote inside one, changes
nothing: string contents are skipped with one regex search, escapes included.

In a reply that may hold prose (prompt mode), the answer is looked for the way
``_extract.extract_json`` finds it in the whole reply: inside a JSON code fence, or an object
(``{...}``, the ``{"value": ...}`` envelope included) in the prose; a bare list only where the
reply starts with it, since prose is full of ``[1]``-style citations. An empty object in the
prose (``use {} for none``) is passed over, and an answer in the prose is given up for a JSON
fence that follows it (``JsonStream.restarts`` counts that).
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable
from itertools import islice
from typing import Any

_STRING_STOP = re.compile(r'["\\]')
_BLANKS = re.compile(r"[ \t\n\r]*")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z")
_WORDS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}
_BLANK = " \t\n\r"
#: Where prose may change what is looked for: a line's end, or a value's opening.
_PROSE_STOP = re.compile(r"[\n{\[]")
#: Code fence tags whose content is read as JSON (``_extract`` reads the same ones).
_JSON_TAGS = frozenset({"", "json", "jsonc", "json5", "javascript", "js"})
_FENCE_INFO = 64  # characters of a fence's info string worth keeping: its tag comes first
#: Decodes a string's escapes (``scanstring(text, start, strict)``), as ``json.loads`` does.
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# Parser states.
SEEK = 0  # before the root value: pass over prose (or, strict, fail on anything else)
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
WATCH = 11  # an answer from the prose is complete; a JSON fence after it would replace it
DONE = 12  # the root value is complete
FAILED = 13  # not JSON: nothing more is shown

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
    """An open object or list: its complete members so far, and the member being read.

    ``edits`` counts keys given a second time (JSON lets an object repeat a key; the last value
    wins, as pydantic reads it): the one change to a member already shown.
    """

    __slots__ = ("edits", "items", "key", "shape", "shown", "waiting")

    def __init__(self, items: dict[str, Any] | list[Any], shape: Shape, shown: bool) -> None:
        self.items = items
        self.shape = shape
        self.key: str | None = None
        self.edits = 0
        self.waiting: set[str] | None = set(shape.needs) if shape.needs else None
        self.shown = shown and self.waiting is None


Level = tuple[Any, int, Any, int]
"""One shown container of the open path: (container, length, key of the open member, edits)."""

Snapshot = tuple[tuple[Level, ...], "tuple[list[str], int] | None"]
"""The shown part of the open path, outermost first, then the growing string (its raw pieces
and how many of them) or None."""

#: Called with the start and end offsets (in the whole text) of each complete list member.
ItemHook = Callable[[int, int], None]


class JsonStream:
    """Feed it the answer's text in chunks; it says when what it shows has changed.

    ``lenient`` looks for the answer in prose (see the module docstring) and stops at its end;
    otherwise the text must be one JSON value. ``envelope``: the answer is ``{"value": ...}``,
    so an object in prose with another first key is not it. ``bare_list`` reads a list where
    the object should be as ``{"value": [...]}`` (models often answer the bare value).
    ``on_item(start, end)`` is told the offsets of each complete member of the list in
    ``{"value": [...]}``.
    """

    def __init__(
        self,
        shape: Shape,
        *,
        lenient: bool = True,
        envelope: bool = False,
        bare_list: bool = False,
        on_item: ItemHook | None = None,
    ) -> None:
        self.shape = shape
        self.lenient = lenient
        self.envelope = envelope or bare_list
        self.bare_list = bare_list
        self.bare = False  # reading a bare list as {"value": [...]}
        self.on_item = on_item
        self.state = SEEK
        self.stack: list[_Frame] = []
        self.root: dict[str, Any] | None = None
        self.root_edits = 0
        #: How many times an answer already read was given up for a later one.
        self.restarts = 0
        self.offset = 0  # of the current chunk in the whole text
        self.changed = False
        self.error: str | None = None
        # The token being read: a string's or a number's raw pieces, or a word's characters.
        self.pieces: list[str] = []
        self.escaped = False  # the last piece ended with a backslash
        self.token = ""
        self.token_shape = ANY
        self.item_start = 0
        # Where the prose is (lenient only): see _prose.
        self.fresh = True  # nothing but blanks so far
        self.line = 0  # blanks at the start of the current line, or -1 past its start
        self.run_char = ""  # the backticks or tildes a line starts with, and how many
        self.run = 0
        self.info: list[str] | None = None  # a fence line's info string, until its end
        self.info_size = 0
        self.fence_run = 0  # that line's run of backticks or tildes
        self.fence: tuple[str, int, bool] | None = None  # the open fence: char, run, JSON?
        self.in_prose = False  # the root started in prose (not a fence, not the reply's start)

    @property
    def done(self) -> bool:
        """Whether the root value is complete (a lenient parser may still give it up for a
        JSON fence that follows it in prose)."""
        return self.state in (WATCH, DONE)

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    def feed(self, chunk: str) -> bool:
        """Read ``chunk``; True when a snapshot would now show something new."""
        self.changed = False
        if self.state >= DONE:
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
            elif state in (SEEK, WATCH):
                i = self._prose(chunk, i) if self.lenient else self._seek(chunk, i)
            elif chunk[i] in _BLANK:
                i = _BLANKS.match(chunk, i).end()  # type: ignore[union-attr]
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
            top = self.stack[-1]
            if self.envelope and self.in_prose and len(self.stack) == 1 and text != "value":
                self._fail("an object in the prose that is not the answer's envelope")
                return
            top.key = text
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

    # -- before the root -------------------------------------------------------------------
    def _seek(self, chunk: str, i: int) -> int:
        """Strict: blanks, then the root object (or a bare list, with ``bare_list``)."""
        c = chunk[i]
        if c in _BLANK:
            return _BLANKS.match(chunk, i).end()  # type: ignore[union-attr]
        if c == "{" or (c == "[" and self.bare_list):
            return self._open_answer(chunk, i)
        self._fail("the answer does not start with a JSON value")
        return i

    def _prose(self, chunk: str, i: int) -> int:
        """Lenient: pass over prose to where the answer starts (see the module docstring).

        Code fences are told by CommonMark's rule: up to three blanks, then three or more
        backticks or tildes at a line's start. Only the start of each line is looked at closely;
        the rest of a line is skipped with one regex search to its end or its next bracket.
        """
        n = len(chunk)
        while i < n:
            if self.info is not None:  # the rest of a fence line: its info string
                j = chunk.find("\n", i)
                end = n if j < 0 else j
                if self.info_size < _FENCE_INFO:
                    piece = chunk[i : min(end, i + _FENCE_INFO)]
                    self.info.append(piece)
                    self.info_size += len(piece)
                if j < 0:
                    return n
                self._fence_line("".join(self.info))
                self.info = None
                self.line = 0
                i = j + 1
                continue
            c = chunk[i]
            if self.line >= 0:  # a line's start: up to three blanks, then maybe a fence
                if self.run == 0 and c == " " and self.line < 3:
                    self.line += 1
                    i += 1
                    continue
                if (c == "`" or c == "~") and (self.run == 0 or c == self.run_char):
                    self.run_char = c
                    self.run += 1
                    self.fresh = False
                    i += 1
                    continue
                run, self.run, self.line = self.run, 0, -1
                if run >= 3:
                    self.info = []
                    self.info_size = 0
                    self.fence_run = run
                    continue  # c starts the info string (or ends the line)
            if c == "\n":
                self.line = 0
                i += 1
                continue
            fence = self.fence
            if fence is not None and not fence[2]:  # a fence of something else: skip its lines
                j = chunk.find("\n", i)
                i = n if j < 0 else j
                continue
            found = _PROSE_STOP.search(chunk, i)
            j = n if found is None else found.start()
            if j > i:
                if self.fresh and chunk[i:j].strip(_BLANK):
                    self.fresh = False
                i = j
                continue
            # "{" or "[" (a line's end was dealt with above)
            fenced = fence is not None
            if (self.state == SEEK or fenced) and (
                c == "{" or (self.bare_list and (fenced or self.fresh))
            ):
                return self._open_answer(chunk, i)
            self.fresh = False
            i += 1
        return n

    def _fence_line(self, info: str) -> None:
        """A line that starts with a run of backticks or tildes: a fence opens or closes."""
        char, run, fence = self.run_char, self.fence_run, self.fence
        if fence is None:
            if char == "`" and "`" in info:
                return  # inline code (```x```), not a fence
            words = info.split(maxsplit=1)
            self.fence = (char, run, (words[0].lower() if words else "") in _JSON_TAGS)
        elif char == fence[0] and run >= fence[1] and not info.strip():
            self.fence = None

    def _open_answer(self, chunk: str, i: int) -> int:
        """The root value starts at ``chunk[i]`` (a ``{``, or a bare list's ``[``)."""
        self.in_prose = self.lenient and self.fence is None and not self.fresh
        self.fresh = False
        self.line = -1
        if self.state == WATCH:  # a JSON fence after an answer in prose: this one counts
            self.restarts += 1
            self.root = None
        if chunk[i] == "[":
            # A bare list where {"value": [...]} was asked for: read it as that envelope.
            self._open_root().key = "value"
            self.bare = True
            self.state = VALUE
            return i
        self._open_root()
        self.state = FIRST_KEY
        return i + 1

    def _open_root(self) -> _Frame:
        shape = self.shape
        frame = _Frame({}, shape, not shape.hide and not shape.hold)
        self.stack.append(frame)
        self.changed = self.changed or frame.shown
        return frame

    # -- structure -------------------------------------------------------------------------
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
        if self.on_item is not None and self._in_answer_list():
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

    def _in_answer_list(self) -> bool:
        """Whether the top of the stack is the list in ``{"value": [...]}``."""
        stack = self.stack
        return len(stack) == 2 and stack[0].key == "value" and type(stack[1].items) is list

    def _close(self, end: int) -> None:
        frame = self.stack.pop()
        if self.stack:
            self._put(frame.items, frame.shape, end)
            return
        self.root = frame.items  # type: ignore[assignment]
        self.root_edits = frame.edits
        self.changed = True
        self.bare = False
        if not self.in_prose:
            self.state = DONE
        elif frame.items:
            self.state = WATCH  # a JSON fence may still follow with the answer
        else:
            self.root = None  # "{}" in the prose ("use {} for none"): not the answer
            self.state = SEEK
        self.line = -1

    def _put(self, value: Any, shape: Shape, end: int) -> None:
        """A complete value joins the open container on top of the stack."""
        top = self.stack[-1]
        self.state = AFTER
        if not shape.hide:
            items = top.items
            if type(items) is dict:
                key: str = top.key  # type: ignore[assignment]
                if key in items:
                    top.edits += 1
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
        if self.on_item is not None and self._in_answer_list():
            self.on_item(self.item_start, self.offset + end)
        if self.bare and len(self.stack) == 1:  # the bare list was the whole answer
            self._close(end)

    def _fail(self, why: str) -> None:
        if self.lenient and not any(frame.items for frame in self.stack):
            # Braces in prose before the JSON ("{Here it is}: {...}"): look for the next one.
            self.stack.clear()
            self.state = SEEK
            self.bare = False
            self.line = -1
            return
        self.error = why
        self.state = FAILED

    # -- what is shown ---------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """What is shown now, in O(depth): see :class:`Live` and :func:`materialize`."""
        if self.state in (WATCH, DONE):
            root = self.root if not self.shape.hide else None
            if root is None:
                return (), None
            return ((root, len(root), None, self.root_edits),), None
        levels = []
        for frame in self.stack:
            if not frame.shown:
                break
            levels.append((frame.items, len(frame.items), frame.key, frame.edits))
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


# -- values --------------------------------------------------------------------------------


def materialize(snapshot: Snapshot) -> Any:
    """The value a snapshot shows, built afresh: its open containers copied at their lengths
    then, holding the complete members they had (shared, never copied: they no longer change)
    and the open member above them. None when nothing is shown. O(the containers' lengths):
    :class:`Live` shows a stream's snapshots one after another for what changed."""
    levels, string = snapshot
    child: Any = _NOTHING if string is None else growing_text(*string)
    for items, count, key, _ in reversed(levels):
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
    for index, (items, count, key, _) in enumerate(levels):
        last = index == len(levels) - 1
        if last and string is None:
            break
        path.append(key if type(items) is dict else count)
    return tuple(path)


def growing_text(pieces: list[str], count: int) -> str:
    """The text of a string's first ``count`` raw pieces, without an escape cut in half (or
    the high half of a surrogate pair whose low half may follow)."""
    decoder = TextDecoder(pieces)
    return decoder.upto(count)


class TextDecoder:
    """The decoded text of a growing string's raw pieces, extended as pieces arrive: each piece
    is decoded once. An escape cut between two pieces waits for its end, and the high half of
    a surrogate pair for the next piece, which may hold its low half."""

    __slots__ = ("broken", "carry", "pieces", "text", "used")

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.used = 0  # pieces read
        self.carry = ""  # their raw end that is not decoded yet
        self.text = ""
        self.broken = False  # an invalid escape: the string is shown no further

    def upto(self, count: int) -> str:
        """The text of the first ``count`` pieces (``count`` never goes down)."""
        if count <= self.used or self.broken:
            return self.text
        raw = self.carry + "".join(self.pieces[self.used : count])
        self.used = count
        cut = _decodable(raw)
        head, self.carry = raw[:cut], raw[cut:]
        if "\\" in head:
            try:
                head = _scanstring(head + '"', 0, False)[0]
            except ValueError:
                self.broken = True
                return self.text
        if head:
            self.text += head  # a new str of the whole text: what a str showing it costs
        return self.text


def _decodable(raw: str) -> int:
    """How much of a string's raw text can be decoded: up to an escape cut short at its end,
    or a high surrogate (escaped or not) there. One step per backslash."""
    n = len(raw)
    cut = n
    last_u = -1
    i = raw.find("\\")
    while i >= 0:
        if i + 1 == n or (raw[i + 1] == "u" and i + 6 > n):
            cut = i
            break
        if raw[i + 1] == "u":
            last_u = i
            i = raw.find("\\", i + 6)
        else:
            i = raw.find("\\", i + 2)
    if last_u >= 0 and last_u + 6 == cut and raw[cut - 4] in "dD" and raw[cut - 3] in "89abAB":
        return last_u
    if cut and "\ud800" <= raw[cut - 1] <= "\udbff":
        return cut - 1
    return cut


class Live:
    """The values a stream's snapshots show, one after another, each built from the one before.

    It keeps the value it showed last (a mirror of the shown open path: its own dicts and lists,
    holding the parser's complete members) and brings it forward to a later snapshot by adding
    what arrived since: new members are appended, a growing string's new pieces decoded. So a
    stream's snapshots are shown in time linear in the answer, however many there are.

    Showing a snapshot changes the value shown before in place, so :meth:`show` is told who
    holds that value: while its ``owner`` (the partial it was built for) is alive, the next
    snapshot gets values of its own, and what was handed out stays as it was.
    """

    __slots__ = ("mirrors", "owner", "position", "text")

    def __init__(self) -> None:
        self.mirrors: list[_Mirror] = []
        self.text: TextDecoder | None = None
        self.owner: weakref.ref[Any] | None = None
        #: The number of the snapshot shown last.
        self.position = -1

    def show(self, snapshot: Snapshot, position: int, owner: Any) -> Any:
        """The value ``snapshot`` (numbered ``position``, at least :attr:`position`: an earlier
        snapshot is built afresh with :func:`materialize`) shows, now held by ``owner``."""
        held = self.owner() if self.owner is not None else None
        if held is not None and held is not owner:
            self.mirrors = []  # what the living holder has stays as it is
        self.owner = weakref.ref(owner)
        self.position = position
        levels, string = snapshot
        child: Any = _NOTHING
        if string is not None:
            pieces, count = string
            text = self.text
            if text is None or text.pieces is not pieces:
                text = self.text = TextDecoder(pieces)
            child = text.upto(count)
        mirrors = self.mirrors
        # The open path is one chain: where a container is the same, so is every one above.
        same = min(len(mirrors), len(levels))
        while same and mirrors[same - 1].source is not levels[same - 1][0]:
            same -= 1
        if same < len(mirrors):
            del mirrors[same:]
        for level in levels[same:]:
            mirrors.append(_Mirror(level[0]))
        for index in range(len(levels) - 1, -1, -1):
            _, count, key, edits = levels[index]
            mirror = mirrors[index]
            if not mirror.update(count, key, edits, child) and index < same:
                break  # kept as it was, so is everything above it (it is their open member)
            child = mirror.value
        return mirrors[0].value if mirrors else None


class _Mirror:
    """One shown container of the open path, as :class:`Live` shows it: the parser's complete
    members (``done`` of them so far) and then the open member, if it is shown (``slot``)."""

    __slots__ = ("child", "done", "edits", "slot", "source", "value")

    def __init__(self, source: Any) -> None:
        self.source = source
        self.value: Any = {} if type(source) is dict else []
        self.done = 0
        self.edits = 0
        self.slot: Any = _NOTHING  # the open member's key (a list: True) when it is shown
        self.child: Any = _NOTHING  # and what it is

    def update(self, count: int, key: str | None, edits: int, child: Any) -> bool:
        """Bring the value to ``count`` complete members and ``child`` open at ``key``;
        whether anything here changed."""
        value = self.value
        is_list = type(value) is list
        if count == self.done and edits == self.edits:
            slot = _NOTHING if child is _NOTHING else True if is_list else key
            if slot == self.slot:
                if child is self.child:
                    return False
                if is_list:
                    value[-1] = child
                else:
                    value[key] = child
                self.child = child
                return True
        source, done = self.source, self.done
        if is_list:
            if self.slot is not _NOTHING:
                value.pop()
            if count > done:
                value.extend(source[done:count])
        else:
            if edits != self.edits:  # a key was given again: show the object afresh
                value.clear()
                done = 0
                self.edits = edits
                self.slot = _NOTHING
            old = self.slot
            if old is not _NOTHING:
                if old in source:  # complete now, or a key given again still being read
                    value[old] = source[old]
                else:
                    del value[old]
            if count > done:
                if len(source) == count:  # the usual case: the new members are the last ones
                    new = list(islice(reversed(source.items()), count - done))
                    new.reverse()
                    value.update(new)
                else:
                    value.update(islice(source.items(), done, count))
        self.done = max(count, done)
        self.slot = self.child = _NOTHING
        if child is not _NOTHING:
            if is_list:
                value.append(child)
                self.slot = True
            elif key is not None:
                value[key] = child
                self.slot = key
            self.child = child
        return True


def agrees(shown: Any, final: Any, opened: tuple[str | int, ...]) -> bool:
    """Whether ``shown`` (what a partial showed, open at ``opened``) is a beginning of
    ``final`` (the answer's JSON): equal off the open path; on it, an object with some of the
    keys, a list with its first members, a string's first characters. The walk is O(depth);
    the complete members are compared with ``==``."""
    if not opened:  # the end of the open path: a container still open, or a growing string
        if type(shown) is dict:
            return type(final) is dict and all(
                key in final and value == final[key] for key, value in shown.items()
            )
        if type(shown) is list:
            return type(final) is list and shown == final[: len(shown)]
        if type(shown) is str:
            return type(final) is str and final.startswith(shown)
        return bool(shown == final)
    head, rest = opened[0], opened[1:]
    if type(shown) is dict and type(final) is dict:
        for key, value in shown.items():
            if key not in final:
                return False
            if key == head:
                if not agrees(value, final[key], rest):
                    return False
            elif value != final[key]:
                return False
        return True
    if type(shown) is list and type(final) is list:
        last = len(shown) - 1
        return (
            head == last
            and len(shown) <= len(final)
            and shown[:last] == final[:last]
            and agrees(shown[last], final[last], rest)
        )
    return False


_NOTHING: Any = object()
