"""alloy-ai's modules that alloy does not have: code importing them runs, or is told what to use.

alloy-ai 0.3.1 had the modules ``alloy.command``, ``alloy.tool``, ``alloy.ask``, ``alloy.types``,
``alloy.models`` (its provider backends: ``base``, ``openai``, ``anthropic``, ``gemini``,
``ollama``) and ``alloy.react``. alloy has none of these files, and a bare "No module named" would
leave their users guessing. So a name with a counterpart in alloy is that counterpart, with a
DeprecationWarning naming it, and one without raises ImportError naming what to use instead.
``alloy.models``' submodules and ``alloy.react`` have no counterpart at all: importing them raises
that ImportError. docs/migrating.md lists every name.

``alloy.command``, ``alloy.tool`` and ``alloy.ask`` are also the names of alloy's decorators and of
``ask``. The import system sets a package's attribute to each submodule it loads, which would
replace them, so these three modules are put in ``sys.modules`` when alloy is imported: there the
import system finds them without touching the package. The others are made when first imported, by
a finder placed last on ``sys.meta_path``, which is only asked about names nothing else found.

``alloy.config`` is the one alloy-ai module with code of its own (its ``Config`` and
``use_config`` keep working): the same finder loads it from ``_alloy_ai_config.py``, so alloy's
own files hold no ``config.py`` beside ``_config.py``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import typing_extensions

from ._command import Command, ask, command
from ._legacy import deprecated
from ._tools import Contract, Tool, ensure, require, tool

if TYPE_CHECKING:
    from importlib.abc import Loader  # not at run time: importlib.abc costs an import

#: A name of an alloy-ai module: its counterpart in alloy (None: there is none), and the advice.
Entry = tuple[Callable[[], Any] | None, str]


def _same(value: Any) -> Callable[[], Any]:
    return lambda: value


def _predicate() -> Any:
    return Callable[[Any], bool]


_FROM_ALLOY = "import it from alloy: from alloy import {name}"
_PROVIDER = (
    "alloy picks the provider from the model string, {model}, and commands, ask and the tool "
    "loop run the same on every provider"
)
_OWN_PROVIDER = (
    "a provider of your own is an adapter registered with alloy.register_provider; alloy "
    "runs the tool loop, retries and validation itself"
)
_BACKENDS = (
    "ModelBackend, BaseLoopState, ToolCall, ToolResult, get_backend, "
    "should_finalize_structured_output, serialize_tool_payload, ensure_object_schema, "
    "build_tools_common and STRICT_JSON_ONLY_MSG were the pieces of alloy-ai's providers"
)

#: Modules that are alloy-ai's only: each name, with its counterpart and the advice.
BRIDGES: dict[str, dict[str, Entry]] = {
    "alloy.command": {
        "command": (_same(command), _FROM_ALLOY.format(name="command")),
        "Command": (
            _same(Command),
            "use alloy.Command, the class of every command (async ones are alloy.AsyncCommand, "
            "a subclass)",
        ),
    },
    "alloy.tool": {
        **{
            name: (_same(value), _FROM_ALLOY.format(name=name))
            for name, value in (("tool", tool), ("require", require), ("ensure", ensure))
        },
        "ToolCallable": (_same(Tool), "use alloy.Tool, the class @tool returns"),
        "Contract": (
            _same(Contract),
            "a tool's contracts are in my_tool.contracts, each with alloy-ai's kind, predicate "
            "and message",
        ),
        "Predicate": (
            _predicate,
            "it was an alias of Callable[[Any], bool]: write that type instead",
        ),
        "ToolSpec": (
            None,
            "a tool describes itself: my_tool.definition (name, description and parameters, "
            "what as_schema() returned), my_tool.contracts and my_tool.fn",
        ),
    },
    "alloy.ask": {"ask": (_same(ask), _FROM_ALLOY.format(name="ask"))},
    "alloy.types": {
        "to_json_schema": (
            None,
            "cmd.schema is the JSON Schema a command sends for its output",
        ),
        "parse_output": (
            None,
            "a command parses and validates its own output; to read a JSON text as a type "
            "yourself, use pydantic.TypeAdapter(T).validate_json(text)",
        ),
        "is_dataclass_type": (_same(dataclasses.is_dataclass), "use dataclasses.is_dataclass"),
        "is_typeddict_type": (
            _same(typing_extensions.is_typeddict),
            "use typing_extensions.is_typeddict",
        ),
        "to_jsonable": (
            None,
            "use dataclasses.asdict(value) for a dataclass, or "
            "pydantic_core.to_jsonable_python(value) for any value",
        ),
        "flatten_property_paths": (
            None,
            "alloy has no counterpart: walk cmd.schema, the JSON Schema a command sends",
        ),
    },
    # alloy-ai's package only listed its submodules, which the finder below refuses.
    "alloy.models": {},
}

#: Modules that are alloy-ai's only and have no counterpart: importing them raises ImportError.
REMOVED: dict[str, str] = {
    "alloy.models.base": f"{_BACKENDS}. {_OWN_PROVIDER.capitalize()}",
    "alloy.models.openai": (
        "OpenAIBackend and OpenAILoopState: "
        + _PROVIDER.format(model='"openai:<model>" (the Responses API) or "openai-chat:<model>"')
    ),
    "alloy.models.anthropic": (
        "AnthropicBackend and AnthropicLoopState: " + _PROVIDER.format(model='"anthropic:<model>"')
    ),
    "alloy.models.gemini": (
        "GeminiBackend and GeminiLoopState: " + _PROVIDER.format(model='"gemini:<model>"')
    ),
    "alloy.models.ollama": (
        "OllamaBackend, OllamaLoopState and OllamaOpenAIChatLoopState: "
        + _PROVIDER.format(
            model='"ollama:<model>" for Ollama\'s /api/chat, or "openai-chat:<model>" with '
            'base_url="http://localhost:11434/v1" for its OpenAI-compatible API'
        )
    ),
    "alloy.react": (
        "react_complete and react_stream were stubs that raised NotImplementedError in "
        "alloy-ai; alloy has no ReAct loop: give the command tools=[...] on a model with tool "
        "calling, and alloy runs the tool rounds"
    ),
}


class _AlloyAiModule(ModuleType):
    """One of alloy-ai's modules: each name is looked up in its table when it is read."""

    def __init__(self, spec: ModuleSpec) -> None:
        super().__init__(spec.name, f"alloy-ai's {spec.name}, kept so code written for it runs.")
        self._alloy_ai_names = BRIDGES[spec.name]
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__package__ = spec.parent
        if spec.submodule_search_locations is not None:
            self.__path__ = spec.submodule_search_locations

    def __getattr__(self, attribute: str) -> Any:
        names: Mapping[str, Entry] = self.__dict__.get("_alloy_ai_names", {})
        entry = names.get(attribute)
        if entry is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r}")
        counterpart, advice = entry
        if counterpart is None:
            # ImportError, not AttributeError: ``from m import name`` replaces an AttributeError
            # with its own "cannot import name", which would drop the advice.
            raise ImportError(
                f"{self.__name__}.{attribute} was alloy-ai's, and alloy has no such name: {advice}",
                name=self.__name__,
            )
        deprecated(f"{self.__name__}.{attribute} is alloy-ai's: {advice}")
        return counterpart()

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._alloy_ai_names})


