"""``@command``: a function that returns a prompt becomes a typed model call.

The decorator does all checking it can up front — the output type becomes a strict schema, tools
get their schemas, options are validated — so mistakes surface at import time, not mid-call.
Each call then resolves settings, renders the prompt, and hands the engine to a driver.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
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

from . import _drivers
from ._call import NO_DEPS, Prepared, Spec, prepare
from ._config import check_options, flatten_rails
from ._conversation import MessageLike
from ._examples import Example, check_examples
from ._legacy import deprecated
from ._model import Model
from ._output import JsonOutput, NoOutput, OutputType, TextOutput
from ._pickling import by_reference, function_ref, located, without_key
from ._rail_types import Rail
from ._stream_readers import Reader, TextReader
from ._tools import Tool, as_tool
from ._typeddict import portable
from ._types import Media, Result, UserTurn
from .errors import ConfigurationError
from .streaming import AsyncItemStream, AsyncStream, ItemStream, Partial, Stream

if TYPE_CHECKING:
    from pydantic import SecretStr
    from typing_extensions import TypeForm

    from .eval import Case, Dataset, Report
    from .events import Event, Handler
    from .rows import AsyncRows, Budget, Rows
    from .rows import Settings as RunSettings
    from .rows._run import Run

P = ParamSpec("P")
#: An argument of :meth:`Command.using` that was not given.
_UNSET: Any = object()
R = TypeVar("R")
T = TypeVar("T")
E = TypeVar("E")

Prompt = Union[str, Media, Sequence[str | Media], UserTurn, Sequence[MessageLike]]
_Q = ParamSpec("_Q")


def _keywords_of(written: Callable[_Q, object]) -> Callable[[Callable[..., T]], Callable[_Q, T]]:
    """The decorated method (a twin: async, or streamed) takes the parameters of ``written``,
    whose keywords are written out once, there: type checkers and ``inspect.signature`` see
    them. It returns what it returns itself; its ``**keywords`` are what ``written`` takes
    (filled in with :func:`_keywords` where the defaults matter)."""

    def twin(method: Callable[..., T]) -> Callable[_Q, T]:
        returns = inspect.signature(method).return_annotation
        method.__signature__ = inspect.signature(written).replace(return_annotation=returns)  # type: ignore[attr-defined]
        return method

    return twin


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
    """A typed model call. Call it like the function it decorates.

    The face of the call: each call form prepares the command's calls once
    (:meth:`prepare`, see :mod:`alloy._call`), starts one, and hands it to a driver.
    """

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
        self._spec = Spec(fn, output, dict(options), tools, rails, examples)
        self._handlers: tuple[tuple[Handler, tuple[type[Event], ...]], ...] = ()
        self._call_options = dict(call_options or {})
        #: The Prepared of the last call, whole (False) and streamed (True): see :meth:`prepare`.
        self._prepared: dict[bool, Prepared] = {}
        functools.update_wrapper(self, fn)
        self.__signature__ = self._spec.signature
        #: ``history=`` and ``deps=`` given through :meth:`using`, for every call.
        self._bound: Mapping[str, Any] = {}

    # -- introspection --
    @property
    def spec(self) -> Spec:
        """What the command is made of (its function, output, options, tools, rails and
        examples): what :func:`alloy._call.prepare` prepares its calls from."""
        return self._spec

    @property
    def schema(self) -> dict[str, Any] | None:
        """The exact canonical JSON Schema sent for the output (None for text output)."""
        return self._spec.output.schema

    @property
    def output_type(self) -> OutputType:
        return self._spec.output

    @property
    def tools(self) -> tuple[Tool[Any], ...]:
        return self._spec.tools

    @property
    def name(self) -> str:
        return self._spec.name

    def __repr__(self) -> str:
        return f"<alloy command {self.name} -> {self._spec.output.expected}>"

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
        spec = self._spec
        made_of = (
            function_ref(self._fn),
            spec.output,
            without_key(spec.options),
            spec.tools,
            spec.rails,
            without_key(self._call_options),
            spec.examples,
            dict(self._bound),
        )
        return (_unpickled, (type(self), *made_of))

    @property
    def rails(self) -> tuple[Rail, ...]:
        return self._spec.rails

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
        clone._prepared = {}  # its calls are given what it was given: prepared anew
        return clone

    def _with_checked(self, checked: Mapping[str, Any]) -> Command[P, R]:
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._call_options = {**self._call_options, **checked}
        clone._prepared = {}
        return clone

    def prepare(self, *, stream: bool = False) -> Prepared:
        """This command's calls (``stream``: streamed ones) resolved under the settings in
        force: configuration, model, plan and runtime (see :mod:`alloy._call`). Kept and
        reused while what it was resolved from holds, so a warm call resolves nothing."""
        prepared = self._prepared.get(stream)
        if prepared is None or not prepared.current(self._handlers):
            prepared = prepare(
                self._spec,
                self._call_options,
                stream=stream,
                handlers=self._handlers,
                given=self._bound,
            )
            self._prepared[stream] = prepared
        return prepared

    # -- calling --
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.run(*args, **kwargs).value

    async def acall(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Await the call (also spelled ``async_``)."""
        return (await self.arun(*args, **kwargs)).value

    async_ = acall

    def run(self, *args: P.args, **kwargs: P.kwargs) -> Result[R]:
        """Call and return the value with its record (raw output, transcript, usage)."""
        if self._spec.async_prompt:
            raise ConfigurationError(
                f"{self.name} has an async prompt function: await it or use acall()"
            )
        return self.prepare().begin(args, kwargs).run()

    async def arun(self, *args: P.args, **kwargs: P.kwargs) -> Result[R]:
        """Async twin of :meth:`run`."""
        return await self.prepare().arun(args, kwargs)

    # -- over rows --
    def map(
        self,
        inputs: Iterable[Any] | AsyncIterable[Any],
        *,
        settings: RunSettings | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        as_completed: bool = False,
        errors: Literal["collect", "raise"] = "collect",
        progress: bool | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        retry_failed: bool = True,
        total: int | None = None,
        deps: Any = NO_DEPS,
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

        ``settings`` gives all of these at once, as an :class:`alloy.rows.Settings` (made once
        and passed to many runs, say); it is given instead of the keywords, not with them.
        """
        given = locals()  # the options, before anything else is named here
        from .rows import Rows  # asyncio and the run machinery load only when a run is made

        return Rows(self._run_over(inputs, given))

    @_keywords_of(map)
    def amap(self, inputs: Any, **keywords: Any) -> AsyncRows[R]:
        """:meth:`map` on the running event loop: ``async for row in cmd.amap(rows)``, or
        ``await cmd.amap(rows)`` for the list of records."""
        from .rows import AsyncRows

        return AsyncRows(self._run_over(inputs, _keywords(Command.map, keywords)))

    # -- measuring --
    def eval(
        self,
        cases: Dataset | Iterable[Case | Mapping[str, Any]],
        *,
        models: Sequence[str | Model] | Mapping[str, str | Model] | None = None,
        repeats: int = 1,
        mode: Literal["online", "batch"] = "online",
        cache: str | os.PathLike[str] | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        scorers: Mapping[str, Any] | None = None,
        concurrency: int = 8,
        seed: int = 0,
        settings: RunSettings | None = None,
    ) -> Report:
        """Measure the command on ``cases`` field by field, for each of ``models`` (a list of
        model strings, or a dict of name -> model string or Model; default: the command's
        model), ``repeats`` times per case, through :meth:`map` (``mode="batch"``: the batch
        API). ``cache`` caches every request (a re-run asks nothing again; the repeat index is
        part of the key), ``checkpoint`` is a directory that lets a stopped eval resume,
        ``scorers`` overrides the type-derived scorer per JSON path, ``seed`` makes every
        interval reproducible, ``settings`` (an :class:`alloy.rows.Settings`) tunes the runs
        further. Returns an :class:`alloy.eval.Report`; see the "Evaluating" guide."""
        given = locals()  # the options, before anything else is named here
        from .eval import evaluate  # the eval machinery loads only when an eval is run

        options = {name: given[name] for name in _keyword_defaults(Command.eval)}
        return evaluate(self, cases, **options)

    @_keywords_of(eval)
    async def aeval(self, cases: Any, **keywords: Any) -> Report:
        """:meth:`eval` on the running event loop."""
        from .eval import aevaluate

        return await aevaluate(self, cases, **_keywords(Command.eval, keywords))

    def _run_over(self, inputs: Any, given: Mapping[str, Any]) -> Run:
        from .rows._run import Run

        settings = _run_settings(given)
        prepared = self.prepare()  # refuses bad options at once
        if settings.mode == "online" or (
            settings.mode == "auto" and not _batch_worth(prepared, settings, inputs)
        ):
            return Run(prepared, inputs, settings)
        from .batch._run import BatchRun

        return BatchRun(prepared, inputs, settings)

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> Stream[str, R]:
        """Yield the answer's text as it arrives; tool rounds run in between. Once it has all
        arrived, the stream's ``result`` is the call's Result (to carry the call on)."""
        if self._spec.async_prompt:
            raise ConfigurationError(f"{self.name} has an async prompt function: use astream()")
        self._check_streamable()
        call = self.prepare(stream=True).begin(args, kwargs)
        return Stream(call.read(TextReader()))

    def astream(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[str, R]:
        """Async twin of :meth:`stream`."""
        return AsyncStream(lambda done: self._astream(args, kwargs, done))

    async def _astream(self, args: Any, kwargs: Any, done: _drivers.OnResult) -> AsyncIterator[str]:
        self._check_streamable()
        call = await self.prepare(stream=True).abegin(args, kwargs)
        chunks = call.aread(TextReader(), done)
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
        return Stream(self._read_sync(args, kwargs, Prepared.partial_reader))

    def astream_partial(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[Partial[R], R]:
        """Async twin of :meth:`stream_partial`."""
        return AsyncStream(
            lambda done: self._read_async(args, kwargs, Prepared.partial_reader, done)
        )

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
        return ItemStream(self._read_sync(args, kwargs, Prepared.item_reader))

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
        return AsyncItemStream(
            lambda done: self._read_async(args, kwargs, Prepared.item_reader, done)
        )

    def _read_sync(
        self, args: Any, kwargs: Any, reader: _ReaderFactory
    ) -> Callable[[_drivers.OnResult], Iterator[Any]]:
        """Everything up to the stream's start, done now (so a mistake raises at the call);
        what it returns starts the stream, given what to tell the Result at its end."""
        if self._spec.async_prompt:
            raise ConfigurationError(
                f"{self.name} has an async prompt function: use astream_partial() or "
                "astream_items()"
            )
        self._spec.answer_shape  # noqa: B018  # an output that cannot stream fails first
        prepared = self._typed()
        call_id = prepared.new_call_id()
        call = prepared.begin(args, kwargs, call_id=call_id)
        return call.read(reader(prepared, call_id))

    async def _read_async(
        self, args: Any, kwargs: Any, reader: _ReaderFactory, done: _drivers.OnResult
    ) -> AsyncIterator[Any]:
        self._spec.answer_shape  # noqa: B018
        prepared = self._typed()
        call_id = prepared.new_call_id()
        call = await prepared.abegin(args, kwargs, call_id=call_id)
        outputs = call.aread(reader(prepared, call_id), done)
        try:
            async for output in outputs:
                yield output
        finally:  # closed early: the call ends now, not when the loop collects the generator
            await _drivers.aclose(outputs)

    def _typed(self) -> Prepared:
        """The streamed calls of a typed answer (``stream_partial``, ``stream_items``)."""
        prepared = self.prepare(stream=True)
        if prepared.plan.output is not self._spec.output:  # output=str: it streams as text
            raise ConfigurationError(
                f"{self.name} returns {self._spec.output.expected}, whose answer streams as "
                "text: use stream()"
            )
        return prepared

    # -- internals --
    def _check_streamable(self) -> None:
        if self._spec.stream_output.schema is not None:
            raise ConfigurationError(
                f"{self.name} returns {self._spec.output.expected}; stream() streams text: use "
                "stream_partial() (or stream_items() for a list) to stream the typed value"
            )

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


def _batch_worth(prepared: Prepared, settings: RunSettings, inputs: Any) -> bool:
    """Whether ``mode="auto"`` takes the batch API: enough rows, known in advance, a
    provider with a batch API, and no tools (a batched request cannot run them)."""
    from .batch import batch_api_for

    count = settings.total
    if count is None:
        try:
            count = len(inputs)
        except TypeError:
            return False
    if count < settings.batch_min_rows or prepared.spec.tools or settings.cost_budget is not None:
        return False  # a batch request cannot run tools, nor be held to a cost cap
    try:
        batch_api_for(prepared.model)
    except ConfigurationError:
        return False
    return True


def _run_settings(given: Mapping[str, Any]) -> RunSettings:
    """The settings of a run over rows: ``settings=`` as given, or ``map()``'s (``amap()``'s)
    keywords made into them, here only. Keywords given beside ``settings=`` are refused."""
    from .rows import Settings

    defaults = _keyword_defaults(Command.map)
    keywords = {name: given[name] for name in defaults if name != "settings"}
    chosen = given["settings"]
    if chosen is None:
        return Settings(**keywords)
    if not isinstance(chosen, Settings):
        raise ConfigurationError(
            f"map(settings=...) takes an alloy.rows.Settings, got {type(chosen).__name__}"
        )
    also = [
        name
        for name, value in keywords.items()
        if value is not defaults[name] and (name == "deps" or value != defaults[name])
    ]
    if also:
        raise ConfigurationError(
            f"map() was given settings= and {', '.join(f'{name}=' for name in also)} too: "
            "put them in the settings (dataclasses.replace(settings, ...))"
        )
    return chosen


@functools.cache
def _keyword_defaults(written: Callable[..., Any]) -> dict[str, Any]:
    """The keyword-only parameters of ``written`` (``map()``, ``eval()``), with their defaults."""
    parameters = inspect.signature(written).parameters.values()
    return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}


def _keywords(written: Callable[..., Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """A twin's ``**keywords`` as the keyword-only parameters of ``written``, with its defaults
    for those not given; a TypeError for one it does not take, as a call of ``written`` raises."""
    defaults = _keyword_defaults(written)
    unknown = given.keys() - defaults.keys()
    if unknown:
        name = written.__name__
        raise TypeError(f"{name}() and its async twin take no keyword argument {min(unknown)!r}")
    return {**defaults, **given}


class AsyncCommand(Command[P, R]):
    """A command whose prompt function is ``async def``: calling it returns an awaitable."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, R]:  # type: ignore[override]
        return self.acall(*args, **kwargs)

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> AsyncStream[str, R]:  # type: ignore[override]
        """The same async iterator as :meth:`astream`, as alloy-ai's ``stream()`` gave for an
        async prompt function."""
        return self.astream(*args, **kwargs)


