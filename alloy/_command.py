"""``@command``: a function that returns a prompt becomes a typed model call.

The decorator does all checking it can up front — the output type becomes a strict schema, tools
get their schemas, options are validated — so mistakes surface at import time, not mid-call.
Each call then resolves settings, renders the prompt, and hands the engine to a driver.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, TypeVar, Union, overload

from typing_extensions import ParamSpec, Self, TypedDict, Unpack

from . import _drivers, _engine
from ._answer import ItemReader, PartialReader, Reader, TextReader
from ._config import Config, check_options, layers_key, resolve
from ._conversation import (
    Conversation,
    MessageLike,
    check_tool_results,
    is_conversation,
    to_conversation,
)
from ._cost_cap import for_call
from ._deps import ascoped, ascoped_iter, scoped, scoped_iter
from ._examples import Example, aexample_turns, check_examples, example_turns
from ._fallback import fallback_models, with_fallbacks
from ._legacy import deprecated
from ._model import Model, StandIn
from ._output import JsonOutput, NoOutput, OutputType, TextOutput
from ._pickling import by_reference, function_ref, located, without_key
from ._rail import Rail
from ._stream_plan import AnswerShape, answer_shape, check_items
from ._text import sendable as _sendable
from ._tools import Tool, as_tool
from ._typeddict import portable
from ._types import Media, Message, Part, Result, Text, UserTurn
from .cache import NotCached, beneath, cached, policy_for, tool_cache
from .checks import checked_output_for
from .errors import ConfigurationError
from .events import Event, Handler, global_handlers, logger, new_call_id
from .providers import dialect_for, get_model, model_cache_generation
from .streaming import AsyncItemStream, AsyncStream, ItemStream, Partial, Stream

if TYPE_CHECKING:
    from pydantic import SecretStr
    from typing_extensions import TypeForm

    from .rows import AsyncRows, Budget, Rows
    from .rows._run import Run

P = ParamSpec("P")
#: An argument of :meth:`Command.using` that was not given.
_UNSET: Any = object()
R = TypeVar("R")
T = TypeVar("T")
E = TypeVar("E")

Prompt = Union[str, Media, Sequence[str | Media], UserTurn, Sequence[MessageLike]]


#: ``map(deps=...)`` not given (None is a value a caller may pass).
_NO_DEPS_ARG: Any = object()


class Options(TypedDict, total=False):
    """Options accepted by ``@command``, ``with_options``, ``configure`` and ``use_config``."""

    model: str | Model | None
    temperature: float | None
    max_tokens: int | None
    system: str | None
    retries: int
    max_tool_turns: int
    parallel_tools_max: int
    auto_finalize_missing_output: bool
    timeout: float | None
    deadline: float | None
    tool_timeout: float | None
    extra_json: Mapping[str, Any]
    max_reasks: int
    output_mode: str
    tool_errors: str
    api_key: str | SecretStr | None
    base_url: str | None
    skip_rails: Sequence[str]
    token_budget: int | None
    cost_budget: float | None
    log_content: bool
    reasoning_effort: str | int | None
    prompt_cache: bool
    prompt_cache_key: str | None
    cached_content: str | None
    fallback: Sequence[str | Model] | str | Model
    cache: str | None
    cache_mode: str
    cache_ttl: float | None
    cache_max_entries: int | None
    cache_all: bool


class Command(Generic[P, R]):
    """A typed model call. Call it like the function it decorates."""

    def __init__(
        self,
        fn: Callable[P, Any],
        *,
        output: OutputType,
        options: Mapping[str, Any],
        tools: tuple[Tool[Any], ...],
        rails: tuple[Rail, ...] = (),
        call_options: Mapping[str, Any] | None = None,
        examples: tuple[Example, ...] = (),
    ) -> None:
        self._fn = fn
        self._examples = examples
        #: The examples as turns, rendered through the prompt function on the first call.
        self._example_turns: tuple[Message, ...] | None = None if examples else ()
        # Checked once: inspect.iscoroutinefunction unwraps and tests flags on every call.
        self._async_prompt = inspect.iscoroutinefunction(fn)
        self._rails = rails
        self._handlers: tuple[tuple[Handler, tuple[type[Event], ...]], ...] = ()
        self._output = output
        #: What stream() reads: text for ``output=str`` too, which is a text command to stream.
        self._stream_output: OutputType = (
            _TEXT if isinstance(output, JsonOutput) and output.type is str else output
        )
        self._options = dict(options)
        self._call_options = dict(call_options or {})
        self._tools = tools
        self._tool_map = {t.name: t for t in tools}
        self._tool_defs = tuple(t.definition for t in tools)
        #: How the output is shown while it streams, and how a list element is validated:
        #: worked out on the first stream_partial() or stream_items().
        self._answer: AnswerShape | None = None
        self._validate_element: Callable[[str], Any] | None = None
        #: Says once why this command's requests are not cached, when a cache is set.
        self._not_cached = NotCached(self.name)
        # (what it was resolved from, plan, driver runtime) of the last call: see _plan.
        self._prepared: tuple[tuple[Any, ...], _engine.Plan, _drivers.Runtime] | None = None
        functools.update_wrapper(self, fn)
        self.__signature__ = inspect.signature(fn)
        #: A prompt function with its own ``history`` parameter is given it, and builds the
        #: conversation itself; otherwise ``history=`` is the earlier turns of the call.
        self._own_history = "history" in self.__signature__.parameters
        #: The same for ``deps``: its own parameter, or the call's dependencies (see _deps).
        self._own_deps = "deps" in self.__signature__.parameters
        #: ``history=`` and ``deps=`` given through :meth:`using`, for every call.
        self._bound: Mapping[str, Any] = {}

    # -- introspection --
    @property
    def schema(self) -> dict[str, Any] | None:
        """The exact canonical JSON Schema sent for the output (None for text output)."""
        return self._output.schema

    @property
    def output_type(self) -> OutputType:
        return self._output

    @property
    def tools(self) -> tuple[Tool[Any], ...]:
        return self._tools

    @property
    def name(self) -> str:
        return str(getattr(self._fn, "__qualname__", "command"))

    def __repr__(self) -> str:
        return f"<alloy command {self.name} -> {self._output.expected}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its module and name when they find this very command, else by what it
        was made from (its function, output, options, tools, rails, examples, and what
        :meth:`using` gave it); this process's SDK clients, plan cache and subscriptions stay
        here, and so does an ``api_key`` option: the copy reads its key where it runs, as any
        process does. See :mod:`alloy._pickling`."""
        module = getattr(self._fn, "__module__", None)
        qualname = getattr(self._fn, "__qualname__", None)
        if by_reference(self, module, qualname):
            return (located, (module, qualname))
        made_of = (
            function_ref(self._fn),
            self._output,
            without_key(self._options),
            self._tools,
            self._rails,
            without_key(self._call_options),
            self._examples,
            dict(self._bound),
        )
        return (_unpickled, (type(self), *made_of))

    @property
    def rails(self) -> tuple[Rail, ...]:
        return self._rails

    @property
    def last_result(self) -> NoReturn:
        """Removed: a record shared by every call of the command was overwritten by concurrent
        calls. Each call's record is the Result that ``run()`` or ``arun()`` returns."""
        raise AttributeError(
            f"{self.name}.last_result was removed: it was shared by every call of the command, so "
            "concurrent calls overwrote each other's. Use result = cmd.run(...) (or await "
            "cmd.arun(...)), which returns that call's Result."
        )

    def subscribe(self, handler: Handler, *kinds: type[Event]) -> Callable[[], None]:
        """Call ``handler(event)`` for this command's events (or only ``kinds``); returns an unsubscribe."""
        entry = (handler, kinds)
        self._handlers = (*self._handlers, entry)

        def unsubscribe() -> None:
            self._handlers = tuple(h for h in self._handlers if h is not entry)

        return unsubscribe

    def with_options(self, **options: Unpack[Options]) -> Command[P, R]:
        """A copy of this command with per-call options (the highest-precedence layer)."""
        return self._with_checked(check_options(options, source=f"{self.name}.with_options()"))

    def using(
        self, *, history: Sequence[MessageLike] | None = _UNSET, deps: object = _UNSET
    ) -> Self:
        """A copy of this command whose every call is given ``history=`` and/or ``deps=``.

        ``cmd.using(history=h, deps=d).run(x)`` is ``cmd.run(x, history=h, deps=d)``, for every
        call form (``run``, ``arun``, calling it, ``acall``, the streams), with the prompt
        function's own parameters still checked by a type checker: ``run``'s signature is the
        prompt function's, so ``history=`` and ``deps=`` written into the call itself work but
        are not in it. A keyword given to the call wins over the one given here.
        """
        given = {"history": history, "deps": deps}
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._bound = {
            **self._bound,
            **{name: value for name, value in given.items() if value is not _UNSET},
        }
        return clone

    def _with_checked(self, checked: Mapping[str, Any]) -> Command[P, R]:
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._call_options = {**self._call_options, **checked}
        clone._prepared = None
        return clone

    # -- calling --
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.run(*args, **kwargs).value

    async def acall(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Await the call (also spelled ``async_``)."""
        return (await self.arun(*args, **kwargs)).value

    async_ = acall

    def run(self, *args: P.args, **kwargs: P.kwargs) -> Result[R]:
        """Call and return the value with its record (raw output, transcript, usage)."""
        if self._async_prompt:
            raise ConfigurationError(
                f"{self.name} has an async prompt function: await it or use acall()"
            )
        given, history, deps = self._given(kwargs)
        prompt = render_prompt(self._fn(*args, **given), self.name)
        plan, _, runtime = self._plan(stream=False)
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, self._examples_sync())
        if deps is _NO_DEPS:
            return _drivers.run_sync(engine, runtime)
        return scoped(deps, lambda: _drivers.run_sync(engine, runtime))

    async def arun(self, *args: P.args, **kwargs: P.kwargs) -> Result[R]:
        """Async twin of :meth:`run`."""
        plan, _, runtime = self._plan(stream=False)
        return await self._arun_with(plan, runtime, args, kwargs)

    async def _arun_with(
        self,
        plan: _engine.Plan,
        runtime: _drivers.Runtime,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Result[R]:
        """:meth:`arun` with a plan and runtime already made (a run over rows makes them once)."""
        given, history, deps = self._given(kwargs)
        prompt = await _prompt_async(self._fn, args, given)
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, await self._examples_async())
        if deps is _NO_DEPS:
            return await _drivers.run_async(engine, runtime)
        return await ascoped(deps, _drivers.run_async(engine, runtime))

    # -- over rows --
    def map(
        self,
        inputs: Iterable[Any] | AsyncIterable[Any],
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        as_completed: bool = False,
        errors: Literal["collect", "raise"] = "collect",
        progress: bool | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        retry_failed: bool = True,
        total: int | None = None,
        deps: Any = _NO_DEPS_ARG,
        mode: Literal["online", "batch", "auto"] = "online",
        poll_interval: float = 30.0,
        batch_retry: Literal["online", "batch"] = "online",
        batch_rounds: int = 1,
        batch_min_rows: int = 1000,
        budget: Budget | None = None,
        cost_budget: float | None = None,
    ) -> Rows[R]:
        """Call the command once per row of ``inputs`` and yield each row's record
        (:class:`~alloy.rows.Ok` or :class:`~alloy.rows.Failed`), in input order.

        A tuple row is positional arguments, a dict row keyword arguments, an
        :class:`~alloy.rows.Args` row exactly those, anything else the one argument; a list
        row is the one argument when that takes a sequence, else positional arguments. A row
        that fits no reading fails alone with a RowInputError (see the guide). Rows are
        read lazily and at most a small window of them is held, so an input of any length runs
        in flat memory. ``concurrency`` calls run at once at most (fewer after 429s, which are
        waited out and sent again); ``rpm`` / ``tpm`` cap requests and tokens per minute (by
        default the limits the provider states in its replies' headers);
        ``as_completed`` yields rows as they finish instead. ``errors="raise"`` stops at the
        first failed row; a ConfigurationError always stops the run. ``checkpoint`` names a
        SQLite file recording each finished row, so running the same map again skips them
        (failed rows run again unless ``retry_failed=False``). ``progress`` shows a bar (by
        default when a person is watching). ``deps`` reaches every row's tools, checks and rails.

        ``mode="batch"`` sends the rows through the provider's batch API (OpenAI, Anthropic,
        Gemini) at half the price, polling every ``poll_interval`` seconds until the jobs end;
        rows a batch did not answer run online (``batch_retry="online"``) or in up to
        ``batch_rounds`` follow-up batches. ``mode="auto"`` takes the batch API for a run of at
        least ``batch_min_rows`` rows when the provider has one and the command has no tools.

        ``budget`` keeps the rate limits in a :class:`~alloy.rows.Budget` shared with runs in
        other threads, processes or machines, so that together they stay within them.

        ``cost_budget`` caps the money the whole run spends, in US dollars: no request that
        would pass it is sent, and once one is refused the rows not yet started end as
        :class:`~alloy.rows.Failed` with ``BudgetExceeded``, kept out of the checkpoint so
        that running the same map again runs them (online runs only).
        """
        given = locals()  # the options, before anything else is named here
        from .rows import Rows  # asyncio and the run machinery load only when a run is made

        return Rows(self._run_over(inputs, given))

    def amap(
        self,
        inputs: Iterable[Any] | AsyncIterable[Any],
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        as_completed: bool = False,
        errors: Literal["collect", "raise"] = "collect",
        progress: bool | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        retry_failed: bool = True,
        total: int | None = None,
        deps: Any = _NO_DEPS_ARG,
        mode: Literal["online", "batch", "auto"] = "online",
        poll_interval: float = 30.0,
        batch_retry: Literal["online", "batch"] = "online",
        batch_rounds: int = 1,
        batch_min_rows: int = 1000,
        budget: Budget | None = None,
        cost_budget: float | None = None,
    ) -> AsyncRows[R]:
        """:meth:`map` on the running event loop: ``async for row in cmd.amap(rows)``, or
        ``await cmd.amap(rows)`` for the list of records."""
        given = locals()
        from .rows import AsyncRows

        return AsyncRows(self._run_over(inputs, given))

    def _run_over(self, inputs: Any, given: Mapping[str, Any]) -> Run:
        from .rows._run import Run
        from .rows._run import Settings as RunSettings

        settings = {k: v for k, v in given.items() if k not in ("self", "inputs", "deps")}
        deps = given["deps"]
        chosen = RunSettings(**settings, deps=deps, has_deps=deps is not _NO_DEPS_ARG)
        if chosen.mode == "online" or (
            chosen.mode == "auto" and not self._batch_worth(chosen, inputs)
        ):
            return Run(self, inputs, chosen)
        from .batch._run import BatchRun

        return BatchRun(self, inputs, chosen)

    def _batch_worth(self, settings: Any, inputs: Any) -> bool:
        """Whether ``mode="auto"`` takes the batch API: enough rows, known in advance, a
        provider with a batch API, and no tools (a batched request cannot run them)."""
        from .batch import wire_for

        count = settings.total
        if count is None:
            try:
                count = len(inputs)
            except TypeError:
                return False
        if count < settings.batch_min_rows or self._tools or settings.cost_budget is not None:
            return False  # a batch request cannot run tools, nor be held to a cost cap
        _, model, _ = self._plan(stream=False)
        try:
            wire_for(model)
        except ConfigurationError:
            return False
        return True

    def _listeners(self) -> tuple[tuple[Handler, tuple[type[Event], ...]], ...]:
        """Every handler interested in this command's events: global ones, then its own."""
        return (*global_handlers(), *self._handlers)

    @staticmethod
    def _rewrap(model: Any, wrap: Callable[[Any], Any]) -> Any:
        """``model`` (a runtime's) with ``wrap`` applied to the provider's model beneath any cache."""
        return beneath(model, wrap)

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> Stream[str, R]:
        """Yield the answer's text as it arrives; tool rounds run in between. Once it has all
        arrived, the stream's ``result`` is the call's Result (to carry the call on)."""
        if inspect.iscoroutinefunction(self._fn):
            raise ConfigurationError(f"{self.name} has an async prompt function: use astream()")
        self._check_streamable()
        given, history, deps = self._given(kwargs)
        prompt = render_prompt(self._fn(*args, **given), self.name)
        plan, _, runtime = self._plan(stream=True)
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, self._examples_sync())
        read = TextReader()
        return Stream(lambda done: _scoped(deps, _drivers.read_sync(engine, runtime, read, done)))

    def astream(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[str, R]:
        """Async twin of :meth:`stream`."""
        return AsyncStream(lambda done: self._astream(args, kwargs, done))

    async def _astream(self, args: Any, kwargs: Any, done: _drivers.OnResult) -> AsyncIterator[str]:
        self._check_streamable()
        given, history, deps = self._given(kwargs)
        prompt = await _prompt_async(self._fn, args, given)
        plan, _, runtime = self._plan(stream=True)
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, await self._examples_async())
        chunks = _drivers.read_async(engine, runtime, TextReader(), done)
        if deps is not _NO_DEPS:
            chunks = ascoped_iter(deps, chunks)
        try:
            async for chunk in chunks:
                yield chunk
        finally:  # closed early: the call ends now, not when the loop collects the generator
            await _drivers.aclose(chunks)

    # -- typed streaming --
    def stream_partial(self, *args: P.args, **kwargs: P.kwargs) -> Stream[Partial[R], R]:
        """Yield the typed answer as it arrives: :class:`~alloy.streaming.Partial` views of
        its complete values, the last one carrying the validated value a call returns.

        Tool rounds run first; a re-asked or retried answer streams again (``attempt`` one
        higher). What is shown, field by field, is set with ``alloy.streaming`` markers.
        """
        return Stream(self._read_sync(args, kwargs, self._partial_reader))

    def astream_partial(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[Partial[R], R]:
        """Async twin of :meth:`stream_partial`."""
        return AsyncStream(lambda done: self._read_async(args, kwargs, self._partial_reader, done))

    @overload
    def stream_items(
        self: Command[P, list[E]], *args: P.args, **kwargs: P.kwargs
    ) -> ItemStream[E]: ...
    @overload
    def stream_items(
        self: Command[P, Iterable[E]], *args: P.args, **kwargs: P.kwargs
    ) -> ItemStream[E]: ...
    def stream_items(self, *args: Any, **kwargs: Any) -> ItemStream[Any]:
        """Yield each element of a list answer (``output=list[T]`` or ``Iterable[T]``) once,
        as soon as it is complete and validated as a ``T``; see :class:`~alloy.streaming.ItemStream`."""
        return ItemStream(self._read_sync(args, kwargs, self._item_reader))

    @overload
    def astream_items(
        self: Command[P, list[E]], *args: P.args, **kwargs: P.kwargs
    ) -> AsyncItemStream[E]: ...
    @overload
    def astream_items(
        self: Command[P, Iterable[E]], *args: P.args, **kwargs: P.kwargs
    ) -> AsyncItemStream[E]: ...
    def astream_items(self, *args: Any, **kwargs: Any) -> AsyncItemStream[Any]:
        """Async twin of :meth:`stream_items`."""
        return AsyncItemStream(lambda done: self._read_async(args, kwargs, self._item_reader, done))

    def _read_sync(
        self, args: Any, kwargs: Any, reader: _ReaderFactory
    ) -> Callable[[_drivers.OnResult], Iterator[Any]]:
        """Everything up to the stream's start, done now (so a mistake raises at the call);
        what it returns starts the stream, given what to tell the Result at its end."""
        if self._async_prompt:
            raise ConfigurationError(
                f"{self.name} has an async prompt function: use astream_partial() or "
                "astream_items()"
            )
        answer = self._answer_shape()
        given, history, deps = self._given(kwargs)
        prompt = render_prompt(self._fn(*args, **given), self.name)
        plan, call_id, runtime = self._typed_plan()
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, self._examples_sync(), call_id)
        read = reader(answer, plan, call_id)
        return lambda done: _scoped(deps, _drivers.read_sync(engine, runtime, read, done))

    async def _read_async(
        self, args: Any, kwargs: Any, reader: _ReaderFactory, done: _drivers.OnResult
    ) -> AsyncIterator[Any]:
        answer = self._answer_shape()
        given, history, deps = self._given(kwargs)
        prompt = await _prompt_async(self._fn, args, given)
        plan, call_id, runtime = self._typed_plan()
        runtime = for_call(runtime, plan.config)
        engine = _start(plan, prompt, history, await self._examples_async(), call_id)
        outputs = _drivers.read_async(engine, runtime, reader(answer, plan, call_id), done)
        if deps is not _NO_DEPS:
            outputs = ascoped_iter(deps, outputs)
        try:
            async for output in outputs:
                yield output
        finally:
            await _drivers.aclose(outputs)

    def _answer_shape(self) -> AnswerShape:
        """How the output type is shown while it streams, worked out on the first use."""
        answer = self._answer
        if answer is None:
            answer = self._answer = answer_shape(self._output, self.name)
        return answer

    def _typed_plan(self) -> tuple[_engine.Plan, str, _drivers.Runtime]:
        plan, _, runtime = self._plan(stream=True)
        if plan.output is not self._output:  # output=str: its answer streams as text
            raise ConfigurationError(
                f"{self.name} returns {self._output.expected}, whose answer streams as text: "
                "use stream()"
            )
        return plan, new_call_id() if plan.observed else "", runtime

    def _partial_reader(
        self, answer: AnswerShape, plan: _engine.Plan, call_id: str
    ) -> PartialReader:
        early = not plan.rails_of("output")
        return PartialReader(
            answer, command=self.name, call_id=call_id, early=early, schema=plan.output.schema
        )

    def _item_reader(self, answer: AnswerShape, plan: _engine.Plan, call_id: str) -> ItemReader:
        element = check_items(answer, self.name, self._output.expected)
        validate = self._validate_element
        if validate is None:
            from pydantic import TypeAdapter

            validate_json = TypeAdapter(element).validator.validate_json
            validate = self._validate_element = functools.partial(validate_json, strict=True)
        early = not answer.checked and not plan.rails_of("output")
        return ItemReader(
            answer,
            validate,
            command=self.name,
            call_id=call_id,
            early=early,
            schema=plan.output.schema,
        )

    # -- internals --
    def _given(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
        """The prompt function's keyword arguments, and the call's ``history`` and ``deps``:
        those given to the call, else to :meth:`using` (a prompt function with a parameter of
        that name is given the value instead)."""
        if self._bound:
            kwargs = {**self._bound, **kwargs}
        history = None if self._own_history else kwargs.pop("history", None)
        deps = _NO_DEPS if self._own_deps else kwargs.pop("deps", _NO_DEPS)
        return kwargs, history, deps

    def _examples_sync(self) -> tuple[Message, ...]:
        turns = self._example_turns
        if turns is None:
            turns = example_turns(self._fn, self._examples, render_prompt, self.name)
            self._example_turns = turns
        return turns

    async def _examples_async(self) -> tuple[Message, ...]:
        turns = self._example_turns
        if turns is None:
            turns = await aexample_turns(self._fn, self._examples, render_prompt, self.name)
            self._example_turns = turns
        return turns

    def _check_streamable(self) -> None:
        if self._stream_output.schema is not None:
            raise ConfigurationError(
                f"{self.name} returns {self._output.expected}; stream() streams text: use "
                "stream_partial() (or stream_items() for a list) to stream the typed value"
            )

    def _plan(self, *, stream: bool) -> tuple[_engine.Plan, Model, _drivers.Runtime]:
        """The plan, model and driver runtime for a call, reused while their sources stay put.

        Resolving settings, finding the model and deriving the request parts cost more than the
        rest of a call's own work, and they change only when the environment, ``configure()``,
        ``use_config()``, the model cache or the listeners do; all of that is in the key.
        """
        listeners = global_handlers(), self._handlers, logger.isEnabledFor(logging.DEBUG)
        key = (layers_key(), model_cache_generation(), listeners, stream)
        prepared = self._prepared
        if prepared is not None and prepared[0] == key:
            return prepared[1], prepared[2].model, prepared[2]
        observed = bool(listeners[0] or listeners[1]) or listeners[2]
        config: Config = resolve(self._options, self._call_options)
        output = self._stream_output if stream else self._output
        model = get_model(config.model, api_key=config.api_key, base_url=config.base_url)
        if isinstance(model, StandIn):
            model = model.for_output(output)
        plan = _engine.Plan(
            command=self.name,
            model=model.name,
            output=output,
            config=config,
            tools=self._tool_defs,
            capabilities=model.capabilities,
            stream=stream,
            rails=self._rails,
            observed=observed,
            dialect=dialect_for(model.name),
        )
        fallbacks = fallback_models(config, output)
        plan = with_fallbacks(plan, fallbacks)
        policy = policy_for(config)
        runtime = _drivers.Runtime(
            cached(model, policy, output.schema, self._not_cached),
            self._tool_map,
            config.parallel_tools_max,
            (*listeners[0], *listeners[1]) if observed else (),
            config.log_content,
            tuple(
                cached(fallback, policy, output.schema, self._not_cached) for fallback in fallbacks
            ),
            tool_cache(policy, any(tool.cacheable for tool in self._tool_map.values())),
        )
        self._prepared = (key, plan, runtime)
        return plan, model, runtime

    def __alloy_tool__(self) -> Tool[Any]:
        """This command offered as a tool to another command."""
        command = self

        if inspect.iscoroutinefunction(self._fn):

            async def call_async(*args: Any, **kwargs: Any) -> Any:
                return await command.acall(*args, **kwargs)

            target: Callable[..., Any] = call_async
        else:

            def call_sync(*args: Any, **kwargs: Any) -> Any:
                return command(*args, **kwargs)

            target = call_sync
        functools.update_wrapper(target, self._fn)
        target.__name__ = getattr(self._fn, "__name__", "command")
        target.__alloy_command__ = self  # type: ignore[attr-defined]  # how the tool pickles
        return Tool(target)


def _unpickled(
    cls: type[Command[Any, Any]],
    fn: Callable[..., Any],
    output: OutputType,
    options: Mapping[str, Any],
    tools: tuple[Tool[Any], ...],
    rails: tuple[Rail, ...],
    call_options: Mapping[str, Any],
    examples: tuple[Example, ...],
    bound: Mapping[str, Any],
) -> Command[Any, Any]:
    """A command pickled by value, made again in this process."""
    command = cls(
        fn,
        output=output,
        options=options,
        tools=tools,
        rails=rails,
        call_options=call_options,
        examples=examples,
    )
    command._bound = bound
    return command


class AsyncCommand(Command[P, R]):
    """A command whose prompt function is ``async def``: calling it returns an awaitable."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, R]:  # type: ignore[override]
        return self.acall(*args, **kwargs)

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[str, R]:  # type: ignore[override]
        """The same async iterator as :meth:`astream`, as alloy-ai's ``stream()`` gave for an
        async prompt function."""
        return self.astream(*args, **kwargs)


def _start(
    plan: _engine.Plan,
    prompt: tuple[Part, ...] | Conversation,
    history: Any,
    examples: tuple[Message, ...],
    call_id: str | None = None,
) -> _drivers.Engine:
    """The engine for one call; a call anyone observes gets an id that ties its events."""
    if call_id is None:
        call_id = new_call_id() if plan.observed else ""
    if history is None and not examples and not isinstance(prompt, Conversation):
        return _engine.run(plan, prompt, call_id=call_id)  # the usual call
    parts, prelude = _opening(plan.command, prompt, history, examples)
    return _engine.run(plan, parts, call_id=call_id, prelude=prelude)


def _opening(
    command: str,
    prompt: tuple[Part, ...] | Conversation,
    history: Any,
    examples: tuple[Message, ...],
) -> tuple[tuple[Part, ...], _engine.Prelude]:
    """The new user turn and the turns before it: worked examples, then ``history=``, then the
    prompt function's own earlier turns.

    The prompt function's conversation must end with a user turn (the one the model answers);
    its system message, if any, wins over the history's.
    """
    earlier = to_conversation(history, f"{command}: history=") if history is not None else _NO_TURNS
    if isinstance(prompt, Conversation):
        if not prompt.messages or not isinstance(prompt.messages[-1], UserTurn):
            found = "an assistant turn" if prompt.messages else "no turn at all"
            raise ConfigurationError(
                f"{command}'s prompt function returned a conversation with {found} last; "
                "it must end with a user turn (alloy.User(...)), which the model answers"
            )
        own = prompt.messages[:-1]
        parts = prompt.messages[-1].parts
        system = prompt.system if prompt.system is not None else earlier.system
    else:
        own, parts, system = (), prompt, earlier.system
    check_tool_results(earlier.messages, (*own, UserTurn(parts)), command)
    turns = (*examples, *earlier.messages, *own)
    return parts, _engine.Prelude(
        turns, len(examples), len(examples) + len(earlier.messages), system
    )


_ReaderFactory = Callable[[AnswerShape, _engine.Plan, str], Reader[Any]]
_NO_TURNS = Conversation(None, ())
#: No ``deps=`` was passed (None is a value a caller may pass).
_NO_DEPS: Any = object()


def _scoped(deps: Any, outputs: Iterator[E]) -> Iterator[E]:
    """A stream's outputs, each step run with the call's ``deps`` when it was given them."""
    return outputs if deps is _NO_DEPS else scoped_iter(deps, outputs)


def render_prompt(prompt: Any, command: str = "command") -> tuple[Part, ...] | Conversation:
    """A prompt function's return value as message parts (text, and media when given), or as
    a conversation when it returned messages (alloy.System/User/Assistant or role dicts)."""
    if isinstance(prompt, str):
        return (Text(_sendable(prompt, "The prompt text")),)
    if isinstance(prompt, Media):
        return (prompt,)
    if isinstance(prompt, UserTurn):
        return to_conversation((prompt,), f"{command}'s prompt")
    if isinstance(prompt, (list, tuple)):
        if not prompt:
            raise ConfigurationError(
                f"{command}'s prompt function returned an empty list: there is nothing to send"
            )
        if is_conversation(prompt):
            return to_conversation(prompt, f"{command}'s conversation")
        parts: list[Part] = []
        for index, item in enumerate(prompt):
            if isinstance(item, str):
                parts.append(Text(_sendable(item, f"Prompt part {index}")))
            elif isinstance(item, Media):
                parts.append(item)
            else:
                raise ConfigurationError(
                    f"Prompt items must be str or media (or messages: alloy.System/User/"
                    f"Assistant or role dicts), got {type(item).__name__}"
                )
        return tuple(parts)
    if prompt is None:
        raise ConfigurationError(
            f"{command}'s prompt function returned None: return the prompt text. A docstring is "
            "not the prompt, and a function that returns nothing is refused (alloy-ai sent the "
            "text 'None' to the model)"
        )
    raise ConfigurationError(
        f"A command's function must return the prompt (a str, a list of str and media, or a "
        f"list of messages), "
        f"got {type(prompt).__name__}"
    )


async def _prompt_async(
    fn: Callable[..., Any], args: Any, kwargs: Any
) -> tuple[Part, ...] | Conversation:
    prompt = fn(*args, **kwargs)
    if inspect.isawaitable(prompt):
        prompt = await prompt
    return render_prompt(prompt, getattr(fn, "__qualname__", "command"))


class _Decorator(Generic[T]):
    """What ``@command(...)`` returns: picks the sync or async command class per function."""

    def __init__(
        self,
        output: OutputType,
        options: Mapping[str, Any],
        tools: tuple[Tool[Any], ...],
        rails: tuple[Rail, ...],
        examples: tuple[Example, ...] = (),
    ) -> None:
        self.output = output
        self.options = options
        self.tools = tools
        self.rails = rails
        self.examples = examples

    @overload
    def __call__(self, fn: Callable[P, Awaitable[Prompt]], /) -> AsyncCommand[P, T]: ...
    @overload
    def __call__(self, fn: Callable[P, Prompt], /) -> Command[P, T]: ...
    def __call__(self, fn: Callable[P, Any], /) -> Command[P, T]:
        return _build(fn, self.output, self.options, self.tools, self.rails, self.examples)


def output_type_for(output: Any, *, has_output: bool) -> OutputType:
    """The output machinery for a decorator's ``output=`` argument: text, none, an output type
    given as it is (a format), criteria-aware JSON when the type carries criteria, else JSON."""
    if not has_output:
        return TextOutput()
    if output is None or output is type(None):
        return NoOutput()
    if not isinstance(output, type) and isinstance(output, OutputType):
        return output
    output = portable(output)  # typing.TypedDict, which pydantic refuses before Python 3.12
    return checked_output_for(output) or JsonOutput(output)


def _prepare(
    options: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], tuple[Tool[Any], ...], tuple[Rail, ...]]:
    """Validate decorator options, turn ``tools=`` entries into Tools and check ``rails=``, eagerly."""
    opts = dict(options)
    rails = _flatten_rails(opts.pop("rails", None) or ())
    tools = _as_tools(opts.pop("tools", None) or ())
    return check_options(opts, source=where), tools, rails


def _as_tools(entries: Any) -> tuple[Tool[Any], ...]:
    """``tools=`` entries as Tools, each name used once."""
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
        raise ConfigurationError("tools= must be a list of functions, @tool objects or commands")
    tools = tuple(as_tool(t) for t in entries)
    names = [t.name for t in tools]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ConfigurationError(f"Duplicate tool names: {sorted(duplicates)}")
    return tools


def _flatten_rails(entries: Any) -> tuple[Rail, ...]:
    """``rails=`` takes Rail objects and lists of them (built-ins like ``blocklist`` return lists)."""
    if isinstance(entries, Rail):
        return (entries,)
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
        raise ConfigurationError("rails= must be a list of rails (see alloy.rails)")
    flat: list[Rail] = []
    for entry in entries:
        if isinstance(entry, Rail):
            flat.append(entry)
        elif isinstance(entry, Sequence) and all(isinstance(r, Rail) for r in entry):
            flat.extend(entry)
        else:
            raise ConfigurationError(
                f"rails= entries must be rails made with alloy.rails (input_rail, output_rail, "
                f"tool_rail, judge, ...), got {entry!r}"
            )
    return tuple(flat)


def _build(
    fn: Callable[P, Any],
    output_type: OutputType,
    options: Mapping[str, Any],
    tools: tuple[Tool[Any], ...],
    rails: tuple[Rail, ...] = (),
    examples: tuple[Example, ...] = (),
) -> Command[P, Any]:
    if not callable(fn):
        raise ConfigurationError(f"@command decorates a function that returns a prompt, got {fn!r}")
    _check_output_tool_name(output_type, tools)
    cls = AsyncCommand if inspect.iscoroutinefunction(fn) else Command
    return cls(fn, output=output_type, options=options, tools=tools, rails=rails, examples=examples)


def _check_output_tool_name(output: OutputType, tools: tuple[Tool[Any], ...]) -> None:
    """Refuse a tool that has the name of the output's tool, in every output mode.

    In ``output_mode="tool"`` the answer is a call of a tool named after the output type; a tool
    of the same name would be offered twice and its calls taken for the answer. The mode may be
    chosen only at call time (``auto`` and the model's capabilities), so the clash is refused now.
    """
    if output.schema is None:
        return
    for entry in tools:
        if entry.name == output.name:
            function = getattr(entry.fn, "__qualname__", repr(entry.fn))
            raise ConfigurationError(
                f"Tool {entry.name!r} (function {function}) has the name of the output type "
                f"{output.expected}, whose answer is a tool named {output.name!r} in tool output "
                f"mode; rename the tool, e.g. @tool(name={output.name + '_lookup'!r})"
            )


_MISSING: Any = object()


@overload
def command(fn: Callable[P, Awaitable[Prompt]], /) -> AsyncCommand[P, str]: ...
@overload
def command(fn: Callable[P, Prompt], /) -> Command[P, str]: ...
@overload
def command(
    *,
    output: type[T],
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Unpack[Options],
) -> _Decorator[T]: ...
@overload
def command(
    *,
    output: None,
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Unpack[Options],
) -> _Decorator[None]: ...
@overload
def command(
    *,
    output: TypeForm[T],  # Iterable[int], int | None, Literal[...]: types that are no class
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Unpack[Options],
) -> _Decorator[T]: ...
@overload
def command(
    *,
    output: Any,
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Unpack[Options],
) -> _Decorator[Any]: ...
@overload
def command(
    *,
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Unpack[Options],
) -> _Decorator[str]: ...
def command(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    output: Any = _MISSING,
    tools: Sequence[Any] | None = None,
    rails: Sequence[Any] | None = None,
    examples: Sequence[tuple[Any, Any]] | None = None,
    **options: Any,
) -> Any:
    """Turn a prompt function into a typed model call.

    ``output`` is the return type (a dataclass, TypedDict, pydantic model, primitive, list,
    Enum, Literal, Optional or union); leave it out for text, or pass ``None`` for side effects.
    ``examples`` are worked (input, output) pairs sent before the conversation (see
    :mod:`alloy._examples`).
    """
    has_output = output is not _MISSING
    # Built here, once, so a bad output type fails where it is written.
    output_type = output_type_for(output if has_output else None, has_output=has_output)
    where = (
        f"@command on {getattr(fn, '__qualname__', fn)!r}" if fn is not None else "@command(...)"
    )
    checked, tool_objects, rail_objects = _prepare(
        {"tools": tools, "rails": rails, **options}, where
    )
    worked = check_examples(examples, output_type, where)
    if fn is not None:
        return _build(fn, output_type, checked, tool_objects, rail_objects, worked)
    return _Decorator(output_type, checked, tool_objects, rail_objects, worked)


class _Ask:
    """``ask(prompt, **options)``: a one-off text question, with ``.stream`` and async twins.

    ``tools=`` lets the model call functions before it answers. ``context=`` is put before the
    prompt the way alloy-ai put it (``Context: {context}`` then ``Task: {prompt}``), so prompts
    written for alloy-ai read the same.
    """

    _base: Command[[str], str] | None = None

    def _command(
        self, tools: Sequence[Any] | None, options: Mapping[str, Any]
    ) -> Command[[str], str]:
        if self._base is None:
            self._base = _build(_ask_prompt, _TEXT, {}, ())
        command = _build(_ask_prompt, _TEXT, {}, _as_tools(tools)) if tools else self._base
        return command._with_checked(check_options(options, source="ask()")) if options else command

    def __call__(
        self,
        prompt: str,
        *,
        tools: Sequence[Any] | None = None,
        context: Any = None,
        **options: Unpack[Options],
    ) -> str:
        return self._command(tools, options)(_with_context(prompt, context))

    async def acall(
        self,
        prompt: str,
        *,
        tools: Sequence[Any] | None = None,
        context: Any = None,
        **options: Unpack[Options],
    ) -> str:
        return await self._command(tools, options).acall(_with_context(prompt, context))

    def stream(
        self,
        prompt: str,
        *,
        tools: Sequence[Any] | None = None,
        context: Any = None,
        **options: Unpack[Options],
    ) -> Iterator[str]:
        return self._command(tools, options).stream(_with_context(prompt, context))

    def astream(
        self,
        prompt: str,
        *,
        tools: Sequence[Any] | None = None,
        context: Any = None,
        **options: Unpack[Options],
    ) -> AsyncIterator[str]:
        return self._command(tools, options).astream(_with_context(prompt, context))

    def stream_async(
        self,
        prompt: str,
        *,
        tools: Sequence[Any] | None = None,
        context: Any = None,
        **options: Unpack[Options],
    ) -> AsyncIterator[str]:
        """alloy-ai's name for :meth:`astream`."""
        deprecated("ask.stream_async() is alloy-ai's name: use ask.astream()")
        return self.astream(prompt, tools=tools, context=context, **options)


def _with_context(prompt: str, context: Any) -> str:
    return f"Context: {context}\n\nTask: {prompt}" if context else prompt


def _ask_prompt(prompt: str) -> str:
    return prompt


_ask_prompt.__name__ = _ask_prompt.__qualname__ = "ask"
_TEXT = output_type_for(None, has_output=False)
ask = _Ask()
