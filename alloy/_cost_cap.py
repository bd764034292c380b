"""A spending cap in money: a request that would pass a ``cost_budget`` is never sent.

The engine counts tokens and prices nothing; the cap lives out here, around the models a call
uses. One mechanism serves a call and a run over rows: a :class:`Purse` holds the cap, the money
spent and what the requests in flight may still cost; a :class:`CappedModel` checks every request
against it before sending it, and settles it with the reply's priced usage afterwards. A call
(``cost_budget=`` on a command, ``configure()`` or ``ALLOY_COST_BUDGET``) gets a purse of its own
at its start, shared by its re-asks, tool rounds and fallback models; a run (``map(cost_budget=)``)
one purse for all of its rows.

What "would pass the cap" means: a request is refused when the money spent so far, plus what the
requests in flight may still cost, plus the request's own worst case, is more than the budget.
The worst case is :func:`input_tokens` at the input rate (or the prompt-cache write rate, if that
is dearer) plus ``max_tokens`` at the output rate. Without ``max_tokens`` nothing bounds a reply,
so its output is not counted: the last requests may then pass the cap by what they write. In a
run, a request that fits once the requests in flight have settled waits for them instead.

The purse goes beneath the response cache, so a hit (which costs nothing) is never checked.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import re
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from ._types import (
    Done,
    Media,
    Opaque,
    Request,
    Response,
    RetryPrompt,
    StreamEvent,
    Text,
    ToolCall,
    ToolResult,
)
from ._wrapper import WrapperModel
from .errors import BudgetExceeded, ConfigurationError, ProviderError
from .pricing import Price, price_for

if TYPE_CHECKING:
    import asyncio

    from ._config import Config
    from ._drivers import Runtime
    from ._model import Model

#: Input tokens counted for an image: about what the providers charge for a large one
#: (Anthropic ~1,600, OpenAI up to ~1,100 at high detail, Gemini 258 a tile).
IMAGE_TOKENS = 1_600
#: Input tokens counted for each page of a PDF: Anthropic reads a page as its text and an image
#: of it (1,500 to 3,000 tokens); Gemini charges 258.
PDF_PAGE_TOKENS = 3_000
#: Tokens counted for each message, beyond its text: the role and the separators around it.
MESSAGE_TOKENS = 4
#: Dollars below this are rounding, not money: a request that lands on the cap is allowed.
_SLACK = 1e-12
#: A page object in a PDF's bytes (``/Type /Page``, not ``/Type /Pages``).
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")

Scope = Literal["call", "run"]


def input_tokens(request: Request) -> int:
    """The input tokens ``request`` may be charged for, estimated from its text without a
    tokenizer: a token per three ASCII characters (English runs about four, JSON and code about
    three) and one per other character (CJK text runs about one), over the system prompt, every
    message, the output schema and the tool definitions; :data:`IMAGE_TOKENS` for an image and
    :data:`PDF_PAGE_TOKENS` for each page of a PDF (one, for a PDF given by URL)."""
    texts: list[str] = [request.system or ""]
    tokens = 0
    for message in request.messages:
        tokens += MESSAGE_TOKENS
        for part in message.parts:
            if isinstance(part, Text):
                texts.append(part.text)
            elif isinstance(part, Media):
                tokens += media_tokens(part)
            elif isinstance(part, ToolCall):
                texts.append(part.name)
                texts.append(part.raw_args or json.dumps(dict(part.args), default=str))
            elif isinstance(part, ToolResult):
                texts.append(part.content)
            elif isinstance(part, RetryPrompt):
                texts.append(part.errors)
            elif isinstance(part, Opaque):  # sent back as it came: reasoning, signatures
                texts.append(json.dumps(part.payload, default=str))
    output = request.output
    if output is not None and output.schema is not None:
        texts.append(json.dumps(output.dialect_schema or output.schema))
        texts.append(output.instructions or "")
    for tool in request.tools:
        texts.append(tool.name)
        texts.append(tool.description)
        texts.append(json.dumps(tool.dialect_parameters or tool.parameters))
    for text in texts:
        plain = len(text.encode("ascii", "ignore"))  # its ASCII characters, counted in C
        tokens += math.ceil(plain / 3) + (len(text) - plain)
    return tokens


def media_tokens(media: Media) -> int:
    """The input tokens an image or a PDF is counted at."""
    if media.kind != "pdf":
        return IMAGE_TOKENS
    pages = 1
    if media.data is not None:
        with contextlib.suppress(ValueError):
            pages = max(1, len(_PDF_PAGE.findall(base64.b64decode(media.data))))
    return pages * PDF_PAGE_TOKENS


def worst_case(request: Request, price: Price) -> tuple[float, int]:
    """The most ``request`` may cost in USD at ``price``, and its estimated input tokens."""
    tokens = input_tokens(request)
    input_rate = max(price.input, price.cache_write or 0.0)
    output = request.settings.max_tokens or 0
    return (tokens * input_rate + output * price.output) / 1_000_000, tokens


def price_of(model: str, option: str) -> Price:
    """The price of ``model``, or the ConfigurationError that says how to give it one."""
    price = price_for(model)
    if price is None:
        raise ConfigurationError(
            f"{option} is in US dollars, and alloy knows no price for {model!r}: give it one "
            f"with alloy.pricing.set_price({model!r}, Price(input=..., output=...)) (USD per "
            "million tokens), or drop the cost budget"
        )
    return price


def usd(amount: float) -> str:
    """``amount`` as dollars, to the millionth, without trailing zeros: ``$0.0015``, ``$2``."""
    text = f"{amount:.6f}".rstrip("0").rstrip(".")
    return f"${text}" if text != "0" or not amount else f"${amount:.2e}"


class Purse:
    """What a call or a run may spend (``limit``, USD), has spent, and has in flight.

    Shared by every request it covers; thread-safe. Once it refuses a request it is ``reached``:
    a run then starts no more rows (see :meth:`unstarted`).
    """

    def __init__(self, limit: float, scope: Scope) -> None:
        self.limit = limit
        self.scope: Scope = scope
        self.spent = 0.0
        #: What the requests in flight may still cost: their worst cases, until they settle.
        self.held = 0.0
        self.in_flight = 0
        self.reached = False
        #: The requests this purse refused: a run keeps their rows out of its checkpoint. Few:
        #: the first refusal reaches the cap, and then only rows in flight send requests.
        self.refusals: list[BudgetExceeded] = []
        self._lock = threading.Lock()
        self._waiting: list[asyncio.Future[None]] = []

    def __repr__(self) -> str:
        return f"<{self.scope} purse: {usd(self.spent)} of {usd(self.limit)} spent>"

    def _take(self, cost: float, waiter: asyncio.Future[None] | None = None) -> bool | None:
        """Hold ``cost`` now (True), refuse it (False), or None: it fits once requests in
        flight have settled (``waiter`` is then woken at the next settlement)."""
        with self._lock:
            if self.spent + cost > self.limit + _SLACK:
                self.reached = True
                return False
            if self.spent + self.held + cost > self.limit + _SLACK:
                if waiter is not None:
                    self._waiting.append(waiter)
                return None
            self.held += cost
            self.in_flight += 1
            return True

    def take(self, cost: float, describe: str) -> float:
        """Hold ``cost`` for a request about to be sent, or raise BudgetExceeded. A blocking
        request does not wait: the requests of one call go one after another."""
        if not self._take(cost):
            raise self._refused(cost, describe)
        return cost

    async def atake(self, cost: float, describe: str) -> float:
        """:meth:`take`, waiting while the requests in flight may still leave room."""
        import asyncio  # here: ``import alloy`` loads no asyncio

        loop = asyncio.get_running_loop()
        while True:
            waiter = loop.create_future()
            verdict = self._take(cost, waiter)
            if verdict:
                return cost
            if verdict is False:
                raise self._refused(cost, describe)
            await waiter

    def settle(self, held: float, spent: float) -> None:
        """A request is over: it held ``held`` and cost ``spent``."""
        with self._lock:
            self.in_flight -= 1
            # Exactly nothing once nothing is in flight: a waiter must never wait on rounding.
            self.held = self.held - held if self.in_flight else 0.0
            self.spent += spent
            waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits there
                waiter.get_loop().call_soon_threadsafe(_wake, waiter)

    def _refused(self, cost: float, describe: str) -> BudgetExceeded:
        what = "call" if self.scope == "call" else "run"
        error = BudgetExceeded(
            f"The {what}'s cost budget of {usd(self.limit)} would be passed: {usd(self.spent)} "
            f"spent{self._in_flight()}, and the next request {describe}, may cost up to "
            f"{usd(cost)}; it was not sent",
            spent=self.spent,
            limit=self.limit,
            unit="USD",
        )
        self.refusals.append(error)
        return error

    def _in_flight(self) -> str:
        return f" and {usd(self.held)} held by requests in flight" if self.held else ""

    def unstarted(self, command: str) -> BudgetExceeded:
        """The error of a row a run did not start because its cap was reached."""
        return BudgetExceeded(
            f"The run's cost budget of {usd(self.limit)} was reached ({usd(self.spent)} spent) "
            "before this row started; run the same map again with its checkpoint and a "
            "bigger cost_budget to run the rest",
            command=command,
            spent=self.spent,
            limit=self.limit,
            unit="USD",
        )

    def stopped(self, error: BaseException) -> bool:
        """Whether ``error`` is this purse's refusal."""
        return any(error is refusal for refusal in self.refusals)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class CappedModel(WrapperModel):
    """``model`` whose every request is checked against ``purse`` before it is sent, and
    settled with its reply's usage at ``price``."""

    def __init__(self, model: Model, purse: Purse, price: Price) -> None:
        super().__init__(model)
        self.purse = purse
        self.price = price

    def __repr__(self) -> str:
        return f"<{self.wrapped!r} within {self.purse!r}>"

    def _cost(self, request: Request) -> tuple[float, str]:
        cost, tokens = worst_case(request, self.price)
        limit = request.settings.max_tokens
        output = f"max_tokens {limit}" if limit else "no max_tokens, so no output counted"
        return cost, f"to {self.name} (about {tokens} input tokens, {output})"

    def request(self, request: Request) -> Response:
        held = self.purse.take(*self._cost(request))
        with _Settling(self, held) as call:
            response = self.wrapped.request(request)
            call.reply = response
        return response

    async def arequest(self, request: Request) -> Response:
        held = await self.purse.atake(*self._cost(request))
        with _Settling(self, held) as call:
            response = await self.wrapped.arequest(request)
            call.reply = response
        return response

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        held = self.purse.take(*self._cost(request))
        with _Settling(self, held) as call:
            for event in self.wrapped.stream(request):
                if isinstance(event, Done):
                    call.reply = event.response
                yield event

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        held = await self.purse.atake(*self._cost(request))
        with _Settling(self, held) as call:
            async for event in self.wrapped.astream(request):
                if isinstance(event, Done):
                    call.reply = event.response
                yield event


