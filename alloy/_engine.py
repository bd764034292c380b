"""The run loop of a command, as a sans-IO generator.

The engine never calls a model, runs a tool or sleeps. It *yields effects* (``CallModel``,
``RunTools``, ``Sleep``, ``Emit``) and receives their results; the sync and async drivers carry
the effects out. So there is one copy of the loop logic — tool rounds, the finalize turn, re-asks,
retries of transient failures — and it can be tested by pushing responses in and looking at the
next effect, with no model and no event loop (the shape of httpx's auth flow and of h11).
It reads no clock of its own either: the time budget of a call (``deadline``) is measured on the
clock passed to :func:`run`, so tests push a fake one.
"""

from __future__ import annotations

import json
import logging
import math
import time
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, Union

from ._config import Config
from ._extract import extract_json
from ._output import InvalidOutput, NoOutput, OutputType, Parsed, SchemaOutput
from ._profile import Profile, below, names_output_feature, observe, says_unsupported
from ._rail_types import (
    OutputSubject,
    PromptSubject,
    Rail,
    RailKind,
    Subject,
    ToolCallSubject,
    ToolResultSubject,
)
from ._text import SURROGATE_ADVICE, lone_surrogate_at
from ._types import (
    Dialect,
    Enforcement,
    FinishReason,
    Message,
    ModelSettings,
    ModelTurn,
    OutputMode,
    OutputSpec,
    Part,
    PromptModeWarning,
    Request,
    Response,
    Result,
    RetryPrompt,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Transcript,
    Usage,
    UserTurn,
)
from .errors import (
    BadRequestError,
    BudgetExceeded,
    CommandError,
    ConfigurationError,
    ContentFilteredError,
    EmptyOutputError,
    EnforcementError,
    ParseError,
    ProviderError,
    ProviderTimeoutError,
    RailBlocked,
    RefusalError,
    SchemaRejectedError,
    ToolError,
    ToolLoopLimitExceeded,
    TruncatedOutputError,
    snippet,
)

if TYPE_CHECKING:
    from .events import (
        CommandCancelled,
        CommandFailed,
        CommandFinished,
        CommandStarted,
        Event,
        FellBack,
        FinalizeTurn,
        ModelRequest,
        ModelResponse,
        OutputParsed,
        OutputReady,
        OutputRejected,
        ProfileDowngraded,
        PromptRendered,
        ProviderRetry,
        Reask,
        ToolCallFinished,
        ToolCallStarted,
    )


def _event(kind: str) -> Callable[..., Event]:
    """What builds the event class ``alloy.events.<kind>``, importing it on first use: the
    engine builds events only for a call someone listens to (``_Run.emit``), so a call nobody
    listens to never loads the two dozen event classes."""

    def build(*fields: Any, **named: Any) -> Event:
        from . import events

        made: Event = getattr(events, kind)(*fields, **named)
        return made

    return build


if not TYPE_CHECKING:
    CommandCancelled = _event("CommandCancelled")
    CommandFailed = _event("CommandFailed")
    CommandFinished = _event("CommandFinished")
    CommandStarted = _event("CommandStarted")
    FellBack = _event("FellBack")
    FinalizeTurn = _event("FinalizeTurn")
    ModelRequest = _event("ModelRequest")
    ModelResponse = _event("ModelResponse")
    OutputParsed = _event("OutputParsed")
    OutputReady = _event("OutputReady")
    OutputRejected = _event("OutputRejected")
    ProfileDowngraded = _event("ProfileDowngraded")
    PromptRendered = _event("PromptRendered")
    ProviderRetry = _event("ProviderRetry")
    Reask = _event("Reask")
    ToolCallFinished = _event("ToolCallFinished")
    ToolCallStarted = _event("ToolCallStarted")

#: Finish reasons that end a call with their own error (see ``check_finish``).
_ENDED_EARLY = frozenset({"length", "refusal", "content_filter"})
#: A reply the response cache missed and would store once the engine accepts it.
_TO_STORE = frozenset({"miss", "record"})

# -- effects ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallModel:
    """Send this request to the model; the driver sends back a Response or a ``Failed``."""

    request: Request
    #: Which model: 0 is the plan's own, n its n-th fallback (see ``Plan.fallbacks``).
    fallback: int = 0


