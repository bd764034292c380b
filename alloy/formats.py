"""Non-JSON outputs: yes/no, a code block, a task list, bounded text and "Key: value" lines.

Models are often better at plain English and markdown than at JSON, so these outputs send no
schema: their ``instructions`` go into the system prompt and ``parse`` extracts the value from
the reply. Extraction is strict where a guess would be wrong (two code blocks, both yes and no)
and tolerant of what real replies wrap around the answer (reasoning first, markdown emphasis,
indentation). A failed extraction raises InvalidOutput, so the model is asked again.
"""

from __future__ import annotations

import re
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
_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_ALONE = re.compile(r"^\W*(yes|no)\W*$", re.IGNORECASE)
_MARKED = re.compile(r"\banswer\b\W{0,3}(?:is\W{0,3})?(yes|no)\b", re.IGNORECASE)
_LEADING = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)(yes|no)(?=[,.!;:]|\s*$)", re.IGNORECASE)
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

    Accepted: a bare ``Yes.``/``**No**``, an ``Answer: yes`` line, or a final yes/no line after
    reasoning. Errors (re-asked): both yes and no, neither, or "I don't know" (not a no).
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
        found = {word.lower() for word in strong}
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

_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*([^`\s]*)[^`\n]*$")
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


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language tag, content) of each fenced code block, by CommonMark's fence rules.

    A block runs to a closing fence of the same character at least as long as the opening one
    (so a fence inside a longer fence is content); an unclosed block runs to the end.
    """
    blocks: list[tuple[str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _OPEN.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, tag = len(opening.group(1)), opening.group(2), opening.group(3)
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            i += 1
        blocks.append((tag, "\n".join(body)))
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


_TASK = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+\[( |x|X)\]\s+(.*?)\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")


@dataclass(frozen=True)
class TaskList:
    """The markdown task list in the reply (``- [ ] todo``, ``- [x] done``) as ``list[Task]``.

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

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def parse(self, text: str) -> list[Task]:
        groups: list[list[Task]] = []
        current: list[Task] | None = None
        indent = 0
        for line in text.splitlines():
            match = _TASK.match(line)
            if match:
                if current is None:
                    current = []
                    groups.append(current)
                indent = len(match.group(1))
                current.append(Task(match.group(3), match.group(2) != " "))
            elif not line.strip():
                continue
            elif current and len(line) - len(line.lstrip()) > indent and not _ITEM.match(line):
                last = current[-1]
                current[-1] = Task(f"{last.text} {line.strip()}", last.done)
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
        return groups[0]


# -- bounded text -----------------------------------------------------------------------


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
        """A reply this format accepts, for stand-in models such as the offline one."""
        text = "[alloy offline model] stand-in text."
        if self.min is not None and len(text) < self.min:
            text = (text + " lorem") * (self.min // len(text) + 1)
        return text[: self.max].strip() if self.max is not None else text

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

_KEY_DECOR = r"[ \t]*(?:(?:[-*+>]|\d{1,9}[.)]|#{1,6})[ \t]+)?(?P<open>\*\*|__|\*|_)?[ \t]*"


@dataclass(frozen=True)
class KeyValues:
    """``"Key: value"`` lines parsed into a dict with lower-cased keys (a SimpleOutputParser).

    Keys match case-insensitively at the start of a line, also bold, bulleted or indented
    (``**Answer:**``, ``- Answer:``). A value runs to the end of its paragraph; a repeated key's
    values are joined with a newline; text before the first key (reasoning) is ignored. A
    missing key is an error.
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

    @property
    def instructions(self) -> str:
        return self.formatting_instructions()

    def _pattern(self) -> re.Pattern[str]:
        names = "|".join(re.escape(k) for k in sorted(self.keys, key=len, reverse=True))
        return re.compile(
            rf"^{_KEY_DECOR}(?P<key>{names})[ \t]*(?P<close>\*\*|__|\*|_)?[ \t]*:"
            r"[ \t]*(?:\*\*|__|\*|_)?[ \t]*(?P<value>.*)$",
            re.IGNORECASE,
        )

    def parse(self, text: str) -> dict[str, str]:
        pattern = self._pattern()
        found: dict[str, list[str]] = {}
        key: str | None = None
        value: list[str] = []

        def flush() -> None:
            if key is not None:
                found.setdefault(key, []).append("\n".join(value).strip())

        for line in text.splitlines():
            match = pattern.match(line)
            if match:
                flush()
                key = match.group("key").lower()
                first = match.group("value").rstrip()
                if match.group("open") and first.endswith(match.group("open")):
                    first = first[: -len(match.group("open"))].rstrip()
                value = [first] if first else []
            elif key is not None and not line.strip() and value:
                flush()
                key, value = None, []  # a paragraph ends the value
            elif key is not None and line.strip():
                value.append(line.strip())
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
