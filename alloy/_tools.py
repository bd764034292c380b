"""``@tool``: Python functions the model may call, with schemas, validation and contracts.

The parameter schema comes from ``typing.get_type_hints`` (so ``from __future__ import
annotations`` works) and the docstring. Arguments are validated before the function runs, and
every failure (bad arguments, a broken contract, an exception) becomes a tool result the model
can read and react to, rather than an exception that ends the call.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeVar, overload

from ._deps import context_parameter, current
from ._nesting import check_nesting
from ._pickling import by_reference, function_ref, located
from ._schema import strict_schema
from ._stream_accumulator import NON_FINITE, parse_arguments
from ._text import replace_lone_surrogates
from ._typeddict import portable
from ._types import MAX_SECONDS, ToolCall, ToolDefinition, ToolResult
from .errors import ConfigurationError, ToolError

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

_CONTRACTS_ATTR = "__alloy_contracts__"


@dataclass(frozen=True)
class Contract:
    """A ``require`` (checked on the arguments) or ``ensure`` (checked on the result)."""

    kind: typing.Literal["require", "ensure"]
    predicate: Callable[[Any], bool]
    message: str


class ContractViolation(Exception):
    """A contract did not hold; reported to the model as a tool error."""


def require(predicate: Callable[[inspect.BoundArguments], bool], message: str) -> Callable[[F], F]:
    """Precondition on a tool's arguments; ``predicate`` receives the ``BoundArguments``."""
    return _add_contract(Contract("require", predicate, message))


def ensure(predicate: Callable[[Any], bool], message: str) -> Callable[[F], F]:
    """Postcondition on a tool's result; ``predicate`` receives the return value."""
    return _add_contract(Contract("ensure", predicate, message))


def _add_contract(contract: Contract) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        if isinstance(fn, Tool):
            fn.contracts = (*fn.contracts, contract)
            return fn
        existing = getattr(fn, _CONTRACTS_ATTR, ())
        try:
            setattr(fn, _CONTRACTS_ATTR, (*existing, contract))
        except AttributeError as exc:
            raise ConfigurationError(f"Cannot attach a contract to {fn!r}") from exc
        return fn

    return decorate


class Tool(Generic[R]):
    """A function offered to the model. Calling the Tool calls the function unchanged."""

    def __init__(
        self,
        fn: Callable[..., R],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        cacheable: bool = False,
    ) -> None:
        if not callable(fn):
            raise ConfigurationError(f"@tool needs a function, got {fn!r}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "tool"))
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", self.name):
            raise ConfigurationError(
                f"Tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' (provider rule)"
            )
        #: Seconds one call may run (None: the command's ``tool_timeout``, if any).
        self.timeout = _checked_timeout(timeout, self.name)
        self.signature = inspect.signature(fn)
        doc = inspect.getdoc(fn) or ""
        summary, param_docs = parse_docstring(doc)
        self.description: str = description or summary or self.name
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )
        self.contracts: tuple[Contract, ...] = tuple(getattr(fn, _CONTRACTS_ATTR, ()))
        #: The parameter that receives the call's Context (``deps=``); not shown to the model.
        self.context_param = context_parameter(fn)
        #: Whether a call with a response cache may answer this tool from the store, for the
        #: same arguments, instead of running it (see ``alloy.cache._tools``).
        self.cacheable = _checked_cacheable(cacheable, self.name, self.context_param)
        self._validator, self.definition = _build_schema(
            fn, self.name, self.description, self.signature, param_docs, self.context_param
        )
        self.__name__ = self.name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        """Call the function. Its contracts hold here too: a broken ``require`` or ``ensure``
        raises ToolError (a model's call reports it to the model instead)."""
        if not self.contracts:
            return self.fn(*args, **kwargs)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        self._direct(self.check_arguments, bound)
        result = self.fn(*bound.args, **bound.kwargs)
        if self.is_async:
            return self._ensured(result)  # type: ignore[return-value]
        self._direct(self.check_result, result)
        return result

    async def _ensured(self, pending: Any) -> Any:
        result = await pending
        self._direct(self.check_result, result)
        return result

    def _direct(self, check: Callable[[Any], None], subject: Any) -> None:
        try:
            check(subject)
        except ContractViolation as violation:
            raise ToolError(f"Tool {self.name!r}: {violation}", tool=self.name) from None

    def __repr__(self) -> str:
        return f"<alloy tool {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its module and name when they find this very tool, else by what it was
        made from; a command offered as a tool goes as that command (see :mod:`alloy._pickling`)."""
        module = getattr(self.fn, "__module__", None)
        qualname = getattr(self.fn, "__qualname__", None)
        if by_reference(self, module, qualname):
            return (located, (module, qualname))
        command = getattr(self.fn, "__alloy_command__", None)
        if command is not None:
            return (as_tool, (command,))
        made_of = (function_ref(self.fn), self.name, self.description, self.timeout, self.cacheable)
        return (_unpickled, made_of)

    @property
    def spec(self) -> NoReturn:
        """alloy-ai's ``ToolSpec``, which alloy does not have: the error names what replaced it."""
        raise AttributeError(
            f"{self.name}.spec was alloy-ai's: a Tool describes itself. Use {self.name}.definition "
            "(name, description and parameters, what spec.as_schema() returned), "
            f"{self.name}.contracts and {self.name}.fn"
        )

    # -- running a call from the model ---------------------------------------------------
    def bind(self, call: ToolCall) -> inspect.BoundArguments:
        """Validate the model's arguments and check preconditions; raise ToolInputError."""
        from pydantic import ValidationError

        try:
            validated = strict_arguments(self._validator, arguments_json(call))
        except ValidationError as exc:
            raise ToolInputError(_describe_validation(exc)) from None
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        if self.context_param is not None:
            kwargs[self.context_param] = current(f"Tool {self.name!r}")
        bound = self.signature.bind(**kwargs)
        self.check_arguments(bound)
        return bound

    def check_arguments(self, bound: inspect.BoundArguments) -> None:
        for contract in self.contracts:
            if contract.kind == "require" and not contract.predicate(bound):
                raise ContractViolation(f"precondition failed: {contract.message}")

    def check_result(self, result: Any) -> None:
        for contract in self.contracts:
            if contract.kind == "ensure" and not contract.predicate(result):
                raise ContractViolation(f"postcondition failed: {contract.message}")


