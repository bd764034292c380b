"""Non-JSON outputs: yes/no, a code block, a task list, bounded text and "Key: value" lines.

Models are often better at plain English and markdown than at JSON, so these outputs send no
schema: their ``instructions`` go into the system prompt and ``parse`` extracts the value from
the reply. Extraction is strict where a guess would be wrong (two code blocks, both yes and no)
and tolerant of what real replies wrap around the answer (reasoning first, markdown emphasis,
indentation). A failed extraction raises InvalidOutput, so the model is asked again.

A reply is untrusted input, so every parser here takes time linear in its length: the regular
expressions are written so that each character can be matched one way only (no two repeats
compete for the same run of blanks), and longer scans are done by hand, line by line.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._output import InvalidOutput
from .errors import ConfigurationError

__all__ = ["BoundedText", "Code", "KeyValues", "Task", "TaskList", "YesNo"]


def _invalid(summary: str, problem: str) -> InvalidOutput:
    return InvalidOutput(summary, f"- {problem}")


# -- yes / no ---------------------------------------------------------------------------

_DECOR = re.compile(r"[*_`#>\"'\u201c\u201d\u2018\u2019()\[\]]")
#: What a reply may say for yes or for no. Whole-reply answers and ``Answer: ...`` lines take
#: every spelling here: the words distutils' strtobool and pydantic read (y/yes/t/true,
#: n/no/f/false) and the ones models write; a yes or no found in prose takes only the first,
#: unambiguous ones. strtobool's and pydantic's ``on``/``off`` and ``1``/``0`` are left out: they
#: spell a setting, and as a model's answer they answer another question ("On" to "Is the light
#: off?") or are a count, so such a reply is re-asked rather than read as a yes or a no.
_AFFIRM_WORDS = ("yes", "yeah", "yep", "yup")
_NEGATE_WORDS = ("no", "nope", "nah")
_AFFIRM_ANSWERS = (
    *_AFFIRM_WORDS,
    "y",
    "true",
    "t",
    "correct",
    "affirmative",
    "absolutely",
    "definitely",
    "certainly",
    "indeed",
    "sure",
)
_NEGATE_ANSWERS = (
    "absolutely not",
    "definitely not",
    "certainly not",
    "not at all",
    "of course not",
    *_NEGATE_WORDS,
    "n",
    "false",
    "f",
    "incorrect",
    "negative",
    "never",
)
_MEANING = {**dict.fromkeys(_AFFIRM_ANSWERS, "yes"), **dict.fromkeys(_NEGATE_ANSWERS, "no")}
_ANSWERS = "|".join(sorted(map(re.escape, _MEANING), key=len, reverse=True))
_WORDS = "|".join((*_AFFIRM_WORDS, *_NEGATE_WORDS))
_WORD = re.compile(rf"\b({_WORDS})\b", re.IGNORECASE)
_ALONE = re.compile(rf"^\W*({_ANSWERS})\W*$", re.IGNORECASE)
_MARKED = re.compile(rf"\banswer\b\W{{0,3}}(?:is\W{{0,3}})?({_ANSWERS})\b", re.IGNORECASE)
# A yes/no that starts the reply, a sentence or a line. The line case is matched from the start of
# its run of blanks only (the lookbehind), so a long run of newlines is crossed once, not once
# per newline.
_LEADING = re.compile(
    rf"(?:^|[.!?:;]\s+|(?<!\s)[^\S\n]*\n\s*)({_WORDS})(?=[,.!;:]|\s*$)", re.IGNORECASE
)
_UNSURE = re.compile(
    r"\b(?:do(?:es)?\s*n(?:o|'|\u2019)?t\s+know|not\s+sure|unsure|no\s+idea|uncertain|"
    r"unclear|it\s+depends|can(?:no|'|\u2019)?t\s+(?:tell|say|determine|answer|know)|"
    r"not\s+(?:possible|able)\s+to\s+(?:tell|say|determine|answer))\b",
    re.IGNORECASE,
)
_YESNO_ASK = "answer with exactly one word: yes or no"


@dataclass(frozen=True)
class YesNo:
    """A bool from a yes/no reply (``yes`` -> True). Often more reliable than a JSON boolean.

    Accepted: a bare ``Yes.``/``**No**`` (or ``Nope``, ``y``, ``true``, ``correct``, ``not at
    all``...), an ``Answer: yes`` line, or a final yes/no line after reasoning. Errors (re-asked):
    both yes and no, neither, "I don't know" (not a no), and a setting's ``on``/``off``/``1``/``0``.
    """

    expected: str = field(default="yes or no", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="yesno", init=False)
    value_type: type = field(default=bool, init=False, repr=False)

    def formatting_instructions(self) -> str:
        return 'Answer with a single word: "yes" or "no".'

    def example(self) -> str:
        """A reply this format accepts, for stand-in models such as the offline one."""
        return "yes"

    def render(self, value: bool) -> str:
        if not isinstance(value, bool):
            raise TypeError(f"a yes/no answer is a bool, got {type(value).__name__}")
        return "yes" if value else "no"

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def parse(self, text: str) -> bool:
        clean = _DECOR.sub("", text).strip()
        lines = [line.strip() for line in clean.splitlines() if line.strip()]
        strong = [m.group(1) for line in lines for m in [_ALONE.match(line)] if m]
        strong += _MARKED.findall(clean)
        if not strong:
            if _UNSURE.search(clean):
                raise _invalid(
                    "Model output does not commit to yes or no",
                    f"the reply does not commit to yes or no (it says it cannot tell); {_YESNO_ASK}",
                )
            strong = _LEADING.findall(clean) or _WORD.findall(clean)
        found = {_MEANING[" ".join(word.lower().split())] for word in strong}
        if found == {"yes"}:
            return True
        if found == {"no"}:
            return False
        if found:
            raise _invalid(
                "Model output says both yes and no",
                f"the reply says both yes and no; {_YESNO_ASK}",
            )
        raise _invalid(
            "Model output contains no yes or no",
            f"the reply does not say yes or no; {_YESNO_ASK}",
        )


# -- code -------------------------------------------------------------------------------

# Both patterns are unambiguous: each run of characters can be matched one way only, so a line
# that does not match fails at once instead of backtracking (a line of tildes ending in a
# backtick used to take cubic time).
_OPENING_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_CLOSING_FENCE = re.compile(r" {0,3}(`+|~+)[ \t]*")
_LINE_END = re.compile(r"\r\n|\r|\n")
_ALIASES = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "ts": "typescript",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "yml": "yaml",
    "c++": "cpp",
    "rs": "rust",
    "golang": "go",
}


def _lang(tag: str) -> str:
    tag = tag.lower()
    return _ALIASES.get(tag, tag)


@dataclass(frozen=True)
class _Fence:
    """An opening code fence: its indentation, character, length and language tag."""

    indent: int
    char: str
    length: int
    tag: str

    def closed_by(self, line: str) -> bool:
        """A closing fence: the same character, at least as long, nothing after but blanks."""
        match = _CLOSING_FENCE.fullmatch(line)
        if match is None:
            return False
        fence = match.group(1)
        return fence[0] == self.char and len(fence) >= self.length


def _opening_fence(line: str) -> _Fence | None:
    """The fence ``line`` opens, by CommonMark's rules: up to three spaces, three or more
    backticks or tildes, then an info string whose first word is the language. After backticks
    the info string may not hold a backtick (```` ```inline``` ```` is code, not a fence)."""
    match = _OPENING_FENCE.match(line)
    if match is None:
        return None
    indent, fence, info = match.groups()
    if fence[0] == "`" and "`" in info:
        return None
    words = info.split(None, 1)
    return _Fence(len(indent), fence[0], len(fence), words[0] if words else "")


def _markdown_lines(text: str) -> list[str]:
    """The lines of ``text`` at CommonMark's line endings only: ``str.splitlines`` also splits
    at form feeds and Unicode line separators, which code and JSON strings may hold."""
    lines = _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def _dedent(line: str, indent: int) -> str:
    """``line`` without up to ``indent`` leading spaces (the opening fence's indentation)."""
    return line[min(indent, len(line) - len(line.lstrip(" "))) :]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language tag, content) of each fenced code block, by CommonMark's fence rules.

    A block runs to a closing fence of the same character at least as long as the opening one
    (so a fence inside a longer fence is content); an unclosed block runs to the end.
    """
    blocks: list[tuple[str, str]] = []
    lines = _markdown_lines(text)
    i = 0
    while i < len(lines):
        fence = _opening_fence(lines[i])
        i += 1
        if fence is None:
            continue
        body: list[str] = []
        while i < len(lines) and not fence.closed_by(lines[i]):
            body.append(_dedent(lines[i], fence.indent))
            i += 1
        blocks.append((fence.tag, "\n".join(body)))
        i += 1
    return blocks


@dataclass(frozen=True)
class Code:
    """The content of the one fenced code block in the reply, without the fences.

    With ``language``, blocks tagged with another language are ignored (untagged blocks count
    only when no block carries the language). Two candidate blocks are an error, not a guess.
    """

    language: str | None = None
    expected: str = field(default="code", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="code", init=False)
    value_type: type = field(default=str, init=False, repr=False)

    def formatting_instructions(self) -> str:
        tag = self.language or ""
        what = f"{self.language} code" if self.language else "code"
        return (
            f"Put the {what} in a single fenced markdown code block, opening with ```{tag} and "
            "closing with ```. Give exactly one code block."
        )

    def example(self) -> str:
        """A reply this format accepts, for stand-in models such as the offline one."""
        return f"```{self.language or 'python'}\nprint('written by the alloy offline model')\n```"

    def render(self, value: str) -> str:
        if not isinstance(value, str):
            raise TypeError(f"code is a str, got {type(value).__name__}")
        return f"```{self.language or ''}\n{value}\n```"

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def parse(self, text: str) -> str:
        blocks = code_blocks(text)
        if self.language is not None:
            wanted = _lang(self.language)
            tagged = [b for b in blocks if _lang(b[0]) == wanted]
            candidates = tagged or [b for b in blocks if not b[0]]
        else:
            candidates = blocks
        what = f"{self.language} code block" if self.language else "code block"
        if not candidates:
            other = f" (found only {', '.join(sorted({b[0] for b in blocks}))})" if blocks else ""
            raise _invalid(
                f"Model output has no fenced {what}",
                f"the reply has no fenced {what}{other}; put the code in one block "
                f"opening with ```{self.language or ''} and closing with ```",
            )
        if len(candidates) > 1:
            raise _invalid(
                f"Model output has {len(candidates)} {what}s",
                f"the reply has {len(candidates)} {what}s; give exactly one",
            )
        content = candidates[0][1]
        if not content.strip():
            raise _invalid(f"The {what} is empty", f"the {what} is empty; put the code in it")
        return content


# -- task list --------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One item of a markdown task list."""

    text: str
    done: bool = False


