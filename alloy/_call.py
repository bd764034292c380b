"""The seam between a command and the engine: a call prepared once, started many times.

:func:`prepare` resolves what every call of a command shares under the settings in force (the
configuration from all its layers, the model, the engine's :class:`~alloy._engine.Plan` and the
drivers' :class:`~alloy._drivers.Runtime`) into a :class:`Prepared`. :meth:`Prepared.start`
renders one call's prompt and returns its engine: the sans-IO generator of effects a driver
steps (``next(engine)`` is its first effect, ``engine.send(reply)`` resumes it).

Every outlet stands on this seam and reaches no private of ``Command``:

- ``Command``'s call forms (call, run, the streams) are :meth:`Prepared.begin` and a driver;
- a run over rows holds one ``Prepared`` for the whole run, its models behind the run's pacer
  (:meth:`Prepared.wrapped`), and runs each row with :meth:`Prepared.arun`;
- a batch run steps a row's call to its first ``CallModel`` (:meth:`Call.astep`), submits that
  request, and resumes a fresh call of the row with the batch's reply (:meth:`Call.arun`).

A ``Prepared`` stays good while what it was resolved from holds (:meth:`Prepared.current`):
``Command.prepare`` keeps one per kind of call and makes it again when that changes.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from . import _drivers, _engine
from ._config import Config, cache_is_off, layers_key, resolve
from ._conversation import Conversation, check_tool_results, is_conversation, to_conversation
from ._cost_cap import for_call
from ._deps import ascoped, ascoped_iter, scoped, scoped_iter
from ._examples import Example, aexample_turns, example_turns
from ._fallback import fallback_models, with_fallbacks
from ._model import Model, StandIn
from ._observers import global_handlers, logger, new_call_id
from ._output import JsonOutput, OutputType, TextOutput
from ._profile import observed_generation
from ._rail_types import Rail
from ._stream_readers import ItemReader, PartialReader, Reader
from ._text import sendable
from ._tools import Tool
from ._types import Media, Message, Part, Response, Result, Text, ToolDefinition, UserTurn
from .errors import BudgetExceeded, ConfigurationError, ProviderError
from .providers import (
    declares_profiles,
    dialect_for,
    endpoint_of,
    get_model,
    model_cache_generation,
    profile_for,
)

if TYPE_CHECKING:
    from ._answer_shape import AnswerShape
    from .cache import NotCached
    from .events import Handler

#: No ``deps=`` was given to the call (None is a value a caller may pass).
NO_DEPS: Any = object()
_NO_TURNS = Conversation(None, ())
_TEXT = TextOutput()


@dataclass(frozen=True, eq=False)
class Spec:
    """What a command is made of, as its calls need it: the prompt function, the output type,
    the decorator's (checked) options, tools, rails and worked examples. ``Command`` makes one
    when it is built; its copies (``with_options``, ``using``) share it, and with it what is
    worked out on first use (the examples' turns, how the answer streams)."""

    fn: Callable[..., Any]
    output: OutputType
    options: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[Tool[Any], ...] = ()
    rails: tuple[Rail, ...] = ()
    examples: tuple[Example, ...] = ()
    #: The examples as turns, rendered through the prompt function on the first call.
    _example_turns: list[tuple[Message, ...]] = field(default_factory=list, repr=False)

    @functools.cached_property
    def name(self) -> str:
        return str(getattr(self.fn, "__qualname__", "command"))

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fn)

    @functools.cached_property
    def async_prompt(self) -> bool:
        """Whether the prompt function is ``async def`` (checked once, not per call)."""
        return inspect.iscoroutinefunction(self.fn)

    @functools.cached_property
    def own_history(self) -> bool:
        """A prompt function with its own ``history`` parameter is given it, and builds the
        conversation itself; otherwise ``history=`` is the earlier turns of the call."""
        return "history" in self.signature.parameters

    @functools.cached_property
    def own_deps(self) -> bool:
        """The same for ``deps``: its own parameter, or the call's dependencies (see _deps)."""
        return "deps" in self.signature.parameters

    @functools.cached_property
    def stream_output(self) -> OutputType:
        """What a streamed call reads: text for ``output=str`` too, a text command to stream."""
        output = self.output
        return _TEXT if isinstance(output, JsonOutput) and output.type is str else output

    @functools.cached_property
    def tool_map(self) -> dict[str, Tool[Any]]:
        return {t.name: t for t in self.tools}

    @functools.cached_property
    def not_cached(self) -> NotCached:
        """Says once why this command's requests are not cached, when a cache is set."""
        from .cache import NotCached

        return NotCached(self.name)

    @functools.cached_property
    def answer_shape(self) -> AnswerShape:
        """How the output is shown while it streams (``stream_partial``, ``stream_items``)."""
        from ._answer_shape import answer_shape  # only a streamed call loads the stream plan

        return answer_shape(self.output, self.name)

    @functools.cached_property
    def validate_element(self) -> Callable[[str], Any]:
        """Validates one element of a list answer (``stream_items``) from its JSON."""
        from ._answer_shape import check_items

        element = check_items(self.answer_shape, self.name, self.output.expected)
        from pydantic import TypeAdapter

        validate_json = TypeAdapter(element).validator.validate_json
        return functools.partial(validate_json, strict=True)

    def arguments(self, kwargs: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any, Any]:
        """The prompt function's keyword arguments, and the call's ``history`` (None) and
        ``deps`` (:data:`NO_DEPS`) taken out of ``kwargs``, unless the prompt function has a
        parameter of that name, which is then given the value. ``kwargs`` is left as it is."""
        takes_history = not self.own_history and "history" in kwargs
        takes_deps = not self.own_deps and "deps" in kwargs
        if not (takes_history or takes_deps):
            return kwargs, None, NO_DEPS  # the usual call
        given = dict(kwargs)
        history = given.pop("history") if takes_history else None
        deps = given.pop("deps") if takes_deps else NO_DEPS
        return given, history, deps

    def examples_sync(self) -> tuple[Message, ...]:
        if not self.examples:
            return ()
        if not self._example_turns:
            turns = example_turns(self.fn, self.examples, render_prompt, self.name)
            self._example_turns[:] = [turns]
        return self._example_turns[0]

    async def examples_async(self) -> tuple[Message, ...]:
        if not self.examples:
            return ()
        if not self._example_turns:
            turns = await aexample_turns(self.fn, self.examples, render_prompt, self.name)
            self._example_turns[:] = [turns]
        return self._example_turns[0]