class ToolInputError(Exception):
    """The model sent arguments that do not fit the tool's signature."""


class ToolTimedOut(Exception):
    """A tool call ran past its timeout (or the call's deadline); reported to the model."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(f"tool {name!r} timed out after {round(seconds, 3):g} s")


def _checked_timeout(timeout: Any, name: str) -> float | None:
    """A tool's own timeout: None, or seconds that are positive, finite and at most a week."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ConfigurationError(f"Tool {name!r}: timeout must be a number of seconds")
    if not 0 < timeout <= MAX_SECONDS:  # also refuses nan, which compares false
        raise ConfigurationError(
            f"Tool {name!r}: timeout must be positive and at most {MAX_SECONDS} seconds (a week)"
        )
    return float(timeout)


def _checked_cacheable(cacheable: Any, name: str, context_param: str | None) -> bool:
    """``cacheable`` as given: a bool, on a tool whose result can depend on its arguments only."""
    if not isinstance(cacheable, bool):
        raise ConfigurationError(f"Tool {name!r}: cacheable must be True or False")
    if cacheable and context_param is not None:
        raise ConfigurationError(
            f"Tool {name!r} takes the call's context ({context_param!r}), so its result may "
            "depend on deps=, which a cached result's key does not hold: it cannot be cacheable"
        )
    return cacheable


@overload
def tool(fn: Callable[..., R], /) -> Tool[R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    cacheable: bool = False,
) -> Callable[[Callable[..., R]], Tool[R]]: ...
def tool(
    fn: Callable[..., R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    cacheable: bool = False,
) -> Tool[R] | Callable[[Callable[..., R]], Tool[R]]:
    """Make a function available to commands as a tool (``@tool`` or ``@tool(name=...)``).

    ``timeout`` is how many seconds one call may run; past it the model is told the tool timed
    out (see ``tool_timeout`` for a default of every tool of a command). ``cacheable=True`` lets
    a call with a response cache (``cache=``) answer a call of the tool with the same arguments
    from the store instead of running it: only for a tool whose result depends on its arguments
    alone and whose side effects may be skipped. Other tools run on every call.
    """
    if fn is not None:
        return Tool(fn)
    return lambda f: Tool(
        f, name=name, description=description, timeout=timeout, cacheable=cacheable
    )


@typing.runtime_checkable
class ToolSource(typing.Protocol):
    """Something that offers itself as a tool: a command, used by another command."""

    def __alloy_tool__(self) -> Tool[Any]: ...


def _unpickled(
    fn: Callable[..., Any], name: str, description: str, timeout: float | None, cacheable: bool
) -> Tool[Any]:
    """A tool pickled by value, made again in this process."""
    return Tool(fn, name=name, description=description, timeout=timeout, cacheable=cacheable)


def as_tool(obj: Any) -> Tool[Any]:
    """Accept a Tool, a plain function, or a Command as an entry of ``tools=``."""
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, ToolSource):
        return obj.__alloy_tool__()
    if callable(obj):
        return Tool(obj)
    raise ConfigurationError(
        f"tools= entries must be functions, @tool objects or commands, got {obj!r}"
    )


_NOT_JSON = "arguments are not a valid JSON object"


def strict_arguments(model: Any, text: str | bytes) -> Any:
    """``text``, a JSON object of arguments, validated as ``model`` (a pydantic model of the
    parameters): strictly, with JSON's meaning. ``"3"`` is no int and ``true`` no 1, but a JSON
    string is still a date, UUID, Decimal or Enum value, as the JSON Schema says. Tool calls
    and the bodies of ``alloy serve``'s command routes are read this way; a mismatch raises
    pydantic's ValidationError."""
    return model.model_validate_json(text, strict=True)


