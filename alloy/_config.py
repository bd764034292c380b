"""Settings resolution: per call > decorator > ``use_config`` > ``configure()`` > env > defaults.

Above them all, for tests and offline runs, a forced model: ``override_model()``, then
``ALLOY_FORCE_MODEL``.

Every option has one name everywhere (decorator keyword, ``configure()`` keyword, and an
``ALLOY_*`` variable). Values are validated on the way in, so a bad value is a
ConfigurationError that names where it came from, never a failure deep inside a call.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ._legacy import LEGACY_ENV_VARS, deprecated, translate_options, warn_legacy_env
from ._model import Model
from ._profile import Profile
from ._rail_types import Rail
from ._types import MAX_SECONDS, Enforcement
from .errors import ConfigurationError
from .providers import providers, split_model

if TYPE_CHECKING:
    from pydantic import SecretStr

OutputModeOption = Literal["auto", "native", "tool", "prompt"]
#: Reasoning effort levels, the union of what the providers name (each maps or refuses its own).
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
#: How calls use the response cache (see ``alloy.cache``).
CacheModeOption = Literal["readwrite", "replay", "record"]


@dataclass(frozen=True)
class Config:
    """The resolved settings for one call."""

    model: Any = None
    temperature: float | None = None
    max_tokens: int | None = None
    system: str | None = None
    retries: int = 2
    max_tool_turns: int = 10
    parallel_tools_max: int = 8
    auto_finalize_missing_output: bool = True
    timeout: float | None = None
    #: Seconds the whole call may take (attempts, retry waits, tool rounds, re-asks).
    deadline: float | None = None
    #: Seconds one tool call may run, for tools without a timeout of their own.
    tool_timeout: float | None = None
    extra_json: Mapping[str, Any] = field(default_factory=dict)
    max_reasks: int = 1
    output_mode: OutputModeOption = "auto"
    tool_errors: Literal["report", "raise"] = "report"
    #: Kept as a pydantic ``SecretStr`` (a plain str given is wrapped), so reprs, ``vars()``,
    #: debuggers and error reporters that dump locals show ``**********``, never the key.
    api_key: SecretStr | None = None
    base_url: str | None = None
    skip_rails: tuple[Literal["input", "output", "tool"], ...] = ()
    token_budget: int | None = None
    #: USD a call may spend: a request that would pass it is not sent (see ``_cost_cap``).
    cost_budget: float | None = None
    log_content: bool = False
    #: How much the model reasons before answering: an effort level, or a thinking budget in
    #: tokens (0 turns thinking off); each adapter maps it to its provider's own field.
    reasoning_effort: ReasoningEffort | int | None = None
    #: Ask the provider to cache the prompt's stable prefix where it must be asked (Anthropic
    #: cache breakpoints). Not ``cache``: that name is for alloy's own response cache.
    prompt_cache: bool = False
    #: OpenAI's ``prompt_cache_key``: requests sharing it are routed to the same prompt cache.
    prompt_cache_key: str | None = None
    #: Gemini's ``cached_content``: the name of a cache made with the SDK's ``caches.create``.
    cached_content: str | None = None
    #: Models that take the call, in order, when the model before them fails in a way retries
    #: did not mend (model strings or Model objects; see ``_engine._Run.answer``).
    fallback: tuple[Any, ...] = ()
    #: alloy's response cache (see ``alloy.cache``): a file path or ``sqlite:///path``,
    #: ``redis://host:port/db``, ``memory``, or ``off``/None for none.
    cache: str | None = None
    #: ``readwrite``; ``replay`` (answer only from the cache, never call the provider);
    #: ``record`` (always call the provider and store the reply).
    cache_mode: CacheModeOption = "readwrite"
    #: Seconds a cached reply lives; None: until removed.
    cache_ttl: float | None = None
    #: The most replies the store keeps (the oldest go first); None: no bound.
    cache_max_entries: int | None = None
    #: Cache requests that are not repeatable too (no temperature 0, no seed).
    cache_all: bool = False
    #: What the endpoint and model support, over what alloy would resolve: a
    #: :class:`~alloy.providers.Profile`, or a mapping of the fields to change.
    profile: Profile | Mapping[str, Any] | None = None
    #: The weakest enforcement a typed answer may have (``native-strict``, ``native``,
    #: ``tool-strict``, ``tool``, ``prompt``): a call that would step below it raises
    #: EnforcementError instead.
    require_enforcement: Enforcement | None = None

    def __post_init__(self) -> None:
        if isinstance(self.api_key, str):  # Config(api_key="...") built by hand
            from pydantic import SecretStr

            object.__setattr__(self, "api_key", SecretStr(self.api_key))


OPTION_NAMES = frozenset(f.name for f in fields(Config))

#: Environment variables per option; the first is the documented name, the rest are aliases.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "model": ("ALLOY_MODEL",),
    "temperature": ("ALLOY_TEMPERATURE",),
    "max_tokens": ("ALLOY_MAX_TOKENS",),
    "system": ("ALLOY_SYSTEM", "ALLOY_DEFAULT_SYSTEM"),
    "retries": ("ALLOY_RETRY", "ALLOY_RETRIES"),
    "max_tool_turns": ("ALLOY_MAX_TOOL_TURNS",),
    "parallel_tools_max": ("ALLOY_PARALLEL_TOOLS_MAX",),
    "auto_finalize_missing_output": ("ALLOY_AUTO_FINALIZE_MISSING_OUTPUT",),
    "timeout": ("ALLOY_TIMEOUT",),
    "deadline": ("ALLOY_DEADLINE",),
    "tool_timeout": ("ALLOY_TOOL_TIMEOUT",),
    "extra_json": ("ALLOY_EXTRA_JSON",),
    "max_reasks": ("ALLOY_MAX_REASKS",),
    "output_mode": ("ALLOY_OUTPUT_MODE",),
    "tool_errors": ("ALLOY_TOOL_ERRORS",),
    "skip_rails": ("ALLOY_SKIP_RAILS",),
    "token_budget": ("ALLOY_TOKEN_BUDGET",),
    "cost_budget": ("ALLOY_COST_BUDGET",),
    "log_content": ("ALLOY_LOG_CONTENT",),
    "reasoning_effort": ("ALLOY_REASONING_EFFORT",),
    "prompt_cache": ("ALLOY_PROMPT_CACHE",),
    "prompt_cache_key": ("ALLOY_PROMPT_CACHE_KEY",),
    "cached_content": ("ALLOY_CACHED_CONTENT",),
    "fallback": ("ALLOY_FALLBACK_MODELS",),
    "cache": ("ALLOY_CACHE",),
    "cache_mode": ("ALLOY_CACHE_MODE",),
    "cache_ttl": ("ALLOY_CACHE_TTL",),
    "cache_max_entries": ("ALLOY_CACHE_MAX_ENTRIES",),
    "cache_all": ("ALLOY_CACHE_ALL",),
    "require_enforcement": ("ALLOY_REQUIRE_ENFORCEMENT",),
}

_EMPTY: Mapping[str, Any] = MappingProxyType({})
#: What configure() set: an immutable mapping, replaced on every change like the context layers.
_global_overrides: Mapping[str, Any] = _EMPTY
_context_overrides: ContextVar[Mapping[str, Any]] = ContextVar("alloy_config", default=_EMPTY)
# Set only by alloy.testing.override_model: tests must be able to beat even decorator options.
_forced_overrides: ContextVar[Mapping[str, Any]] = ContextVar("alloy_forced_config", default=_EMPTY)
#: The same, for every thread of the process (``override_model(..., threads=True)``): a
#: ContextVar does not reach threads started without a copy of the context.
_process_forced: Mapping[str, Any] = _EMPTY
_dotenv_loaded = False


def _validator() -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        import typing

        from pydantic import ConfigDict, SecretStr, create_model

        hints = typing.get_type_hints(Config, localns={"SecretStr": SecretStr})
        fields_ = {f.name: (hints[f.name], None) for f in fields(Config)}
        _VALIDATOR = create_model(  # type: ignore[call-overload]
            "AlloyOptions",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields_,
        )
    return _VALIDATOR


_VALIDATOR: Any = None
#: Options check_options checks itself, which the options model passes through as they are.
_CHECKED_ABOVE = frozenset({"model", "fallback"})


def flatten_rails(entries: Any) -> tuple[Rail, ...]:
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


def check_options(options: Mapping[str, Any], *, source: str) -> dict[str, Any]:
    """Validate a partial set of options; return them coerced. ``source`` names where they came from."""
    options = translate_options(options, source)
    unknown = set(options) - OPTION_NAMES
    if unknown:
        raise ConfigurationError(
            f"Unknown option(s) {sorted(unknown)} in {source}; known options: {sorted(OPTION_NAMES)}"
        )
    model = options.get("model")
    if model is not None and not _is_model(model):
        raise ConfigurationError(
            f"Invalid value for option 'model' in {source}: expected a model string such as "
            f"'openai:gpt-5-mini' or a Model object, got {type(model).__name__}"
            + _missing_members(model)
        )
    if "fallback" in options:
        options = {**options, "fallback": _fallback_models(options["fallback"], source)}
    # The usual @command(model=...) has nothing left to coerce: no options model is built for it.
    result = dict(options) if options.keys() <= _CHECKED_ABOVE else _coerced(options, source)
    _check_values(options, result, source)
    _check_ranges(result, source)
    return result


def _coerced(options: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``options`` validated and coerced by their types in :class:`Config`."""
    from pydantic import ValidationError

    try:
        validated = _validator().model_validate(dict(options))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        name = str(error["loc"][0]) if error["loc"] else "?"
        raise ConfigurationError(
            f"Invalid value for option {name!r} in {source}: {error['msg']}"
        ) from None
    return {name: getattr(validated, name) for name in options}