def sources(handlers: tuple[Any, ...], stream: bool) -> tuple[Any, ...]:
    """What a Prepared is resolved from besides its spec and options: the configuration's
    layers (environment, ``configure()``, ``use_config()``), the model cache, the listeners
    (global handlers, the command's own, debug logging), the kind of call and what the
    process observed of endpoints (a downgraded profile)."""
    listeners = global_handlers(), handlers, logger.isEnabledFor(logging.DEBUG)
    return layers_key(), model_cache_generation(), listeners, stream, observed_generation()


def prepare(
    spec: Spec,
    options: Mapping[str, Any] | None = None,
    *,
    stream: bool = False,
    handlers: tuple[tuple[Handler, tuple[type, ...]], ...] = (),
    given: Mapping[str, Any] | None = None,
    tool_definitions: tuple[ToolDefinition, ...] | None = None,
    hand_back: bool = False,
) -> Prepared:
    """Resolve what every call of ``spec`` shares under the settings now in force.

    ``options`` are the per-call layer (``with_options``), above the spec's own; ``stream``
    prepares streamed calls (an ``output=str`` answer streams as text); ``handlers`` are the
    command's own subscribers, told after the global ones; ``given`` keyword arguments every
    call is given (``history=``, ``deps=``: ``Command.using``). ``tool_definitions`` are
    offered instead of the spec's tools, and ``hand_back`` hands the model's tool calls
    back to the caller instead of running them (``Plan.hand_back``): the ``/v1`` proxy's calls,
    whose caller runs its own tools. A bad option or model raises a ConfigurationError here,
    before any call.
    """
    made_of = sources(handlers, stream)
    global_listeners, own, debug = made_of[2]
    observed = bool(global_listeners or own) or debug
    config: Config = resolve(spec.options, options or {})
    output = spec.stream_output if stream else spec.output
    model = get_model(config.model, api_key=config.api_key, base_url=config.base_url)
    if isinstance(model, StandIn):
        model = model.for_output(output)
    plan = _engine.Plan(
        command=spec.name,
        model=model.name,
        output=output,
        config=config,
        tools=(
            tuple(t.definition for t in spec.tools)
            if tool_definitions is None
            else tool_definitions
        ),
        profile=profile_for(model, config.profile),
        endpoint=endpoint_of(model),
        watch_drops=declares_profiles(model.name),
        stream=stream,
        rails=spec.rails,
        observed=observed,
        dialect=dialect_for(model.name),
        hand_back=hand_back,
    )
    fallbacks = fallback_models(config, output)
    plan = with_fallbacks(plan, fallbacks)
    tools = spec.tool_map
    runtime = _drivers.Runtime(
        model,
        tools,
        config.parallel_tools_max,
        (*global_listeners, *own) if observed else (),
        config.log_content,
        tuple(fallbacks),
    )
    if not cache_is_off(config.cache):
        runtime = _behind_cache(runtime, config, output.schema, spec.not_cached)
    return Prepared(spec, plan, model, runtime, made_of, dict(given or {}))