def arguments_json(call: ToolCall) -> str:
    """The call's arguments as JSON text to validate, or a ToolInputError saying why there is none.

    Arguments arrive parsed (``args``) or, when they did not parse, as the model's text
    (``raw_args``). Parsed ones are written back to JSON, refusing what JSON cannot hold: NaN
    and Infinity (a provider SDK's lenient parser lets them through) and runaway nesting.
    """
    args: Any = dict(call.args)
    if call.raw_args is not None and not args:
        args = parse_arguments(call.raw_args)
        if isinstance(args, str):
            raise ToolInputError(f"{_NOT_JSON} ({args}): {call.raw_args[:200]!r}")
    try:
        text = json.dumps(args, allow_nan=False)
        check_nesting(text)
        return text
    except RecursionError:
        raise ToolInputError(f"{_NOT_JSON} (nested too deeply)") from None
    except ValueError:
        raise ToolInputError(f"{_NOT_JSON} ({NON_FINITE})") from None
    except TypeError as exc:
        raise ToolInputError(f"arguments are not JSON values: {exc}") from None


def result_content(value: Any) -> str:
    """Serialize a tool's return value for the model: strings as they are, the rest as JSON.

    Lone surrogates (text from bytes decoded with ``surrogateescape``, such as file names) become
    U+FFFD: the result is not the caller's input, and the call should go on rather than fail
    in the provider's SDK.
    """
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    from pydantic_core import to_json, to_jsonable_python

    try:
        return to_json(value).decode()
    except Exception:  # not serializable, or holding text that is not UTF-8
        pass
    try:
        text = json.dumps(to_jsonable_python(value), ensure_ascii=False, separators=(",", ":"))
    except Exception:
        text = json.dumps(str(value), ensure_ascii=False)
    return replace_lone_surrogates(text)


def error_result(call: ToolCall, error: BaseException) -> ToolResult:
    """A tool failure as the model sees it: the error type and message."""
    if isinstance(error, (ToolInputError, ContractViolation, ToolTimedOut)):
        text = f"Error: {error}"
    else:
        text = f"Error: {type(error).__name__}: {error}"
    return ToolResult(call.id, call.name, replace_lone_surrogates(text), is_error=True)


def _build_schema(
    fn: Callable[..., Any],
    name: str,
    description: str,
    signature: inspect.Signature,
    param_docs: Mapping[str, str],
    context_param: str | None = None,
) -> tuple[Any, ToolDefinition]:
    from pydantic import ConfigDict, Field, create_model

    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"Cannot read the type hints of tool {name!r}: {exc}") from exc
    field_defs: dict[str, Any] = {}
    all_required = True
    for param in signature.parameters.values():
        if param.name == context_param:
            continue  # given by alloy (the call's deps), never by the model
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigurationError(
                f"Tool {name!r}: *args and **kwargs cannot be described to a model"
            )
        annotation = portable(hints.get(param.name, Any))
        default = ... if param.default is param.empty else param.default
        all_required &= default is ...
        field_defs[param.name] = (
            annotation,
            Field(default, description=param_docs.get(param.name)),
        )
    try:
        model = create_model(
            f"{name}_args",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **field_defs,
        )
        schema = model.model_json_schema()
    except Exception as exc:
        raise ConfigurationError(
            f"Tool {name!r} has a parameter type with no JSON Schema: {exc}"
        ) from exc
    schema.pop("title", None)
    try:
        strict = strict_schema(schema, type_name=f"tool {name!r} parameters")
        if not all_required:
            strict["required"] = [p for p, (_, f) in field_defs.items() if f.is_required()]
        parameters, is_strict = strict, all_required
    except ConfigurationError:
        parameters, is_strict = _loose(schema), False
    return model, ToolDefinition(name, description, parameters, strict=is_strict)


def _loose(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema that cannot be strict (e.g. a dict parameter) is still offered, without ``strict``."""
    return {k: v for k, v in schema.items() if k != "title"}


def _describe_validation(exc: Any) -> str:
    parts = []
    for error in exc.errors(include_url=False)[:10]:
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "invalid arguments: " + "; ".join(parts)


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters|Params):\s*$", re.IGNORECASE)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary paragraph and Google-style ``Args:`` descriptions (``:param x:`` too)."""
    lines = doc.splitlines()
    params: dict[str, str] = {}
    summary_lines: list[str] = []
    in_args = False
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        sphinx = re.match(r"^:param\s+(?:\w+\s+)?(\w+):\s*(.*)$", stripped)
        if sphinx:
            params[sphinx.group(1)] = sphinx.group(2)
            continue
        if _ARGS_HEADER.match(stripped):
            in_args = True
            continue
        if in_args:
            if not stripped:
                current = None
                continue
            if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):", stripped):
                in_args = False
                continue
            match = _ARG_LINE.match(line)
            if match and (line.startswith(("    ", "\t")) or current is None):
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
            elif current:
                params[current] = f"{params[current]} {stripped}".strip()
            continue
        if stripped.startswith(":"):
            continue
        summary_lines.append(line)
    summary = "\n".join(summary_lines).strip()
    return summary, params