def _is_model(value: Any) -> bool:
    """A model string or an object with the :class:`~alloy._model.Model` protocol."""
    return isinstance(value, (str, Model))


def _missing_members(value: Any) -> str:
    """What an object meant as a model lacks of the protocol, for the error that refuses it."""
    if isinstance(value, (str, bytes, int, float, bool, type(None), list, tuple, dict)):
        return ""
    wanted = ("name", "capabilities", "request", "arequest", "stream", "astream")
    missing = [member for member in wanted if not hasattr(value, member)]
    return f" (missing {', '.join(missing)}; see alloy.testing.FunctionModel)" if missing else ""


def _fallback_models(value: Any, source: str) -> tuple[Any, ...]:
    """The ``fallback`` option as a tuple: one model, or a list of them (strings or Models)."""
    entries = (value,) if _is_model(value) else value
    if isinstance(entries, (list, tuple)) and all(_is_model(entry) for entry in entries):
        return tuple(entries)
    raise ConfigurationError(
        f"Invalid value for option 'fallback' in {source}: expected a list of model strings "
        f"such as ['anthropic:claude-sonnet-4-5'] or Model objects, got {value!r:.80}"
    )


def _check_values(given: Mapping[str, Any], coerced: Mapping[str, Any], source: str) -> None:
    """Refuse what the types let through but a call cannot use, before any call is made.

    pydantic takes ``True`` as the number 1 and ``nan``/``inf`` as floats; JSON encoders refuse
    non-finite numbers and HTTP bodies refuse text that is not UTF-8, so either would otherwise
    fail deep inside a call, wherever it sits in the value.
    """
    for name, value in coerced.items():
        why: str | None
        if isinstance(given[name], bool) and not isinstance(value, bool):
            why = f"expected a number, got {given[name]}"
        else:
            why = _unusable_part(value)
        if why:
            raise ConfigurationError(f"Invalid value for option {name!r} in {source}: {why}")