# The task's text is taken to the end of the line and stripped in Python: a lazy ``(.*?)\s*$``
# rescans the blanks after every word, which is quadratic on a long gap. Any one character may
# mark a task, as ragit's PDL reads task lists (``[O]`` for done).
_TASK = re.compile(r"(\s*)(?:[-*+]|\d{1,9}[.)])[ \t]+\[([^\]\n])\]\s+(.*)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")


@dataclass
class _Draft:
    """A task being read: its text arrives in parts (continuation lines), joined once at the end
    so that many continuation lines cost linear time, not a copy of the text per line."""

    parts: list[str]
    mark: str

    def task(self) -> Task:
        return Task(" ".join(self.parts), not self.mark.isspace())


@dataclass(frozen=True)
class TaskList:
    """The markdown task list in the reply (``- [ ] todo``, ``- [x] done``) as ``list[Task]``.

    As in GitHub's task list items, a task whose mark is blank is open and any other mark (``x``,
    or the ``O`` or tick that models and ragit's PDL also write) is done.

    Prose around the list is ignored; two lists separated by prose are an error. Indented lines
    under an item continue its text; nested items are listed in order.
    """

    expected: str = field(default="markdown task list", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="tasklist", init=False)
    value_type: Any = field(default=list[Task], init=False, repr=False)

    def formatting_instructions(self) -> str:
        return (
            "Answer with a markdown task list, one item per line: `- [ ] task` for an open "
            "task, `- [x] task` for a done one."
        )

    def example(self) -> str:
        """A reply this format accepts, for stand-in models such as the offline one."""
        return "- [x] Read the request (alloy offline model)\n- [ ] Write a real answer"

    def render(self, value: list[Task]) -> str:
        if not isinstance(value, list) or not all(isinstance(t, Task) for t in value):
            raise TypeError("a task list is a list of alloy.Task")
        return "\n".join(f"- [{'x' if t.done else ' '}] {t.text}" for t in value)

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def parse(self, text: str) -> list[Task]:
        groups: list[list[_Draft]] = []
        current: list[_Draft] | None = None
        indent = 0
        for line in text.splitlines():
            match = _TASK.match(line)
            if match:
                if current is None:
                    current = []
                    groups.append(current)
                indent = len(match.group(1))
                current.append(_Draft([match.group(3).rstrip()], match.group(2)))
            elif not line.strip():
                continue
            elif current and len(line) - len(line.lstrip()) > indent and not _ITEM.match(line):
                current[-1].parts.append(line.strip())
            elif current is not None and not _ITEM.match(line):
                current = None  # prose ends the list
        if not groups:
            raise _invalid(
                "Model output has no markdown task list",
                "the reply has no markdown task list; write one item per line as `- [ ] task`",
            )
        if len(groups) > 1:
            raise _invalid(
                f"Model output has {len(groups)} separate task lists",
                f"the reply has {len(groups)} separate task lists; give exactly one list",
            )
        return [draft.task() for draft in groups[0]]


