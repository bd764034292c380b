"""Where a PDL document's template is rendered: jinja2's immutable sandbox, and its errors.

A PDL document is a template, and a template is code: an unsandboxed jinja2 environment lets
``{{ cycler.__init__.__globals__.os.getcwd() }}`` reach any module. jinja2's
``ImmutableSandboxedEnvironment`` refuses attributes that lead to Python's internals and methods
that change a value, and bounds ``range()``. It leaves ``*`` and ``**`` alone, so one expression
(``{{ "a" * 10**10 }}``) could still ask for gigabytes: those two are bounded here the same way.

Whatever rendering raises (a syntax error, an undefined variable, a ``SecurityError``, a
``ZeroDivisionError``, a ``TypeError``...) becomes a ConfigurationError naming the document
line it happened on, read from the template frames jinja2 puts in the traceback.
"""

from __future__ import annotations

import operator
from typing import Any

from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment

from ..errors import ConfigurationError

#: The longest text or list ``*`` may build (ten times what ``range()`` may).
MAX_REPEAT = 10 * MAX_RANGE
#: The largest whole number ``**`` may build, in bits (about 30,000 digits).
MAX_POWER_BITS = 100_000

_SEQUENCES = (str, bytes, list, tuple)


class _Sandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, with ``*`` and ``**`` bounded as ``range()`` is."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Context, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "*":
            for sequence, times in ((left, right), (right, left)):
                if (
                    isinstance(sequence, _SEQUENCES)
                    and isinstance(times, int)
                    and len(sequence) * times > MAX_REPEAT
                ):
                    raise SecurityError(
                        f"a repetition longer than {MAX_REPEAT:,} is not allowed in a template"
                    )
            return operator.mul(left, right)
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and right > 1
            and left.bit_length() * right > MAX_POWER_BITS
        ):
            raise SecurityError(
                f"a power of more than {MAX_POWER_BITS:,} bits is not allowed in a template"
            )
        return operator.pow(left, right)


def sandbox(**options: Any) -> ImmutableSandboxedEnvironment:
    """The environment a PDL template renders in (``options`` as jinja2's ``Environment``)."""
    return _Sandbox(autoescape=False, **options)


def render_error(exc: Exception) -> ConfigurationError:
    """The ConfigurationError for what rendering a template raised, naming the line."""
    line = _template_line(exc)
    where = f"PDL document line {line}" if line is not None else "PDL document"
    if type(exc).__module__.startswith("jinja2"):
        what = str(exc)  # jinja2's own messages say what they are ("'x' is undefined")
    else:
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ConfigurationError(f"{where}: the template cannot be rendered: {_short(what)}")


def _template_line(exc: Exception) -> int | None:
    """The template line ``exc`` was raised on: a syntax error knows it, and jinja2 rewrites a
    runtime error's traceback so that its template frames carry the template's line numbers."""
    if isinstance(exc, TemplateSyntaxError):
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno  # the innermost template frame is where it happened
        tb = tb.tb_next
    return line


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