#: Makes what a typed stream reads a call's answer with (see ``Prepared.partial_reader``).
_ReaderFactory = Callable[[Prepared, str], Reader[Any]]


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
    if "alloy.checks._criterion" not in sys.modules:
        # A criterion is an instance of alloy.checks' Criterion: before that module is loaded
        # no type can carry one, so a plain call never loads the checks.
        return JsonOutput(output)
    from .checks import checked_output_for

    return checked_output_for(output) or JsonOutput(output)


def _check_decorator_options(
    options: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], tuple[Tool[Any], ...], tuple[Rail, ...]]:
    """Validate decorator options, turn ``tools=`` entries into Tools and check ``rails=``, eagerly."""
    opts = dict(options)
    rails = flatten_rails(opts.pop("rails", None) or ())
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


class _DecoratorOptions(Options, total=False):
    """What ``@command(...)`` takes besides ``output=``: the options, tools, rails, examples."""

    tools: Sequence[Any] | None
    rails: Sequence[Any] | None
    examples: Sequence[tuple[Any, Any]] | None


@overload
def command(fn: Callable[P, Awaitable[Prompt]], /) -> AsyncCommand[P, str]: ...
@overload
def command(fn: Callable[P, Prompt], /) -> Command[P, str]: ...
@overload
def command(*, output: type[T], **options: Unpack[_DecoratorOptions]) -> _Decorator[T]: ...
@overload
def command(*, output: None, **options: Unpack[_DecoratorOptions]) -> _Decorator[None]: ...
@overload
def command(
    *,
    output: TypeForm[T],  # Iterable[int], int | None, Literal[...]: types that are no class
    **options: Unpack[_DecoratorOptions],
) -> _Decorator[T]: ...
@overload
def command(*, output: Any, **options: Unpack[_DecoratorOptions]) -> _Decorator[Any]: ...
@overload
def command(**options: Unpack[_DecoratorOptions]) -> _Decorator[str]: ...
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
    checked, tool_objects, rail_objects = _check_decorator_options(
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

    @_keywords_of(__call__)
    async def acall(self, prompt: str, **keywords: Any) -> str:
        command, text = self._asked(prompt, keywords)
        return await command.acall(text)

    @_keywords_of(__call__)
    def stream(self, prompt: str, **keywords: Any) -> Iterator[str]:
        command, text = self._asked(prompt, keywords)
        return command.stream(text)

    @_keywords_of(__call__)
    def astream(self, prompt: str, **keywords: Any) -> AsyncIterator[str]:
        command, text = self._asked(prompt, keywords)
        return command.astream(text)

    @_keywords_of(__call__)
    def stream_async(self, prompt: str, **keywords: Any) -> AsyncIterator[str]:
        """alloy-ai's name for :meth:`astream`."""
        deprecated("ask.stream_async() is alloy-ai's name: use ask.astream()")
        command, text = self._asked(prompt, keywords)
        return command.astream(text)

    def _asked(self, prompt: str, keywords: dict[str, Any]) -> tuple[Command[[str], str], str]:
        """The command that answers a call given ``keywords`` (``tools=``, ``context=`` and the
        options), and the prompt it is given."""
        tools, context = keywords.pop("tools", None), keywords.pop("context", None)
        return self._command(tools, keywords), _with_context(prompt, context)


def _with_context(prompt: str, context: Any) -> str:
    return f"Context: {context}\n\nTask: {prompt}" if context else prompt


def _ask_prompt(prompt: str) -> str:
    return prompt


_ask_prompt.__name__ = _ask_prompt.__qualname__ = "ask"
_TEXT = output_type_for(None, has_output=False)
ask = _Ask()
