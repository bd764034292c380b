"""Test your commands without a provider: scripted models, and a local provider emulator.

``FunctionModel(fn)`` is a Model whose replies come from your function: it receives the normalized
:class:`~alloy._types.Request` and returns a reply (text, a JSON value, tool calls, or a full
``Response``), so a test can script any conversation, including malformed, truncated and refused
replies. ``alloy.testing.emulator`` serves the real provider wire APIs on 127.0.0.1 for testing
through the real SDKs, and ``loopback_only()`` makes sure nothing else is reached.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Union

from .._blocking import run_blocking
from .._config import force_config, force_config_everywhere
from .._drivers import WAIT
from .._profile import Profile
from .._types import (
    Done,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
    UserTurn,
)
from ..errors import ProviderError
from ._network import NetworkBlocked, loopback_only
from ._regression import assert_no_regression

Reply = Union[Response, str, ToolCall, Sequence[ToolCall], ProviderError]
ReplyFunction = Callable[[Request], Any]


class FunctionModel:
    """A Model whose replies come from ``fn(request)`` (plain or ``async def``).

    ``fn`` may return a ``Response``, a ``str`` (the model's text), a ``ToolCall`` or a list of
    them, or raise/return a ``ProviderError`` to simulate a provider failure. ``requests`` records
    every request received, so tests can assert on the whole conversation.
    """

    def __init__(
        self,
        fn: ReplyFunction,
        *,
        name: str = "function",
        capabilities: Profile | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.capabilities = capabilities or Profile(strict_tools=True)
        self.usage = usage or Usage(input_tokens=10, output_tokens=5, requests=1)
        self.requests: list[Request] = []

    def _coerce(self, reply: Any) -> Response:
        if isinstance(reply, ProviderError):
            raise reply
        if isinstance(reply, Response):
            return reply
        if isinstance(reply, str):
            return Response((Text(reply),), usage=self.usage, model=self.name)
        if isinstance(reply, ToolCall):
            reply = [reply]
        if isinstance(reply, (list, tuple)) and all(isinstance(r, ToolCall) for r in reply):
            return Response(
                tuple(reply), usage=self.usage, finish_reason="tool_calls", model=self.name
            )
        raise TypeError(
            f"FunctionModel function returned {type(reply).__name__}; expected str, ToolCall(s) or Response"
        )

    def request(self, request: Request) -> Response:
        self.requests.append(request)
        with self._ran_out():
            reply = self.fn(request)
            if inspect.isawaitable(reply):  # an async reply function, called from sync code
                reply = run_blocking(reply)
        return self._coerce(reply)

    async def arequest(self, request: Request) -> Response:
        self.requests.append(request)
        with self._ran_out():
            reply = self.fn(request)
            if inspect.isawaitable(reply):
                reply = await reply
        return self._coerce(reply)

    @contextmanager
    def _ran_out(self) -> Iterator[None]:
        """A StopIteration from the function (``next()`` on an exhausted iterator of replies) as
        the test failure it is: left as it is, a generator or coroutine on the way up turns it
        into a puzzling RuntimeError, or it ends a loop that was iterating."""
        try:
            yield
        except (StopIteration, RuntimeError) as exc:
            # An async function's StopIteration arrives as "coroutine raised StopIteration".
            if not isinstance(exc, StopIteration) and not isinstance(exc.__cause__, StopIteration):
                raise
            raise AssertionError(
                f"the function of FunctionModel {self.name!r} raised StopIteration on request "
                f"#{len(self.requests)}: it has no reply for it (an iterator of replies ran out?)"
            ) from None

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        response = self.request(request)
        yield from _as_stream(response)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        response = await self.arequest(request)
        for event in _as_stream(response):
            yield event


def _as_stream(response: Response) -> Iterator[StreamEvent]:
    text = response.text
    for start in range(0, len(text), 8):
        yield TextDelta(text[start : start + 8])
    yield Done(response)


class ScriptedModel(FunctionModel):
    """The model :func:`script` makes: its replies in order, and ``unused``, those not asked for."""

    def __init__(self, replies: Sequence[Reply], *, all_used: bool) -> None:
        self.unused: list[Reply] = list(replies)
        self.all_used = all_used
        super().__init__(self._next, name="script")

    def _next(self, request: Request) -> Any:
        if not self.unused:
            raise AssertionError(f"scripted model got an unexpected request #{len(self.requests)}")
        return self.unused.pop(0)

    def check_all_used(self) -> None:
        """Fail the test when replies are left over: the code under test asked less than meant."""
        if self.unused:
            raise AssertionError(
                f"scripted model has {len(self.unused)} unused repl"
                f"{'y' if len(self.unused) == 1 else 'ies'} after {len(self.requests)} "
                f"request(s): {self.unused!r}"
            )


def script(*replies: Reply, all_used: bool = False) -> ScriptedModel:
    """A model that answers with ``replies`` in order (and fails if asked once more).

    With ``all_used=True``, leaving :func:`override_model` with replies left over fails the test
    too; ``model.unused`` lists them either way.
    """
    return ScriptedModel(replies, all_used=all_used)


def json_reply(value: Any, *, wrap: bool = False) -> str:
    """A reply carrying ``value`` as JSON; ``wrap=True`` adds the ``{"value": ...}`` envelope."""
    return json.dumps({"value": value} if wrap else value, default=str)


def tool_call(
    name: str, args: Mapping[str, Any] | None = None, *, id: str | None = None
) -> ToolCall:
    """A tool call as a model would make it."""
    return ToolCall(id or f"call_{name}", name, dict(args or {}))


def truncated(text: str = '{"value": ') -> Response:
    """A reply cut off by the token limit."""
    return Response((Text(text),), finish_reason="length")


def refusal(message: str = "I can't help with that.") -> Response:
    """A reply in which the model refuses."""
    return Response((), finish_reason="refusal", refusal=message)


def tool_results(request: Request) -> list[ToolResult]:
    """All tool results sent so far in a request, oldest first (handy inside reply functions)."""
    return [
        part
        for message in request.messages
        if isinstance(message, UserTurn)
        for part in message.parts
        if isinstance(part, ToolResult)
    ]


@contextmanager
def recorded_waits() -> Iterator[list[float]]:
    """Inside the block, the waits before retries are recorded instead of slept.

    Yields the list of waits in seconds, in order, for every call in the block, sync or async
    (threads and tasks started inside it see the same list).
    """
    waits: list[float] = []
    token = WAIT.set(waits.append)
    try:
        yield waits
    finally:
        WAIT.reset(token)


@contextmanager
def override_model(model: Any, *, threads: bool = False) -> Iterator[Any]:
    """Use ``model`` for every command called inside the block, whatever else is configured.

    The override follows the code that entered the block: this thread, the asyncio tasks it
    starts, and threads started with a copy of its context (``contextvars.copy_context()``),
    like every ``use_config()`` layer. A plain ``threading.Thread`` or a ``ThreadPoolExecutor``
    started inside the block does not see it; with ``threads=True`` it holds for every thread
    of the process while the block lasts (so only one such block should run at a time).
    """
    scope = force_config_everywhere if threads else force_config
    with scope(model=model):
        yield model
    if isinstance(model, ScriptedModel) and model.all_used:
        model.check_all_used()


__all__ = [
    "FunctionModel",
    "NetworkBlocked",
    "ScriptedModel",
    "assert_no_regression",
    "json_reply",
    "loopback_only",
    "override_model",
    "recorded_waits",
    "refusal",
    "script",
    "tool_call",
    "tool_results",
    "truncated",
]