# -- bounded text -----------------------------------------------------------------------


_LONGEST_EXAMPLE = 1_000_000


@dataclass(frozen=True)
class BoundedText:
    """The whole reply as text (surrounding whitespace removed), of ``min``..``max`` characters."""

    min: int | None = None
    max: int | None = None
    expected: str = field(default="str", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="text", init=False)
    value_type: type = field(default=str, init=False, repr=False)

    def __post_init__(self) -> None:
        if (self.min is not None and self.min < 0) or (self.max is not None and self.max < 1):
            raise ConfigurationError("BoundedText: min must be >= 0 and max >= 1")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ConfigurationError(
                f"BoundedText: min ({self.min}) is greater than max ({self.max})"
            )

    def _bounds(self) -> str:
        if self.min is not None and self.max is not None:
            return f"between {self.min} and {self.max} characters"
        return (
            f"at least {self.min} characters"
            if self.min is not None
            else f"at most {self.max} characters"
        )

    def formatting_instructions(self) -> str | None:
        if self.min is None and self.max is None:
            return None
        return f"Answer in plain text of {self._bounds()}."

    def example(self) -> str:
        """A reply this format accepts, for stand-in models such as the offline one.

        A stand-in writes about a million characters at most: a larger ``min`` (a spec may ask
        for 10**20) is not met, and the call fails as it would with a real model.
        """
        text = "[alloy offline model] stand-in text."
        if self.min is not None and len(text) < self.min:
            wanted = min(self.min, _LONGEST_EXAMPLE)
            text = (text + " lorem") * (wanted // len(text) + 1)
        return text[: self.max].strip() if self.max is not None else text

    def render(self, value: str) -> str:
        if not isinstance(value, str):
            raise TypeError(f"text is a str, got {type(value).__name__}")
        return value

    @property
    def instructions(self) -> str | None:
        return self.formatting_instructions()

    def parse(self, text: str) -> str:
        value = text.strip()
        n = len(value)
        if (self.min is not None and n < self.min) or (self.max is not None and n > self.max):
            short = self.min is not None and n < self.min
            raise _invalid(
                f"Model output is too {'short' if short else 'long'}: {n} characters",
                f"the answer is too {'short' if short else 'long'}: it has {n} characters; it must "
                f"have {self._bounds()}",
            )
        return value


# -- key: value -------------------------------------------------------------------------


def _value_text(lines: list[str]) -> str:
    """A value's lines as one text: the key line's part, then the lines under it with their
    shared indentation removed and their own kept; blank lines at either end dropped."""
    first, rest = lines[0], textwrap.dedent("\n".join(lines[1:])) if len(lines) > 1 else ""
    return f"{first}\n{rest}".strip("\n").strip() if rest.strip() else first.strip()


# Each run of blanks belongs to exactly one ``[ \t]*`` (an optional marker takes its blanks with
# it), so a line that is not a key line fails in linear time. Two stars next to each other
# around an optional group made "blanks, a key, blanks and no colon" cubic.
_EMPHASIS = r"\*\*|__|\*|_"
_KEY_DECOR = rf"[ \t]*(?:(?:[-*+>]|\d{{1,9}}[.)]|#{{1,6}})[ \t]+)?(?:(?P<open>{_EMPHASIS})[ \t]*)?"


@dataclass(frozen=True)
class KeyValues:
    """``"Key: value"`` lines parsed into a dict with lower-cased keys (a SimpleOutputParser).

    Keys match case-insensitively at the start of a line, also bold, bulleted or indented
    (``**Answer:**``, ``- Answer:``). A value runs to the next key line: blank lines, fenced code
    blocks (taken as written, key-like lines in them included) and relative indentation are kept.
    A list item no further indented than the key line ends the value, unless the key introduces
    the list: a value whose key is a list item (``- Name: ...``) ends at the next item of that
    list, and one written on its key line (``Answer: 42``) ends at a list that follows it; a key
    with nothing after its colon (``Steps:``), or whose text ends with one (``Steps to take:``),
    takes the list below it. A list indented under the key is always the value's. A repeated
    key's values are joined with a newline; text before the first key (reasoning) and after a
    value's end is ignored. A missing key is an error.
    """

    keys: Sequence[str] = ()
    expected: str = field(default="key: value lines", init=False)
    schema: None = field(default=None, init=False)
    name: str = field(default="keyvalues", init=False)
    value_type: Any = field(default=dict[str, str], init=False, repr=False)

    def __post_init__(self) -> None:
        keys = tuple(self.keys)
        if not keys or any(not isinstance(k, str) or not k.strip() or ":" in k for k in keys):
            raise ConfigurationError("KeyValues needs one or more non-empty key names without ':'")
        if len({k.lower() for k in keys}) != len(keys):
            raise ConfigurationError(f"KeyValues keys must differ beyond case: {list(keys)}")
        object.__setattr__(self, "keys", keys)

    def formatting_instructions(self) -> str:
        lines = "\n".join(f"{key}: <{key.lower()}>" for key in self.keys)
        return f"Strictly answer in the format:\n{lines}"

    def example(self) -> str:
        """A reply this format accepts, for stand-in models such as the offline one."""
        return "\n".join(f"{key}: offline {key.lower()}" for key in self.keys)

    def render(self, value: dict[str, str]) -> str:
        if not isinstance(value, dict):
            raise TypeError(f"key-value answers are a dict, got {type(value).__name__}")
        return "\n\n".join(f"{key}: {value[key.lower()]}" for key in self.keys)

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def _pattern(self) -> re.Pattern[str]:
        names = "|".join(re.escape(k) for k in sorted(self.keys, key=len, reverse=True))
        return re.compile(
            rf"{_KEY_DECOR}(?P<key>{names})[ \t]*(?:(?P<close>{_EMPHASIS})[ \t]*)?:"
            rf"[ \t]*(?:(?:{_EMPHASIS})[ \t]*)?(?P<value>.*)",
            re.IGNORECASE,
        )

    def parse(self, text: str) -> dict[str, str]:
        pattern = self._pattern()
        found: dict[str, list[str]] = {}
        key: str | None = None
        value: list[str] = []
        # The key line's indentation, when a list item there ends its value: the key line is
        # itself an item (the next one is its sibling), or it holds a value of its own that does
        # not announce a list (``Answer: 42``, not ``Steps:`` or ``Steps to take:``).
        item_indent: int | None = None
        fence: _Fence | None = None  # the code block the line is in, if any

        def flush() -> None:
            if key is not None:
                found.setdefault(key, []).append(_value_text(value))

        for line in _markdown_lines(text):
            if fence is not None:
                if fence.closed_by(line):
                    fence = None
                if key is not None:
                    value.append(line)
                continue
            match = pattern.match(line)
            indent = len(line) - len(line.lstrip())
            if match:
                flush()
                key = match.group("key").lower()
                first = match.group("value").rstrip()
                if match.group("open") and first.endswith(match.group("open")):
                    first = first[: -len(match.group("open"))].rstrip()
                value = [first]
                announces = not first or first.endswith(":")
                item_indent = indent if _ITEM.match(line) or not announces else None
                continue
            if item_indent is not None and indent <= item_indent and _ITEM.match(line):
                flush()  # the next item of the key's list, or a list after a one-line value
                key, value, item_indent = None, [], None
            fence = _opening_fence(line)
            if key is not None:
                value.append(line)
        flush()
        result = {k: "\n".join(part for part in v if part) for k, v in found.items()}
        missing = [k for k in self.keys if not result.get(k.lower())]
        if missing:
            names = ", ".join(missing)
            lines = "; ".join(f"`{k}: <{k.lower()}>`" for k in missing)
            raise _invalid(
                f"Model output is missing the key(s) {names}",
                f"the reply is missing {names}; write each on its own line as {lines}",
            )
        return {k.lower(): result[k.lower()] for k in self.keys}
