"""Worked examples (few-shot): ``@command(examples=[(input, output), ...])``.

Each example is sent before the conversation as a user turn (what the prompt function renders
for ``input``) and an assistant turn (``output`` as the reply the output type reads back), the
form every provider takes. The outputs are checked against the output type when the command
is decorated, its ``alloy.checks`` criteria included (those that can run outside a call); the
inputs are rendered on the command's first call, since rendering runs the prompt function
(which may be async, or read something it needs).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ._conversation import Conversation, refuse_lone_surrogates
from ._output import InvalidOutput, OutputType
from ._types import Message, ModelTurn, Part, UserTurn
from .errors import ConfigurationError


class Example(NamedTuple):
    """One worked example: the prompt function's arguments (or a User turn) and the reply."""

    input: Any
    reply: str


def check_examples(entries: Any, output: OutputType, where: str) -> tuple[Example, ...]:
    """``examples=`` as Examples, each output rendered as its reply and read back by ``output``."""
    if entries is None:
        return ()
    from .checks import CheckedOutput  # here: a call without examples never loads the checks

    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise ConfigurationError(f"{where}: examples= must be a list of (input, output) pairs")
    checked = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise ConfigurationError(
                f"{where}: example {index} must be an (input, output) pair, got {entry!r:.80}"
            )
        given, value = entry
        try:
            reply = output.render(value)
            failures = output.audit(reply) if isinstance(output, CheckedOutput) else ()
        except (TypeError, ValueError, InvalidOutput) as exc:
            why = exc.summary if isinstance(exc, InvalidOutput) else exc
            raise ConfigurationError(
                f"{where}: the output of example {index} is not a valid {output.expected}: {why}"
            ) from None
        for failure in failures:
            if failure.outcome == "raised":
                raise ConfigurationError(
                    f"{where}: criterion {failure.criterion} raised {failure.error} checking "
                    f"{failure.path} in the output of example {index}; a criterion reports a "
                    "failure by returning False or an error string, or raising ValueError"
                )
            raise ConfigurationError(
                f"{where}: the output of example {index} fails criterion {failure.criterion} on "
                f"{failure.path}: {failure.error}; an example is the answer the model is shown, "
                "so it must meet the criteria a real answer is held to"
            )
        checked.append(Example(given, reply))
    return tuple(checked)


def _call(fn: Callable[..., Any], given: Any) -> Any:
    """The prompt function on an example's input: a tuple is its positional arguments, a dict
    its keyword arguments, anything else its one argument."""
    if isinstance(given, tuple):
        return fn(*given)
    if isinstance(given, dict):
        return fn(**given)
    return fn(given)


def _turns(
    examples: tuple[Example, ...],
    prompts: Sequence[Any],
    render: Callable[[Any, str], tuple[Part, ...] | Any],
    command: str,
) -> tuple[Message, ...]:
    turns: list[Message] = []
    for index, (example, prompt) in enumerate(zip(examples, prompts, strict=True)):
        if isinstance(prompt, UserTurn):
            refuse_lone_surrogates(prompt, f"{command}: example {index}")
        parts = prompt.parts if isinstance(prompt, UserTurn) else render(prompt, command)
        if isinstance(parts, Conversation):
            raise ConfigurationError(
                f"{command}: the prompt function returned a conversation for example {index}; "
                "an example's input must render to one prompt (or be given as alloy.User(...))"
            )
        turns += (UserTurn(parts), ModelTurn(example.reply))
    return tuple(turns)


def example_turns(
    fn: Callable[..., Any],
    examples: tuple[Example, ...],
    render: Callable[[Any, str], Any],
    command: str,
) -> tuple[Message, ...]:
    """The examples as turns, rendering each input through the (sync) prompt function."""
    prompts = [e.input if isinstance(e.input, UserTurn) else _call(fn, e.input) for e in examples]
    return _turns(examples, prompts, render, command)


async def aexample_turns(
    fn: Callable[..., Any],
    examples: tuple[Example, ...],
    render: Callable[[Any, str], Any],
    command: str,
) -> tuple[Message, ...]:
    """Async twin of :func:`example_turns`, for prompt functions that may be ``async def``."""
    prompts = []
    for example in examples:
        prompt = example.input if isinstance(example.input, UserTurn) else _call(fn, example.input)
        prompts.append(await prompt if inspect.isawaitable(prompt) else prompt)
    return _turns(examples, prompts, render, command)