def _unusable_part(value: Any) -> str | None:
    """Why ``value``, or anything nested in its mappings, lists and tuples, cannot be sent."""
    pending = [value]
    seen: set[int] = set()
    while pending:  # a loop, not recursion: nesting may be deep, and a mapping may hold itself
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{item} is not a finite number"
        if isinstance(item, str) and not _is_utf8(item):
            return "the text is not valid UTF-8"
        secret = getattr(item, "get_secret_value", None)
        if callable(secret) and not _is_utf8(secret()):
            return "the text is not valid UTF-8"
        if isinstance(item, (Mapping, list, tuple)) and id(item) not in seen:
            seen.add(id(item))  # ids of containers inside ``value``, which keeps them alive
            pending.extend([*item.keys(), *item.values()] if isinstance(item, Mapping) else item)
    return None


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: undecodable bytes in the environment
        return False
    return True


#: The largest whole number an option takes: a signed 32-bit integer, as provider APIs expect.
_MAX_WHOLE_NUMBER = 2**31 - 1
_SECONDS_OPTIONS = ("timeout", "deadline", "tool_timeout")


#: OpenAI refuses a longer ``prompt_cache_key`` (400 ``string_above_max_length``).
_MAX_PROMPT_CACHE_KEY = 64


def _cache_name_problems(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with a ``prompt_cache_key`` or ``cached_content`` name, before it is sent."""
    problems = []
    key = options.get("prompt_cache_key")
    if key is not None and not (0 < len(key) <= _MAX_PROMPT_CACHE_KEY and key.isprintable()):
        why = f"must be 1 to {_MAX_PROMPT_CACHE_KEY} printable characters (OpenAI's limit)"
        problems.append(("prompt_cache_key", why))
    name = options.get("cached_content")
    if name is not None and not (
        name and name.isascii() and name.isprintable() and " " not in name
    ):
        why = "must be a cache name such as 'cachedContents/abc123' (printable ASCII, no spaces)"
        problems.append(("cached_content", why))
    return problems


#: The ``cache=`` values that leave the response cache off, as None does.
_CACHE_OFF = ("", "off", "none", "0", "false", "no")


def cache_is_off(location: str | None) -> bool:
    """Whether ``cache=location`` leaves the response cache off: then a call never loads it."""
    return location is None or location.strip().lower() in _CACHE_OFF


def _response_cache_problems(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with the response cache's location or lifetime, before any call."""
    problems = []
    location = options.get("cache")
    if location is not None and "://" in location:
        scheme = location.split("://", 1)[0].lower()
        if scheme not in ("sqlite", "redis", "rediss", "unix"):
            why = "must be a file path, sqlite:///path, redis://host:port/db, memory or off"
            problems.append(("cache", why))
    ttl = options.get("cache_ttl")
    if ttl is not None and not (0 < ttl <= _MAX_CACHE_TTL):
        problems.append(("cache_ttl", f"must be positive and at most {_MAX_CACHE_TTL} seconds"))
    return problems


#: The longest a cached reply may live: ten years, in seconds.
_MAX_CACHE_TTL = 10 * 365 * 24 * 3600


def _check_ranges(options: Mapping[str, Any], source: str) -> None:
    problems = []
    temperature = options.get("temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        problems.append(("temperature", "must be between 0 and 2"))
    for name in (
        "max_tokens",
        "max_tool_turns",
        "parallel_tools_max",
        "token_budget",
        "cache_max_entries",
    ):
        value = options.get(name)
        if value is not None and value < 1:
            problems.append((name, "must be at least 1"))
    for name in ("retries", "max_reasks"):
        value = options.get(name)
        if value is not None and value < 0:
            problems.append((name, "must not be negative"))
    cost_budget = options.get("cost_budget")
    if cost_budget is not None and not cost_budget > 0:
        problems.append(("cost_budget", "must be above 0 (US dollars)"))
    effort = options.get("reasoning_effort")
    if isinstance(effort, int) and effort < 0:
        problems.append(("reasoning_effort", "a thinking budget must not be negative"))
    problems.extend(_cache_name_problems(options))
    problems.extend(_response_cache_problems(options))
    for name in _SECONDS_OPTIONS:
        value = options.get(name)
        if value is not None and value <= 0:
            problems.append((name, "must be positive"))
    for name, value in options.items():
        if isinstance(value, int) and not isinstance(value, bool) and value > _MAX_WHOLE_NUMBER:
            problems.append((name, f"must be at most {_MAX_WHOLE_NUMBER}"))
    for name in _SECONDS_OPTIONS:
        value = options.get(name)
        if value is not None and value > MAX_SECONDS:
            problems.append((name, f"must be at most {MAX_SECONDS} seconds (a week)"))
    if problems:
        name, why = problems[0]
        raise ConfigurationError(f"Invalid value for option {name!r} in {source}: {why}")


#: Variables that force a model on every command, above every layer but ``override_model()``.
FORCE_VARS = ("ALLOY_FORCE_MODEL", "ALLOY_BACKEND")
_ENV_NAMES = (
    *(name for names in ENV_VARS.values() for name in names),
    *FORCE_VARS,
    *LEGACY_ENV_VARS,  # read only to warn, but a change must resolve again so the warning shows
)

_WATCHED = frozenset(_ENV_NAMES)


def _read_watched() -> Mapping[str, str]:
    """The variables alloy reads that are set, with their values, read from ``os.environ``.

    One pass over ``os.environ`` finds them: looking each name up instead costs two exceptions
    for every name that is not set, most of them, which is 2.6 times the pass (measured).
    """
    environ = os.environ
    values = ((name, environ.get(name)) for name in _WATCHED.intersection(environ))
    return MappingProxyType({name: value for name, value in values if value is not None})


def _env_snapshot() -> Mapping[str, str]:
    """The variables alloy reads that are set, with their values. Read on every call: a command
    keeps its plan only while they (and the other layers) stay the same."""
    return _read_watched()


def _env_layer() -> dict[str, Any]:
    """Options set through ALLOY_* variables (and a .env file), validated."""
    _load_dotenv_once()
    env = _env_snapshot()
    warn_legacy_env(env)
    layer: dict[str, Any] = {}
    for option, names in ENV_VARS.items():
        name = next((n for n in names if n in env), None)
        if name is None:
            continue
        value = _parse_env(option, name, env[name])
        if value is not None:
            layer.update(check_options({option: value}, source=f"environment variable {name}"))
    return layer


def check_forced_model(model: str, source: str) -> str:
    """A model name to force on every command, checked as ``ALLOY_MODEL`` is."""
    if not _is_utf8(model):
        raise ConfigurationError(f"{source} is not valid UTF-8 text")
    return _check_model_name(source, model.strip())


def _env_forced() -> dict[str, Any]:
    """The model ``ALLOY_FORCE_MODEL`` forces on every command, whatever the code names, so
    examples and test suites run offline (or on one model) without edits. It is the only
    model: the code's fallback models are left out.

    alloy-ai's ``ALLOY_BACKEND=fake`` did the same with its fake backend: it still forces the
    offline model, with a DeprecationWarning.
    """
    forced = os.environ.get("ALLOY_FORCE_MODEL")
    if forced and forced.strip():
        model = check_forced_model(forced, "environment variable ALLOY_FORCE_MODEL")
        return {"model": model, "fallback": ()}
    backend = (os.environ.get("ALLOY_BACKEND") or "").strip()
    if not backend:
        return {}
    if backend.lower() != "fake":
        raise ConfigurationError(
            f"ALLOY_BACKEND={backend!r} was alloy-ai's backend switch; alloy picks the provider "
            "from the model: set ALLOY_MODEL (such as 'openai:gpt-5-mini'), or ALLOY_FORCE_MODEL "
            "to force one model on every command"
        )
    deprecated("ALLOY_BACKEND=fake was alloy-ai's offline switch: use ALLOY_FORCE_MODEL=offline")
    return {"model": "offline", "fallback": ()}


def _parse_env(option: str, name: str, raw: str) -> Any:
    """Turn a variable's text into a value; empty means unset. Types are checked afterwards."""
    if not raw.strip():
        return None
    if not _is_utf8(raw):
        raise ConfigurationError(
            f"{name} is not valid UTF-8 text: the environment holds bytes in another encoding"
        )
    if option == "extra_json":
        return _parse_json_object(name, raw)
    if option == "model":
        return _check_model_name(f"environment variable {name}", raw.strip())
    if option == "skip_rails":
        return tuple(kind.strip() for kind in raw.split(",") if kind.strip())
    if option == "fallback":
        models = (entry.strip() for entry in raw.split(","))
        where = f"environment variable {name}"
        return tuple(_check_model_name(where, model, option) for model in models if model)
    if option in ("auto_finalize_missing_output", "log_content", "prompt_cache", "cache_all"):
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigurationError(
            f"{name} must be true or false (or 1/0, yes/no, on/off), got {raw!r}"
        )
    if option == "system":
        return raw
    if option == "cost_budget":
        return _parse_dollars(name, raw)
    return raw.strip()


def _parse_dollars(name: str, raw: str) -> float:
    """An amount of US dollars: ``2.50``, or ``$2.50``."""
    text = raw.strip().removeprefix("$").strip()
    try:
        if not text.isascii() or "_" in text:  # float() reads other digits and 1_000 too
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise ConfigurationError(
            f"{name} must be an amount in US dollars, such as 2.50, got {raw!r}"
        ) from None


def _parse_json_object(name: str, raw: str) -> dict[str, Any]:
    """The variable's JSON object; every way the json module can fail is named for the variable."""
    import json

    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{name} is not valid JSON: {exc.msg} at position {exc.pos}"
        ) from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise ConfigurationError(f"{name} holds a number with too many digits") from None
    except RecursionError:
        raise ConfigurationError(f"{name} is nested too deeply to read") from None
    if not isinstance(value, dict):
        raise ConfigurationError(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def _check_model_name(source: str, model: str, option: str = "model") -> str:
    """Refuse a model string no registered provider serves, naming where it was set.

    Without this, the registry refuses it at the first call in words that do not say where it
    was set. The registry is read at that first call, and a refused layer is not cached, so a
    provider registered after a refused call serves the next one.
    """
    where = f"Invalid value for option {option!r} in {source}"
    if not (model.isascii() and model.isprintable()) or " " in model:
        raise ConfigurationError(
            f"{where}: a model name is printable ASCII without spaces, such as 'openai:gpt-5-mini'"
        )
    try:
        provider, model_id = split_model(model)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    if not model_id and providers()[provider].needs_model_id:
        raise ConfigurationError(
            f"{where}: {model!r} names a provider but no model; write it as '{provider}:<model>'"
        )
    return model


def _load_dotenv_once() -> None:
    """Read ``.env`` from the working directory into the environment, never overriding it.

    A file that cannot be used is a ConfigurationError naming it and the line, raised again on
    every call until it is fixed. No message shows a value from the file: it may hold a key.
    """
    global _dotenv_loaded
    if _dotenv_loaded:
        return
    path = None if _skips_dotenv() else _dotenv_path()
    if path is not None:
        _apply_dotenv(path, _read_dotenv(path))
    _dotenv_loaded = True


def _skips_dotenv() -> bool:
    """``ALLOY_NO_DOTENV`` read as a flag: 1/true/yes/on skip the file; unset, empty and
    0/false/no/off read it."""
    raw = os.environ.get("ALLOY_NO_DOTENV", "")
    lowered = raw.strip().lower()
    if lowered in ("", "0", "false", "no", "off"):
        return False
    if lowered in ("1", "true", "yes", "on"):
        return True
    raise ConfigurationError(
        f"ALLOY_NO_DOTENV must be true or false (or 1/0, yes/no, on/off), got {raw!r}"
    )


def _dotenv_path() -> str | None:
    """The working directory's ``.env`` file, if there is one. A directory of that name (a
    virtualenv made with ``python -m venv .env``) is not a dotenv file."""
    try:
        path = os.path.join(os.getcwd(), ".env")
    except OSError:  # the working directory was removed: there is no file to read
        return None
    return path if os.path.isfile(path) else None


def _read_dotenv(path: str) -> str:
    """The file's text, decoded strictly: python-dotenv would stop at the first bad byte."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot read {path}: {exc.strerror or type(exc).__name__} "
            "(set ALLOY_NO_DOTENV=1 to skip the file)"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigurationError(
            f"{path} is not UTF-8 text: line {line} has a byte that is not UTF-8"
        ) from None
    nul = text.find("\0")
    if nul != -1:
        raise ConfigurationError(f"{path} line {_line_number(text, nul)} has a NUL character")
    return text


def _apply_dotenv(path: str, text: str) -> None:
    """Set the file's variables that the environment does not already hold, all or none."""
    import io

    from dotenv import dotenv_values

    found = dotenv_values(stream=io.StringIO(text))
    new = {k: v for k, v in found.items() if v is not None and k not in os.environ}
    for key, value in new.items():
        if not key or "=" in key:
            problem = "a variable name that is empty or has '=' in it cannot be set"
        elif "\0" in value:
            problem = f"the value of {key} has a NUL character"
        else:
            continue
        raise ConfigurationError(f"{path}{_line_defining(text, key)}: {problem}")
    os.environ.update(new)


def _line_defining(text: str, key: str) -> str:
    """`` line N`` for the last line of ``text`` that sets ``key`` (the one that wins), or ``""``."""
    import re

    pattern = rf"^[ \t]*(?:export[ \t]+)?(['\"]?){re.escape(key)}\1[ \t]*="
    starts = [m.start() for m in re.finditer(pattern, text, re.MULTILINE)]
    return f" line {_line_number(text, starts[-1])}" if starts else ""


def _line_number(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def configure(**options: Any) -> None:
    """Set process-wide defaults (above the environment, below everything else)."""
    global _global_overrides
    checked = check_options(options, source="configure()")
    _global_overrides = MappingProxyType({**_global_overrides, **checked})


def reset_configuration() -> None:
    """Forget everything ``configure()`` set, and read ``.env`` again at the next call."""
    global _dotenv_loaded, _global_overrides
    _global_overrides = _EMPTY
    _dotenv_loaded = False


def layers_key() -> tuple[Any, ...]:
    """What the layers outside a command hold now, cheap enough to read on every call.

    While it compares equal, :func:`resolve` gives the same Config for the same command options,
    so a command keeps what it derived from its last Config instead of resolving again. The
    other layers are immutable mappings replaced on every change, so they stand for themselves.
    """
    if not _dotenv_loaded:
        _load_dotenv_once()
    return (
        _env_snapshot(),
        _global_overrides,
        _context_overrides.get(),
        _process_forced,
        _forced_overrides.get(),
    )


@contextmanager
def use_config(**options: Any) -> Iterator[None]:
    """Override options for the code inside the ``with`` block (thread and task local)."""
    checked = check_options(options, source="use_config()")
    token = _context_overrides.set({**_context_overrides.get(), **checked})
    try:
        yield
    finally:
        _context_overrides.reset(token)


@contextmanager
def force_config(**options: Any) -> Iterator[None]:
    """Like use_config, but above every other layer; meant for tests. A forced model is the
    only model: the code's fallback models are left out too."""
    checked = check_options(options, source="override")
    if "model" in checked:
        checked.setdefault("fallback", ())
    token = _forced_overrides.set({**_forced_overrides.get(), **checked})
    try:
        yield
    finally:
        _forced_overrides.reset(token)


@contextmanager
def force_config_everywhere(**options: Any) -> Iterator[None]:
    """:func:`force_config` for every thread of the process, those already running and those
    started inside the block, for as long as it lasts (below a thread's own
    :func:`force_config`). Blocks of it nest; two run at once from different threads would
    overwrite each other."""
    global _process_forced
    checked = check_options(options, source="override")
    if "model" in checked:
        checked.setdefault("fallback", ())
    before = _process_forced
    _process_forced = MappingProxyType({**before, **checked})
    try:
        yield
    finally:
        _process_forced = before


def resolve(decorator: Mapping[str, Any], call: Mapping[str, Any]) -> Config:
    """Merge the layers, lowest first. Layer values are already validated."""
    merged: dict[str, Any] = {}
    merged.update(_env_layer())
    merged.update(_global_overrides)
    merged.update(_context_overrides.get())
    merged.update(decorator)
    merged.update(call)
    merged.update(_env_forced())
    merged.update(_process_forced)
    merged.update(_forced_overrides.get())
    return replace(_DEFAULTS, **merged) if merged else _DEFAULTS


_DEFAULTS = Config()