class _AlloyAiFinder:
    """Makes alloy-ai's modules on first import, or refuses them naming the replacement."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        advice = REMOVED.get(fullname)
        if advice is not None:
            raise ImportError(
                f"{fullname} was alloy-ai's, and alloy has no such module: {advice}",
                name=fullname,
            )
        if fullname == "alloy.config":
            from importlib.util import spec_from_file_location

            return spec_from_file_location(
                fullname, os.path.join(os.path.dirname(__file__), _CONFIG_FILE)
            )
        if fullname not in BRIDGES:
            return None
        return _spec(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return _AlloyAiModule(spec)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module reads its names from its table."""


#: Where alloy-ai's ``alloy.config`` is (see the docstring).
_CONFIG_FILE = "_alloy_ai_config.py"

#: The modules whose names are also attributes of the alloy package (see the docstring).
_PLACED = ("alloy.command", "alloy.tool", "alloy.ask")


def install() -> None:
    """Put the three clashing modules in ``sys.modules`` and the finder last on the meta path."""
    finder = next((f for f in sys.meta_path if isinstance(f, _AlloyAiFinder)), None)
    if finder is None:
        finder = _AlloyAiFinder()
        sys.meta_path.append(finder)
    for name in _PLACED:
        sys.modules.setdefault(name, _AlloyAiModule(_spec(name, finder)))


def _spec(name: str, finder: _AlloyAiFinder) -> ModuleSpec:
    """The finder is also the loader: a Loader by its methods, without importlib.abc's base."""
    return ModuleSpec(name, cast("Loader", finder), is_package=name == "alloy.models")