class Abandoned(Exception):
    """What a driver throws into the engine when a streamed call stops while the engine waits
    on it: the caller closed the stream or cancelled its task (``error`` None), or something
    that is no CommandError broke the driver (``error``). The engine tells the observers
    (``CommandCancelled``, or ``CommandFailed`` with ``error``) and raises it again."""

    def __init__(self, reason: str, error: BaseException | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run these tool calls; the driver sends back one ``ToolOutcome`` per call, in order.

    A call may run for its tool's own timeout, else ``tool_timeout``, and never longer than
    ``time_left`` (until the call's deadline); None is no limit. One past its limit is a
    timed-out outcome.
    """

    calls: tuple[ToolCall, ...]
    tool_timeout: float | None = None
    time_left: float | None = None


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait before retry number ``attempt`` of a transient failure; the driver sends back None.

    ``longest`` is the longest the wait may be, and the engine checked that it fits the call's
    deadline: the provider's ``retry_after`` hint when it gave one (at most a minute), else the
    exponential backoff's ceiling. The driver draws the jitter (see :meth:`seconds`), so the
    engine stays deterministic.
    """

    attempt: int
    retry_after: float | None
    longest: float

    def seconds(self, draw: float) -> float:
        """The wait for a random ``draw`` in [0, 1): the provider's hint as it is, else between
        half and all of the backoff's ceiling (jitter spreads clients that failed together)."""
        if self.retry_after is not None:
            return self.longest
        return self.longest * (1.0 + draw) / 2


@dataclass(frozen=True, slots=True)
class Emit:
    """Tell the observers (handlers, debug logging) about ``event``; the driver sends back None."""

    event: Event


@dataclass(frozen=True, slots=True)
class Accepted:
    """The call goes on from ``response``, the reply to a ``CallModel`` (to a tool round or the
    finalize turn), or made its value from it; the driver sends back None.

    Only a reply the response cache missed is announced (its ``cache`` is ``miss`` or
    ``record``): the cache stores what the engine accepted, never a reply that failed
    validation or ended the call with an error (see ``alloy.cache``).
    """

    response: Response
    #: Which model answered (see ``CallModel.fallback``).
    fallback: int = 0


@dataclass(frozen=True, slots=True)
class RunRails:
    """Run ``rails`` in order over ``subject``; the driver sends back the subject they let
    through (maybe rewritten), or ``Blocked`` when one refused or raised."""

    rails: tuple[Rail, ...]
    subject: Subject


@dataclass(frozen=True, slots=True)
class Stale:
    """``response``, a reply the response cache handed back (its ``cache`` is ``hit``), failed
    validation: the next time its request is sent, the provider is asked instead of the store.
    The driver sends back whether it will be (False without a cache, or in replay mode, which
    asks no provider), and the engine then sends the same request again.
    """

    response: Response
    #: Which model answered (see ``CallModel.fallback``).
    fallback: int = 0


Effect = Union[CallModel, RunTools, Sleep, Emit, RunRails, Accepted, Stale]
#: A rail subject's own type: rails send back a subject of the type they were given.
S = TypeVar("S", PromptSubject, OutputSubject, ToolCallSubject, ToolResultSubject)


@dataclass(frozen=True, slots=True)
class Blocked:
    """A rail refused the subject of a ``RunRails``."""

    rail: str
    reason: str
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """A model call failed with a (mapped) provider error, or was refused before it was sent
    because it would pass a cost budget (see ``_cost_cap``)."""

    error: ProviderError | BudgetExceeded
    #: A streamed call had already handed text to its caller (in this or an earlier turn):
    #: another model can no longer take the call over from its start.
    after_text: bool = False


@dataclass(frozen=True, slots=True)
class HandedBack:
    """The value of a call that hands back (``Plan.hand_back``) when the model gave no answer
    to read: the tool calls it made, for the caller to run (after the tool rails), or a reply
    cut off, refused or filtered (its text and refusal after the output rails)."""

    finish: FinishReason
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call's result, plus the exception when the tool failed."""

    result: ToolResult
    error: BaseException | None = None


# -- the plan of one call -----------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Everything the engine needs for a command's calls but the prompt, resolved beforehand.

    A command reuses its plan for as long as the settings it was resolved from stay the same,
    so what the plan derives (the output spec, system prompt and settings every request
    carries) is worked out once, not per call.
    """

    command: str
    model: str
    output: OutputType
    config: Config
    tools: tuple[ToolDefinition, ...] = ()
    #: What the endpoint and model support (resolved by ``alloy.providers.profile_for``): the
    #: output mode is chosen from it.
    profile: Profile = field(default_factory=Profile)
    #: The endpoint the profile is of (its base URL, else the provider): with ``model``, what a
    #: downgrade observed is remembered by.
    endpoint: str = ""
    #: Whether a schema answered with prose is the endpoint dropping it silently (an endpoint
    #: that declares its profile), rather than the model's mistake (a constrained first party).
    watch_drops: bool = False
    stream: bool = False
    rails: tuple[Rail, ...] = ()
    #: Whether anyone listens (handlers or debug logging); without listeners no events are built.
    observed: bool = False
    #: The plans of the models that take the call over, in order, when the one before them fails
    #: in a way retries did not mend (see ``_Run.answer``); the same but for the model.
    fallbacks: tuple[Plan, ...] = ()
    #: The schema dialect of the model's provider (``Provider.dialect``): the output and tool
    #: schemas go on the wire through it, made once per plan. None: they go as they are.
    dialect: Dialect | None = None
    #: The caller runs its own tools and reads the model's reply as it comes (the ``/v1``
    #: proxy): the model's tool calls are handed back (a ``HandedBack`` value) instead of run,
    #: the tool results the caller sends pass the tool rails, a reply cut off, refused or
    #: filtered is handed back instead of raised, and a streamed reply that reached the caller
    #: is not sent again.
    hand_back: bool = False
    #: Forced tool use (``Request.tool_choice``): ``"required"`` or a tool's name; None: the
    #: model chooses.
    tool_choice: str | None = None
    #: False: at most one tool call per reply; the provider is told where it takes the setting,
    #: and a handed-back reply keeps only its first call.
    parallel_tool_calls: bool = True

    @cached_property
    def request_parts(self) -> RequestParts:
        """The output mode and the parts of every request that depend only on this plan: the
        output spec and tools with their schemas in the provider's dialect, the system prompt
        and the settings."""
        return _request_parts(self)

    def rails_of(self, kind: RailKind) -> tuple[Rail, ...]:
        """The rails of ``kind``, in order; none when ``skip_rails`` names the kind."""
        if not self.rails or kind in self.config.skip_rails:
            return ()
        return tuple([rail for rail in self.rails if rail.kind == kind])


def strict_output(output: OutputType) -> bool:
    """Whether the output's schema is sent strict (a SchemaOutput may turn it off)."""
    return output.strict if isinstance(output, SchemaOutput) else True


def enforcement_of(plan: Plan, mode: OutputMode | None) -> Enforcement | None:
    """How an answer asked for in ``mode`` is enforced on ``plan``'s endpoint (None: text)."""
    if mode is None:
        return None
    return plan.profile.enforcement(mode, strict_output(plan.output))


def resolve_mode(plan: Plan) -> OutputMode | None:
    """The output mode for this call; explicit choices the model can't honour are errors, and
    so is a mode enforced below ``require_enforcement`` (an EnforcementError)."""
    if plan.output.schema is None:
        return None
    requested = plan.config.output_mode
    profile = plan.profile
    wanted = plan.config.require_enforcement
    if requested == "auto":
        mode = profile.default_output_mode()
        if wanted is not None and below(profile.enforcement(mode), wanted):
            mode = profile.mode_for(wanted) or mode
        if mode == "prompt" and wanted is None:
            _warn_prompt_mode(plan)
    else:
        if requested == "native" and not profile.native_schema:
            raise ConfigurationError(
                f"Model {plan.model!r} has no native structured output; use output_mode='tool' or 'prompt'"
            )
        if requested == "tool" and not profile.tools:
            raise ConfigurationError(
                f"Model {plan.model!r} cannot call tools; use output_mode='prompt'"
            )
        mode = requested
    level = enforcement_of(plan, mode)
    if wanted is not None and level is not None and below(level, wanted):
        raise EnforcementError(
            f"Model {plan.model!r} at {plan.endpoint or 'its endpoint'} can enforce command "
            f"{plan.command!r}'s output only as {level!r} (output_mode={mode!r}, profile "
            f"{profile.source}), below require_enforcement={wanted!r}",
            command=plan.command,
            expected=plan.output.expected,
            output_mode=mode,
            required=wanted,
            available=level,
        )
    return mode


logger = logging.getLogger("alloy")
#: Why a native reply in prose is a dropped schema, and what the re-ask in tool mode says.
_PROSE = "the schema was answered with prose or fenced text (dropped silently)"
_TOOL_MODE_REASK = "Give your answer by calling the output function with it, not as text."

#: The (command, model) pairs already warned that prompt mode was chosen for them.
_PROMPT_MODE_WARNED: set[tuple[str, str]] = set()


def _warn_prompt_mode(plan: Plan) -> None:
    """Say once per command and model that the answer will be read out of free text."""
    key = (plan.command, plan.model)
    if key in _PROMPT_MODE_WARNED:
        return
    _PROMPT_MODE_WARNED.add(key)
    warnings.warn(
        f"Model {plan.model!r} has neither native structured output nor tool calling, so "
        f"command {plan.command!r} asks for its {plan.output.expected} in the prompt and reads "
        "it out of the reply (prompt mode). Pass output_mode='prompt' to choose this and "
        "silence the warning.",
        PromptModeWarning,
        stacklevel=2,
    )


class RequestParts(NamedTuple):
    """What every request of a plan carries besides the conversation."""

    mode: OutputMode | None
    output_spec: OutputSpec | None
    system: str | None
    settings: ModelSettings
    tools: tuple[ToolDefinition, ...]


def _request_parts(plan: Plan) -> RequestParts:
    mode = resolve_mode(plan)
    output = plan.output
    dialect, model_id = plan.dialect, plan.model.partition(":")[2]
    spec = None
    if output.schema is not None and mode is not None:
        wire = None
        if dialect is not None and mode != "prompt":
            wire = dialect(output.schema, model_id)
        spec = OutputSpec(
            output.name,
            output.schema,
            mode,
            strict=output.strict if isinstance(output, SchemaOutput) else True,
            instructions=output.instructions,
            dialect_schema=wire,
        )
    tools = plan.tools
    if dialect is not None:
        tools = tuple(
            [replace(t, dialect_parameters=dialect(t.parameters, model_id)) for t in plan.tools]
        )
    config = plan.config
    return RequestParts(
        mode,
        spec,
        _system(plan, mode, spec),
        ModelSettings(
            config.temperature,
            config.max_tokens,
            config.timeout,
            dict(config.extra_json),
            reasoning_effort=config.reasoning_effort,
            prompt_cache=config.prompt_cache,
            prompt_cache_key=config.prompt_cache_key,
            cached_content=config.cached_content,
        ),
        tools,
    )


def _system(
    plan: Plan, mode: OutputMode | None, spec: OutputSpec | None, own: str | None = None
) -> str | None:
    """The system prompt: the conversation's ``own`` (a System message), else the configured
    one; then prompt-mode and output instructions."""
    extra = []
    if mode == "prompt" and spec is not None:
        extra.append(spec.prompt_instructions())
    if plan.output.instructions:
        extra.append(plan.output.instructions)
    parts = [p for p in (plan.config.system if own is None else own, *extra) if p]
    if not parts:
        return None
    system = "\n\n".join(parts)
    index = lone_surrogate_at(system)
    if index is not None:
        raise ConfigurationError(
            f"The system prompt (option 'system', then the output's instructions) has a lone "
            f"surrogate ({system[index]!r}) at index {index}, which cannot be sent as UTF-8: "
            f"{SURROGATE_ADVICE}"
        )
    return system


Clock = Callable[[], float]


class Prelude(NamedTuple):
    """The turns sent before a call's prompt, and where they came from."""

    #: Worked examples, then the history the call was given, then the prompt function's own
    #: earlier turns (when it returned a conversation).
    turns: tuple[Message, ...] = ()
    #: How many of ``turns`` are worked examples: sent, but not part of the conversation.
    examples: int = 0
    #: Where the call's own turns begin in ``turns`` (after the examples and given history).
    own: int = 0
    #: The conversation's system prompt (a System message); None: the configured one.
    system: str | None = None


NO_PRELUDE = Prelude()


def run(
    plan: Plan,
    prompt: tuple[Part, ...],
    *,
    clock: Clock = time.perf_counter,
    call_id: str = "",
    prelude: Prelude = NO_PRELUDE,
) -> Generator[Effect, Any, Result[Any]]:
    """Drive one command call to a value or a CommandError.

    ``prompt`` is the new user turn; ``prelude`` the turns before it. ``clock`` gives the time
    in seconds (monotonic); the call's deadline and the durations its events report are
    measured on it. ``call_id`` ties the call's events together (see ``events.new_call_id``).
    With the same inputs, the engine yields the same effects.
    """
    return _Run(plan, prompt, clock, call_id, prelude).loop()


def call_budget(config: Config) -> float | None:
    """Seconds the whole call may take: ``deadline``, or else what its attempts and alloy's own
    waits between them may take (``timeout`` for each of ``retries + 1`` attempts, plus the
    longest backoff before each retry); None without either.

    So a retry after a timed-out attempt still fits, while a provider's hint to come back much
    later (a 300 s ``retry-after`` on a call with ``timeout=0.5``) does not: it fails at once.
    """
    if config.deadline is not None:
        return config.deadline
    if config.timeout is not None:
        retries = config.retries
        return config.timeout * (retries + 1) + backoff_ceilings(retries)
    return None


#: Exponential backoff: the first wait is at most BACKOFF_BASE seconds, each next one at most
#: twice as long, up to BACKOFF_CAP; a provider's retry-after hint is waited up to a minute.
BACKOFF_BASE, BACKOFF_CAP, LONGEST_HINT = 0.5, 8.0, 60.0


def backoff_ceiling(retried: int) -> float:
    """The longest backoff wait before the retry that follows ``retried`` earlier ones."""
    return float(min(BACKOFF_CAP, BACKOFF_BASE * 2 ** min(retried, 32)))


def backoff_ceilings(retries: int) -> float:
    """The sum of the longest backoff waits before each of ``retries`` retries (in closed form:
    ``retries`` may be large)."""
    doubling = 0
    while doubling < retries and BACKOFF_BASE * 2**doubling < BACKOFF_CAP:
        doubling += 1
    return float(BACKOFF_BASE * (2**doubling - 1) + BACKOFF_CAP * (retries - doubling))


def _budget_source(config: Config) -> str:
    if config.deadline is not None:
        return "option deadline"
    return (
        f"timeout {config.timeout:g} s for each of {config.retries + 1} attempts and the waits "
        "between them; set deadline= for another total"
    )


_NO_USAGE = Usage()
#: The result of an earlier turn's tool call that got none (see ``_Run.answer_open_calls``).
_RECORDED = "Recorded."


class _Run:
    """One call in progress: the plan, the conversation so far and the counters."""

    __slots__ = (
        "attempts",
        "call_id",
        "clock",
        "config",
        "deadline_at",
        "fallback",
        "messages",
        "mode",
        "observed",
        "output_spec",
        "own",
        "plan",
        "prelude",
        "prompt",
        "reports",
        "shown",
        "spent",
        "stepped",
        "system",
        "turn_usage",
        "usage",
    )

    def __init__(
        self,
        plan: Plan,
        prompt: tuple[Part, ...],
        clock: Clock = time.perf_counter,
        call_id: str = "",
        prelude: Prelude = NO_PRELUDE,
    ) -> None:
        self.plan = plan
        self.prompt = prompt
        self.prelude = prelude
        self.own = prelude.own
        self.clock = clock
        #: When the call must be over, on ``clock`` (set when the loop starts); None: no limit.
        self.deadline_at: float | None = None
        self.config = plan.config
        self.adopt(plan)
        #: Which of the call's models answers now (see ``CallModel.fallback``).
        self.fallback = 0
        #: Whether a streamed call's text has reached the caller (see ``Failed.after_text``).
        self.shown = False
        #: Each earlier model of the call, with where its turns end in ``turn_usage``.
        self.spent: list[tuple[str, int]] = []
        # Nobody listening is the common case: the hot path then builds no events at all.
        self.observed = plan.observed
        self.call_id = call_id
        self.messages: list[Message] = []
        self.turn_usage: list[Usage] = []
        self.usage = _NO_USAGE
        self.attempts = 0
        self.reports: list[Any] = []
        #: Whether the call already stepped its output mode down (it does so at most once).
        self.stepped = False

    def adopt(self, plan: Plan) -> None:
        """Answer with ``plan``'s model: its output mode, output spec and system prompt."""
        self.plan = plan
        self.mode, self.output_spec, self.system = plan.request_parts[:3]
        if self.prelude.system is not None:
            self.system = _system(plan, self.mode, self.output_spec, self.prelude.system)

    # -- request building --
    def request(self, *, tools: bool) -> Request:
        parts = self.plan.request_parts
        return Request(
            self.plan.model,
            tuple(self.messages),
            self.system,
            parts.tools if tools else (),
            parts.output_spec,
            parts.settings,
            self.plan.stream,
            self.plan.tool_choice if tools else None,
            self.plan.parallel_tool_calls,
        )

    # -- errors with context --
    def transcript(self) -> Transcript:
        prelude = self.prelude
        return Transcript(
            tuple(self.messages),
            self.usage,
            self.attempts,
            tuple(self.turn_usage),
            prelude.examples,
            self.own,
            prelude.system,
        )

    def attach(self, error: CommandError, output: str | None = None) -> CommandError:
        """Give an error raised below the engine the call's context."""
        error.command = error.command or self.plan.command
        error.expected = error.expected or self.plan.output.expected
        error.output = error.output if error.output is not None else output
        error.output_mode = error.output_mode or self.mode
        error.transcript = self.transcript()
        return error

    def error(
        self, cls: type[CommandError], message: str, output: str | None = None, **extra: Any
    ) -> CommandError:
        return cls(
            message,
            command=self.plan.command,
            expected=self.plan.output.expected,
            output=output,
            transcript=self.transcript(),
            output_mode=self.mode,
            **extra,
        )

    # -- events and rails --
    def rails(self, kind: RailKind) -> tuple[Rail, ...]:
        return self.plan.rails_of(kind)

    def emit(self, make: Callable[[], Event]) -> Generator[Effect, Any, None]:
        """Yield an Emit when anyone listens; the event is built only then."""
        if self.observed:
            yield Emit(make())

    def check(self, rails: tuple[Rail, ...], subject: S) -> Generator[Effect, Any, S]:
        """Run ``rails`` over ``subject``: the subject they let through, or RailBlocked."""
        if not rails:
            return subject
        result = yield RunRails(rails, subject)
        if isinstance(result, Blocked):
            raise self.error(
                RailBlocked,
                f"Blocked by rail {result.rail!r}: {result.reason}",
                rail=result.rail,
                reason=result.reason,
            ) from result.error
        checked: S = result
        return checked

    # -- the time budget --
    def time_left(self) -> float | None:
        """Seconds until the call's deadline (negative once past it), or None without one."""
        return None if self.deadline_at is None else self.deadline_at - self.clock()

    def timed(self, request: Request, left: float) -> Request:
        """``request`` with a timeout that ends this attempt by the deadline: the smaller of the
        configured per-request timeout and the time left.

        The time left counts in whole milliseconds, rounded up, so the microseconds between the
        start of a call and its first request leave the configured timeout as it is (and the
        plan's own settings object, which adapters key caches by).
        """
        settings = request.settings
        left = math.ceil(left * 1000) / 1000
        if settings.timeout is not None and settings.timeout <= left:
            return request
        return replace(request, settings=replace(settings, timeout=left))

    def deadline_reached(self) -> CommandError:
        budget = call_budget(self.config)
        return self.error(
            ProviderTimeoutError,
            f"The call's deadline of {budget:g} s was reached before model request "
            f"{self.attempts + 1} ({_budget_source(self.config)})",
        )

    def spend_check(self) -> None:
        """Stop before another model turn once the call's token budget is spent."""
        budget = self.config.token_budget
        if budget is not None and self.usage.total_tokens >= budget:
            raise self.error(
                BudgetExceeded,
                f"Token budget of {budget} spent ({self.usage.total_tokens} tokens used) "
                "before a valid answer arrived",
                spent=self.usage.total_tokens,
                limit=budget,
                unit="tokens",
            )

    # -- the loop --
    def loop(self) -> Generator[Effect, Any, Result[Any]]:
        budget = call_budget(self.config)
        started = self.clock() if self.observed or budget is not None else 0.0
        if budget is not None:
            self.deadline_at = started + budget
        name, cid = self.plan.command, self.call_id
        try:
            if self.observed:
                yield from self.emit(
                    partial(CommandStarted, name, cid, self.plan.model, self.plan.output.expected)
                )
            prompt = self.prompt
            if self.observed:
                yield Emit(PromptRendered(name, cid, prompt))
            input_rails = self.rails("input")
            if input_rails:
                prompt = (yield from self.check(input_rails, PromptSubject(prompt))).parts
            if self.prelude.turns:
                self.messages.extend(self.prelude.turns)
                self.messages.append(UserTurn(prompt))
                self.answer_open_calls()
            else:
                self.messages.append(UserTurn(prompt))
            if self.plan.hand_back:
                yield from self.check_given_results()
            outcome = yield from self.answer()
        except CommandError as error:
            failed_after = self.clock() - started
            yield from self.emit(partial(CommandFailed, name, cid, error, failed_after))
            raise
        except Abandoned as stop:
            ended_after = self.clock() - started
            event: Callable[[], Event]
            if stop.error is None:
                event = partial(CommandCancelled, name, cid, stop.reason, ended_after)
            else:
                event = partial(CommandFailed, name, cid, stop.error, ended_after)
            yield from self.emit(event)
            raise
        if self.observed:
            finished_after = self.clock() - started
            yield from self.emit(
                partial(
                    CommandFinished, name, cid, outcome.value, outcome.transcript, finished_after
                )
            )
        return outcome

    def answer_open_calls(self) -> None:
        """Give every tool call in the earlier turns a result, as each provider requires: a
        call that got none (the final answer of an earlier call in tool output mode, or a
        history cut after the model's call) is answered as recorded, in the turn after it."""
        messages = self.messages
        index = 0
        while index < len(messages):
            turn = messages[index]
            calls = (
                [p for p in turn.parts if isinstance(p, ToolCall)]
                if isinstance(turn, ModelTurn)
                else ()
            )
            if calls:
                after = messages[index + 1] if index + 1 < len(messages) else None
                answered = (
                    {p.call_id for p in after.parts if isinstance(p, ToolResult)}
                    if isinstance(after, UserTurn)
                    else set()
                )
                missing = tuple(
                    ToolResult(call.id, call.name, _RECORDED)
                    for call in calls
                    if call.id not in answered
                )
                if missing:
                    if isinstance(after, UserTurn):
                        messages[index + 1] = UserTurn((*missing, *after.parts))
                    else:
                        messages.insert(index + 1, UserTurn(missing))
                        if index + 1 <= self.own:
                            self.own += 1
            index += 1

    def check_given_results(self) -> Generator[Effect, Any, None]:
        """Run the tool rails over each tool result the caller sent (a call that hands back: the
        caller ran the tools), with the call it answers, as over a result of a tool run here."""
        tool_rails = self.rails("tool")
        if not tool_rails:
            return
        made: dict[str, ToolCall] = {}
        for index, turn in enumerate(self.messages):
            if isinstance(turn, ModelTurn):
                made.update((p.id, p) for p in turn.parts if isinstance(p, ToolCall))
                continue
            parts = list(turn.parts)
            for position, part in enumerate(parts):
                if isinstance(part, ToolResult):
                    call = made.get(part.call_id) or ToolCall(part.call_id, part.name, {})
                    after = ToolResultSubject(call, part)
                    parts[position] = (yield from self.check(tool_rails, after)).result
            if parts != list(turn.parts):
                self.messages[index] = UserTurn(tuple(parts))

    def answer(self) -> Generator[Effect, Any, Result[Any]]:
        """The answer of the call's model, or else of its fallbacks, each in turn.

        A fallback takes the call over from its opening (examples, history and the prompt, input
        rails already run) as a new attempt with its own plan: the output mode, schema dialect
        and system prompt derived for its model. The switch lives here, not in the command or
        the drivers, so a call keeps one id, one started and one finished event, one deadline
        and one count of attempts and tokens, and the drivers only send each ``CallModel`` to
        the model it names. When the last model fails too, each model's error is the
        ``__cause__`` of the next one's (when that has no cause of its own).
        """
        fallbacks = self.plan.fallbacks
        opening, own = tuple(self.messages), self.own
        previous: CommandError | None = None
        while True:
            try:
                return (yield from self.turns())
            except CommandError as error:
                if previous is not None and error.__cause__ is None:
                    error.__cause__ = previous
                if self.fallback == len(fallbacks) or not self.falls_over(error):
                    raise
                previous = error
            plan = fallbacks[self.fallback]
            name, cid, failed = self.plan.command, self.call_id, self.plan.model
            yield from self.emit(partial(FellBack, name, cid, failed, plan.model, previous))
            self.spent.append((failed, len(self.turn_usage)))
            self.adopt(plan)
            self.fallback += 1
            self.messages, self.own = list(opening), own
            budget = call_budget(plan.config)
            if self.config.deadline is None and budget is not None:
                self.deadline_at = self.clock() + budget  # each model's attempts get theirs

    def falls_over(self, error: CommandError) -> bool:
        """Whether the next model may take the call over after ``error``: a provider failure
        retries did not mend (5xx, 429, a timeout, a dropped connection, an unreadable reply),
        before any streamed text reached the caller, with time left when ``deadline`` bounds
        the whole call. Never a configuration, refusal, validation, rail or budget error."""
        if not isinstance(error, ProviderError) or not error.transient or self.shown:
            return False
        left = self.time_left() if self.config.deadline is not None else None
        return left is None or left > 0

    def turns(self) -> Generator[Effect, Any, Result[Any]]:
        name, cid = self.plan.command, self.call_id
        tool_turns = 0
        reasks = 0
        finalizing = False
        refreshed = False  # a cached reply that failed validation was asked again, fresh
        while True:
            try:
                response = yield from self.call_model(self.request(tools=not finalizing))
            except BadRequestError as error:
                if not (yield from self.refused(error)):
                    raise
                continue
            self.messages.append(ModelTurn(response.parts))
            if response.finish_reason in _ENDED_EARLY:
                if self.plan.hand_back:
                    return (yield from self.hand_back_early(response))
                self.check_finish(response)

            calls, final = self.split(response)
            if calls and final is None:
                if self.plan.hand_back:
                    return (yield from self.hand_back_calls(response, calls))
                if finalizing:
                    raise self.error(
                        EmptyOutputError,
                        "Model requested tools during the finalize turn, which offers none",
                    )
                if tool_turns >= self.config.max_tool_turns:
                    raise self.error(
                        ToolLoopLimitExceeded,
                        f"Model still requested tools after {tool_turns} tool turns "
                        f"(max_tool_turns={self.config.max_tool_turns})",
                        output=response.text or None,
                        max_turns=self.config.max_tool_turns,
                        turns_taken=tool_turns,
                    )
                tool_turns += 1
                if response.cache in _TO_STORE:
                    yield Accepted(response, self.fallback)
                yield from self.run_tools(calls)
                self.spend_check()
                continue

            text = final if final is not None else response.text
            if isinstance(self.plan.output, NoOutput):
                if response.cache in _TO_STORE:
                    yield Accepted(response, self.fallback)
                return self.outcome(None, text)
            empty = not text or text.isspace()  # (strip() would copy a whole, maybe huge, reply)
            if empty and not (self.plan.hand_back and self.plan.output.schema is None):
                if tool_turns and self.config.auto_finalize_missing_output and not finalizing:
                    if response.cache in _TO_STORE:
                        yield Accepted(response, self.fallback)
                    finalizing = True
                    yield from self.emit(partial(FinalizeTurn, name, cid))
                    self.spend_check()
                    schema = self.plan.output.schema is not None
                    self.messages.append(UserTurn.finalize(schema=schema))
                    continue
                raise self.error(
                    EmptyOutputError,
                    f"Model produced no final output (expected {self.plan.output.expected})",
                    output=text,
                )
            drop = self.mode == "native" and self.dropped(text)
            if drop and (yield from self.step_down(self.plan.profile.best_effort(), _PROSE)):
                self.messages.append(UserTurn((RetryPrompt(_TOOL_MODE_REASK),)))
                continue
            try:
                prompted = self.mode == "prompt"
                candidate = extract_json(text, self.plan.output.schema) if prompted else text
                value = self.plan.output.parse(candidate)
            except InvalidOutput as invalid:
                self.reports.append(invalid.report)
                yield from self.emit(
                    partial(OutputRejected, name, cid, invalid.summary, invalid.feedback, text)
                )
                if response.cache == "hit" and not refreshed:
                    refreshed = True
                    if (yield Stale(response, self.fallback)):
                        self.spend_check()
                        self.messages.pop()  # the stale reply: the same request, to the provider
                        continue
                if reasks < self.config.max_reasks:
                    self.spend_check()
                    reasks += 1
                    count = reasks
                    yield from self.emit(partial(Reask, name, cid, invalid.feedback, count))
                    self.messages.append(UserTurn((RetryPrompt(invalid.feedback),)))
                    continue
                source = " (this reply came from the response cache)" * (response.cache == "hit")
                raise self.error(
                    ParseError, f"{invalid.summary}{source}: {snippet(text)}", output=text
                ) from invalid
            except CommandError as error:
                raise self.attach(error, output=text) from error.__cause__
            if isinstance(value, Parsed):
                self.reports.append(value.report)
                value = value.value
            if self.observed:
                yield Emit(OutputParsed(name, cid, value, text))
                yield Emit(OutputReady(name, cid, value))
            output_rails = self.rails("output")
            if output_rails:
                value = (yield from self.check(output_rails, OutputSubject(value))).value
            if response.cache in _TO_STORE:
                yield Accepted(response, self.fallback)
            return self.outcome(value, text)

    # -- stepping down: nothing degrades silently --
    def refused(self, error: BadRequestError) -> Generator[Effect, Any, bool]:
        """Whether a 400 refusing how the output was asked for (naming ``response_format``,
        ``json_schema``, ``tool_choice`` or ``strict``) stepped the call down a mode, to be
        sent again; False leaves ``error`` to be raised. A schema the endpoint found fault
        with (a SchemaRejectedError that does not say the feature is unsupported) is the
        schema's problem, not a missing feature."""
        if (
            (isinstance(error, SchemaRejectedError) and not says_unsupported(error.message))
            or error.status_code not in (None, 400)
            or self.mode not in ("native", "tool")
            or not names_output_feature(error.message)
        ):
            return False
        return (
            yield from self.step_down(self.plan.profile.without(self.mode), error.message, error)
        )

    def dropped(self, text: str) -> bool:
        """Whether a reply to a native schema is prose or fenced: the endpoint dropped the
        schema silently (only watched on endpoints that declare their profile)."""
        if not self.plan.watch_drops or self.plan.output.schema is None:
            return False
        head = text.lstrip()[:1]
        return head not in ("{", "[")

    def step_down(
        self, profile: Profile, reason: str, cause: BaseException | None = None
    ) -> Generator[Effect, Any, bool]:
        """Go on with ``profile``, the endpoint's as observed now: remember it for the process
        (one WARNING per endpoint and model), announce a ProfileDowngraded and take its output
        mode. False when the call cannot step (it did already, or chose its mode itself, or
        the mode stays); an EnforcementError when the new mode is below
        ``require_enforcement``."""
        plan = self.plan
        if self.stepped or self.config.output_mode != "auto":
            return False
        after = replace(plan, profile=profile)
        before_level = enforcement_of(plan, self.mode)
        try:
            mode = resolve_mode(after)
        except EnforcementError as weaker:
            raise self.error(
                EnforcementError,
                f"{plan.model!r} at {plan.endpoint or 'its endpoint'} refused {before_level!r} "
                f"output ({snippet(reason)}); stepping down to {weaker.available!r} is below "
                f"require_enforcement={weaker.required!r}",
                required=weaker.required,
                available=weaker.available,
            ) from cause
        level = enforcement_of(after, mode)
        if mode == self.mode:
            return False
        if observe(plan.endpoint, plan.model, profile):
            logger.warning(
                "%s at %s: %s; alloy uses %s output for it from now on (this process). Set "
                "require_enforcement= to raise instead, or profile= to say what it supports.",
                plan.model,
                plan.endpoint or "its endpoint",
                snippet(reason),
                level,
            )
        self.stepped = True
        name, cid = plan.command, self.call_id
        yield from self.emit(
            partial(
                ProfileDowngraded,
                name,
                cid,
                plan.model,
                plan.endpoint,
                str(before_level),
                str(level),
                reason,
            )
        )
        self.adopt(after)
        return True

    def hand_back_calls(
        self, response: Response, calls: tuple[ToolCall, ...]
    ) -> Generator[Effect, Any, Result[Any]]:
        """The model's tool calls, for the caller to run: each after the tool rails (which may
        rewrite its arguments), the text beside them after the output rails. Without
        parallel tool calls only the first is handed back (and kept in the conversation)."""
        if not self.plan.parallel_tool_calls and len(calls) > 1:
            dropped = {call.id for call in calls[1:]}
            calls = calls[:1]
            response = replace(
                response,
                parts=tuple(
                    [p for p in response.parts if not (isinstance(p, ToolCall) and p.id in dropped)]
                ),
            )
        tool_rails = self.rails("tool")
        checked = []
        for call in calls:
            checked.append((yield from self.check(tool_rails, ToolCallSubject(call))).call)
        text = yield from self.railed_text(response.text or None)
        kept = {call.id: call for call in checked}
        parts = [kept.get(p.id, p) if isinstance(p, ToolCall) else p for p in response.parts]
        self.messages[-1] = ModelTurn(tuple(parts))
        if response.cache in _TO_STORE:
            yield Accepted(response, self.fallback)
        return self.outcome(HandedBack("tool_calls", text, tuple(checked)), text or "")

    def hand_back_early(self, response: Response) -> Generator[Effect, Any, Result[Any]]:
        """A reply cut off, refused or filtered, as it came: its text and refusal after the
        output rails (as text: a cut-off JSON answer is no value to parse)."""
        text = yield from self.railed_text(response.text or None)
        refusal = yield from self.railed_text(response.refusal)
        value = HandedBack(response.finish_reason, text, (), refusal)
        return self.outcome(value, text or "")

    def railed_text(self, text: str | None) -> Generator[Effect, Any, str | None]:
        """``text`` after the output rails (a rail's non-text value as JSON); None stays None."""
        output_rails = self.rails("output")
        if text is None or not output_rails:
            return text
        value = (yield from self.check(output_rails, OutputSubject(text))).value
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def outcome(self, value: Any, text: str) -> Result[Any]:
        reports = tuple(self.reports) if self.reports else ()
        return Result(
            value,
            text,
            self.transcript(),
            reports,
            self.plan.model,
            output_mode=self.mode,
            usage_by_model=self.usage_by_model(),
            enforcement=enforcement_of(self.plan, self.mode),
        )

    def usage_by_model(self) -> tuple[tuple[str, Usage], ...]:
        """Each model's share of the call's usage, in the order they answered: more than one
        when a fallback took over. The engine prices nothing; the drivers price these."""
        if not self.spent:
            return ((self.plan.model, self.usage),)
        shares, start = [], 0
        for model, end in (*self.spent, (self.plan.model, len(self.turn_usage))):
            shares.append((model, sum(self.turn_usage[start:end], _NO_USAGE)))
            start = end
        return tuple(shares)

    def run_tools(self, calls: tuple[ToolCall, ...]) -> Generator[Effect, Any, None]:
        """Tool rails before, the tools themselves, tool rails after; results join the transcript."""
        name, cid = self.plan.command, self.call_id
        tool_rails = self.rails("tool")
        checked = []
        for call in calls:
            yield from self.emit(partial(ToolCallStarted, name, cid, call))
            checked.append((yield from self.check(tool_rails, ToolCallSubject(call))).call)
        outcomes: Sequence[ToolOutcome] = yield RunTools(
            tuple(checked), self.config.tool_timeout, self.time_left()
        )
        raise_caller_mistakes(outcomes)
        results = []
        for call, outcome in zip(checked, outcomes, strict=True):
            yield from self.emit(partial(ToolCallFinished, name, cid, call, outcome.result))
            after = ToolResultSubject(call, outcome.result)
            results.append((yield from self.check(tool_rails, after)).result)
        self.messages.append(UserTurn(tuple(results)))
        self.raise_for_tool_errors(outcomes)

    def call_model(self, turn: Request) -> Generator[Effect, Any, Response]:
        """One model turn: attempts until a reply, retrying transient failures within the
        deadline; a wait that would not fit fails the call at once with the provider's error."""
        name, cid = self.plan.command, self.call_id
        retried = 0
        while True:
            request = turn
            if self.deadline_at is not None:
                left = self.deadline_at - self.clock()
                if left <= 0:
                    raise self.deadline_reached()
                request = self.timed(turn, left)
            self.attempts += 1
            attempt = self.attempts
            if self.observed:
                yield from self.emit(partial(ModelRequest, name, cid, request, attempt))
                sent = self.clock()
            result = yield CallModel(request, self.fallback)
            if isinstance(result, Failed):
                error = result.error
                if isinstance(error, BudgetExceeded):  # a cost cap refused it: it was not sent
                    self.attempts -= 1
                    raise self.attach(error)
                self.shown = self.shown or result.after_text
                sent_again = not (self.plan.hand_back and result.after_text)
                if error.transient and retried < self.config.retries and sent_again:
                    hint = error.retry_after
                    if hint is not None and hint >= 0:
                        wait = Sleep(retried + 1, hint, float(min(hint, LONGEST_HINT)))
                    else:
                        wait = Sleep(retried + 1, None, backoff_ceiling(retried))
                    remaining = self.time_left()
                    if remaining is not None and wait.longest >= remaining:
                        raise self.attach(error)  # its retry_after says when to come back
                    yield from self.emit(partial(ProviderRetry, name, cid, error, wait.longest))
                    yield wait
                    retried += 1
                    continue
                raise self.attach(error)
            response: Response = result
            usage = response.usage
            self.usage = self.usage + usage if self.turn_usage else usage
            self.turn_usage.append(usage)
            if self.observed:
                elapsed = self.clock() - sent
                yield from self.emit(partial(ModelResponse, name, cid, response, attempt, elapsed))
            return response

    def check_finish(self, response: Response) -> None:
        """Raise for a reply that ended early (cut off, refused or filtered); never re-asked."""
        reason = response.finish_reason
        if reason == "length":
            raise self.error(
                TruncatedOutputError,
                "Model output was cut off by the token limit (max_tokens); not re-asked. "
                f"Raise max_tokens. Partial output: {snippet(response.text)}",
                output=response.text,
            )
        if reason == "refusal":
            why = response.refusal or response.text
            raise self.error(RefusalError, f"Model refused: {snippet(why)}", output=why)
        if reason == "content_filter":
            raise self.error(
                ContentFilteredError,
                "Output stopped by the provider's content filter",
                output=response.text,
            )

    def split(self, response: Response) -> tuple[tuple[ToolCall, ...], str | None]:
        """Tool calls to run, and the final answer when it is plain: a reply of one text part, or
        the forced output tool's arguments (None: read the reply's text)."""
        lone = response.lone_text
        if lone is not None:
            return (), lone
        calls = response.tool_calls
        if self.mode == "tool" and self.output_spec is not None:
            for call in calls:
                if call.name == self.output_spec.name:
                    return (), call.raw_args if call.raw_args is not None else json.dumps(
                        dict(call.args)
                    )
        return calls, None

    def raise_for_tool_errors(self, outcomes: Sequence[ToolOutcome]) -> None:
        if self.config.tool_errors != "raise":
            return
        for outcome in outcomes:
            if outcome.error is not None:
                raise self.error(
                    ToolError,
                    f"Tool {outcome.result.name!r} failed: {outcome.result.content}",
                    tool=outcome.result.name,
                ) from outcome.error


def raise_caller_mistakes(outcomes: Sequence[ToolOutcome]) -> None:
    """A ConfigurationError from a tool is the caller's mistake, not the model's: raise it as it is.

    Telling the model would only have it call the tool again, to fail the same way.
    """
    for outcome in outcomes:
        if isinstance(outcome.error, ConfigurationError):
            raise outcome.error