class _Settling:
    """One request's money: settled with its reply's priced usage. Without a reply, a request
    the provider answered with an error status cost nothing; any other (a timeout, a dropped
    connection, a stream cut or left unfinished) is counted at its worst case, since the
    provider may have done, and billed, the work."""

    def __init__(self, model: CappedModel, held: float) -> None:
        self.model = model
        self.held = held
        self.reply: Response | None = None

    def __enter__(self) -> _Settling:
        return self

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        if self.reply is not None:
            spent = self.model.price.cost(self.reply.usage)
        elif isinstance(error, ProviderError) and (error.status_code or 0) >= 400:
            spent = 0.0
        else:
            spent = self.held
        self.model.purse.settle(self.held, spent)


def capped(model: Any, purse: Purse, option: str) -> Any:
    """``model`` behind ``purse``, beneath its response cache; a model without a known price
    is a ConfigurationError (``option`` names the budget that needs one)."""
    from .cache import (
        wrap_under_cache,  # a model is behind the cache only once alloy.cache is loaded
    )

    price = price_of(model.name, option)
    return wrap_under_cache(model, lambda inner: CappedModel(inner, purse, price))


def capped_runtime(runtime: Runtime, purse: Purse, option: str) -> Runtime:
    """``runtime`` with its model and every fallback model behind ``purse``."""
    return replace(
        runtime,
        model=capped(runtime.model, purse, option),
        fallbacks=tuple(capped(model, purse, option) for model in runtime.fallbacks),
    )


def for_call(runtime: Runtime, config: Config) -> Runtime:
    """The runtime of one call: behind a purse of its own when it has a ``cost_budget``."""
    budget = config.cost_budget
    if budget is None:
        return runtime
    return capped_runtime(runtime, Purse(budget, "call"), "cost_budget")