def _behind_cache(
    runtime: _drivers.Runtime, config: Config, schema: Any, notice: NotCached
) -> _drivers.Runtime:
    """``runtime`` with its models (and cacheable tools) behind the response cache ``config``
    sets: only a call with a cache loads it."""
    from .cache import cached, policy_for, tool_cache

    policy = policy_for(config)
    return replace(
        runtime,
        model=cached(runtime.model, policy, schema, notice),
        fallbacks=tuple(cached(model, policy, schema, notice) for model in runtime.fallbacks),
        tool_cache=tool_cache(policy, any(tool.cacheable for tool in runtime.tools.values())),
        cached=True,
    )


@dataclass(frozen=True, eq=False)
class Prepared:
    """A command's calls, resolved once: start as many as you like.

    ``plan`` is what the engine runs every call by; ``model`` the provider's model it resolved
    to (the one answering, beneath its cache); ``runtime`` what the drivers carry the effects
    out with (the model behind the response cache, the fallbacks, the tools, the listeners).
    """

    spec: Spec
    plan: _engine.Plan
    model: Model
    runtime: _drivers.Runtime
    #: What it was resolved from (see :func:`sources`).
    made_of: tuple[Any, ...] = ()
    #: Keyword arguments every call is given (``Command.using``: ``history=``, ``deps=``);
    #: those given to a call win.
    given: Mapping[str, Any] = field(default_factory=dict)

    def current(self, handlers: tuple[Any, ...] = ()) -> bool:
        """Whether what this was resolved from still holds (the command's own ``handlers``
        given again): configuration layers, model cache and listeners alike."""
        return sources(handlers, self.plan.stream) == self.made_of

    def start(
        self,
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        call_id: str | None = None,
    ) -> _drivers.Engine:
        """The engine of one call of the prompt function with ``args`` and ``kwargs``
        (``history=`` in them is the call's earlier turns). The engine does no I/O: step it
        with a driver (``_drivers``), in the context of the call's ``deps=`` when it has any
        (:meth:`begin` keeps them with it)."""
        return self.begin(args, kwargs or {}, call_id=call_id).engine

    def begin(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any], *, call_id: str | None = None
    ) -> Call:
        """One call started: its engine, the runtime its driver uses, its ``deps``. The
        prompt function runs now, so a mistake in it raises here."""
        spec = self.spec
        if spec.async_prompt:
            raise ConfigurationError(
                f"{spec.name} has an async prompt function: await it (acall, arun, astream...)"
            )
        given, history, deps = spec.arguments({**self.given, **kwargs} if self.given else kwargs)
        prompt = render_prompt(spec.fn(*args, **given), spec.name)
        engine = _engine_for(self.plan, prompt, history, spec.examples_sync(), call_id)
        return Call(engine, for_call(self.runtime, self.plan.config), deps)

    async def abegin(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any], *, call_id: str | None = None
    ) -> Call:
        """Async twin of :meth:`begin`: the prompt function may be ``async def``."""
        spec = self.spec
        given, history, deps = spec.arguments({**self.given, **kwargs} if self.given else kwargs)
        prompt = spec.fn(*args, **given)
        if inspect.isawaitable(prompt):
            prompt = await prompt
        prompt = render_prompt(prompt, spec.name)
        examples = await spec.examples_async()
        engine = _engine_for(self.plan, prompt, history, examples, call_id)
        return Call(engine, for_call(self.runtime, self.plan.config), deps)

    def run(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Result[Any]:
        """One whole call, blocking."""
        return self.begin(args, kwargs).run()

    async def arun(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Result[Any]:
        """One whole call, on the running event loop."""
        return await (await self.abegin(args, kwargs)).arun()

    def wrapped(self, wrap: Callable[[Any], Any]) -> Prepared:
        """The same calls, each model (and fallback) given to ``wrap`` beneath its response
        cache: a run's pacer, say, sees only the requests that reach the provider."""
        from .cache import wrap_under_cache

        runtime = self.runtime
        return self.with_runtime(
            replace(
                runtime,
                model=wrap_under_cache(runtime.model, wrap),
                fallbacks=tuple(wrap_under_cache(model, wrap) for model in runtime.fallbacks),
            )
        )

    def with_runtime(self, runtime: _drivers.Runtime) -> Prepared:
        """The same calls, their effects carried out with ``runtime``."""
        return replace(self, runtime=runtime)

    def new_call_id(self) -> str:
        """An id that ties a call's events together, when anyone observes them; else ''."""
        return new_call_id() if self.plan.observed else ""

    def partial_reader(self, call_id: str) -> PartialReader:
        """What ``stream_partial`` reads a call's answer with."""
        plan = self.plan
        early = not plan.rails_of("output")
        return PartialReader(
            self.spec.answer_shape,
            command=self.spec.name,
            call_id=call_id,
            early=early,
            schema=plan.output.schema,
        )

    def item_reader(self, call_id: str) -> ItemReader:
        """What ``stream_items`` reads a call's answer with."""
        answer = self.spec.answer_shape
        validate = self.spec.validate_element
        early = not answer.checked and not self.plan.rails_of("output")
        return ItemReader(
            answer,
            validate,
            command=self.spec.name,
            call_id=call_id,
            early=early,
            schema=self.plan.output.schema,
        )


class Call(NamedTuple):
    """One started call: its engine, the runtime its driver carries the effects out with
    (behind a purse of its own when the call has a ``cost_budget``), and its ``deps=``
    (:data:`NO_DEPS` when it was given none), set while alloy runs the call's own code."""

    engine: _drivers.Engine
    runtime: _drivers.Runtime
    deps: Any = NO_DEPS

    def run(self) -> Result[Any]:
        """The whole call, blocking."""
        if self.deps is NO_DEPS:
            return _drivers.run_sync(self.engine, self.runtime)
        return scoped(self.deps, lambda: _drivers.run_sync(self.engine, self.runtime))

    async def arun(self, reply: Any = None) -> Result[Any]:
        """The whole call on the running event loop; ``reply`` resumes a call that
        :meth:`astep` stopped at a ``CallModel`` (the model's Response, or a ``Failed``)."""
        step = await self.astep(reply, stream=False)
        assert isinstance(step, Result)
        return step

    async def astep(self, reply: Any = None, *, stream: bool = True) -> Result[Any] | Any:
        """Carry out the call's effects until it asks the model (the ``CallModel`` is
        returned, its request not sent) or ends (its Result); ``reply`` is what the engine
        is sent first (None to start it)."""
        drive = _drivers.drive_async(self.engine, self.runtime, reply, stream=stream)
        return await (drive if self.deps is NO_DEPS else ascoped(self.deps, drive))

    async def aask(self, effect: _engine.CallModel) -> Response | _engine.Failed:
        """The reply to ``effect`` (a ``CallModel`` :meth:`astep` stopped at) from the model
        it names, as the driver would ask it: the reply to send, a failure included."""
        try:
            response: Response = await self.runtime.model_for(effect).arequest(effect.request)
        except (ProviderError, BudgetExceeded) as error:
            return _engine.Failed(error)
        return response

    def read(self, reader: Reader[Any]) -> Callable[[_drivers.OnResult], Iterator[Any]]:
        """The call streamed through ``reader``, blocking; given what to tell the Result."""

        def outputs(done: _drivers.OnResult) -> Iterator[Any]:
            read = _drivers.read_sync(self.engine, self.runtime, reader, done)
            return read if self.deps is NO_DEPS else scoped_iter(self.deps, read)

        return outputs

    async def aread(self, reader: Reader[Any], done: _drivers.OnResult) -> AsyncIterator[Any]:
        """The call streamed through ``reader`` on the running event loop."""
        outputs = _drivers.read_async(self.engine, self.runtime, reader, done)
        if self.deps is not NO_DEPS:
            outputs = ascoped_iter(self.deps, outputs)
        try:
            async for output in outputs:
                yield output
        finally:  # closed early: the call ends now, not when the loop collects the generator
            await _drivers.aclose(outputs)


def _engine_for(
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


def render_prompt(prompt: Any, command: str = "command") -> tuple[Part, ...] | Conversation:
    """A prompt function's return value as message parts (text, and media when given), or as
    a conversation when it returned messages (alloy.System/User/Assistant or role dicts)."""
    if isinstance(prompt, str):
        return (Text(sendable(prompt, "The prompt text")),)
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
                parts.append(Text(sendable(item, f"Prompt part {index}")))
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
