"""OpenTelemetry tracing for alloy commands (install ``alloy[otel]``).

:func:`instrument` subscribes to alloy's events and turns them into spans: one per command call,
with a child span per model request (``chat {model}``) and per tool call (``execute_tool {name}``),
carrying the GenAI semantic-convention attributes (provider, model, token usage, finish reason,
errors). A move to a fallback model is an ``alloy.fallback`` event on the command's span.
A streamed typed value marks its first partial (per attempt) on the command's span. A stream
the caller stops (closes it, leaves an ``async for``, cancels the task) ends its open spans
with ``alloy.cancelled`` set and an ``alloy.cancelled`` span event giving the reason; their
status stays unset, as nothing failed. Prompts and outputs are never recorded. Call the
returned function to stop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import events as ev
from .errors import ConfigurationError
from .providers import provider_of

__all__ = ["instrument"]


def instrument(tracer_provider: Any = None) -> Callable[[], None]:
    """Start tracing every command call; returns a function that stops it."""
    try:
        from opentelemetry import trace
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ConfigurationError("Tracing needs OpenTelemetry: pip install 'alloy[otel]'") from exc
    tracer = trace.get_tracer("alloy", tracer_provider=tracer_provider)
    return ev.subscribe(_SpanBuilder(tracer, trace).handle)


def _provider(model: str) -> str:
    """``gen_ai.provider.name`` for an alloy model string (``openai-chat:gpt-4o`` -> openai), as
    the provider's descriptor spells it (``Provider.genai_name``)."""
    descriptor = provider_of(model)
    if descriptor is None:
        return model.split(":", 1)[0]
    return descriptor.genai_name or descriptor.name


def _model_id(model: str) -> str:
    """``gen_ai.request.model``: the provider's model id, without alloy's ``provider:`` prefix
    (``ollama:gpt-oss:20b`` -> ``gpt-oss:20b``)."""
    return model.split(":", 1)[1] if ":" in model else model


class _SpanBuilder:
    """Keeps the open spans of each call (by call id) and closes them as events arrive."""

    def __init__(self, tracer: Any, trace: Any) -> None:
        self.tracer = tracer
        self.trace = trace
        self.lock = threading.Lock()
        self.commands: dict[str, Any] = {}
        self.models: dict[tuple[str, int], Any] = {}
        self.tools: dict[tuple[str, str], Any] = {}
        #: The attempt whose first partial (or list element) each streamed call has marked.
        self.streamed: dict[str, int] = {}

    def start(
        self, name: str, parent: Any, attributes: dict[str, Any], *, client: bool = False
    ) -> Any:
        """A span; ``client`` for a call to the model (kind CLIENT, as the GenAI conventions
        ask of inference spans), else INTERNAL."""
        context = self.trace.set_span_in_context(parent) if parent is not None else None
        kind = self.trace.SpanKind.CLIENT if client else self.trace.SpanKind.INTERNAL
        return self.tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def handle(self, event: ev.Event) -> None:
        with self.lock:
            self._handle(event)

    def _handle(self, event: ev.Event) -> None:
        call = event.call_id
        if isinstance(event, ev.CommandStarted):
            self.commands[call] = self.start(
                f"command {event.command}",
                None,
                {
                    "alloy.command": event.command,
                    "alloy.output.type": event.expected,
                    "gen_ai.request.model": _model_id(event.model),
                    "gen_ai.provider.name": _provider(event.model),
                },
            )
        elif isinstance(event, ev.ModelRequest):
            request = event.request
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": _provider(request.model),
                "gen_ai.system": _provider(request.model),
                "gen_ai.request.model": _model_id(request.model),
                "gen_ai.output.type": "json" if request.output is not None else "text",
                "alloy.attempt": event.attempt,
            }
            if request.settings.temperature is not None:
                attributes["gen_ai.request.temperature"] = request.settings.temperature
            if request.settings.max_tokens is not None:
                attributes["gen_ai.request.max_tokens"] = request.settings.max_tokens
            self.models[(call, event.attempt)] = self.start(
                f"chat {_model_id(request.model)}", self.commands.get(call), attributes, client=True
            )
        elif isinstance(event, ev.ModelResponse):
            span = self.models.pop((call, event.attempt), None)
            if span is not None:
                response = event.response
                span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
                span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
                if response.model:
                    span.set_attribute("gen_ai.response.model", response.model)
                if response.response_id:
                    span.set_attribute("gen_ai.response.id", response.response_id)
                if response.cache is not None:  # the call has a response cache
                    span.set_attribute("alloy.cache.hit", response.cache == "hit")
                    span.set_attribute("alloy.cache.status", response.cache)
                span.end()
        elif isinstance(event, ev.ProviderRetry):
            self._fail_model_spans(call, event.error)
        elif isinstance(event, ev.FellBack):
            self._fail_model_spans(call, event.error)
            span = self.commands.get(call)
            if span is not None:
                span.add_event(
                    "alloy.fallback",
                    {
                        "alloy.fallback.from": event.from_model,
                        "alloy.fallback.to": event.to_model,
                        "error.type": type(event.error).__name__,
                    },
                )
        elif isinstance(event, ev.ToolCallStarted):
            self.tools[(call, event.call.id)] = self.start(
                f"execute_tool {event.call.name}",
                self.commands.get(call),
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.call.name,
                    "gen_ai.tool.call.id": event.call.id,
                },
            )
        elif isinstance(event, ev.ToolCallFinished):
            span = self.tools.pop((call, event.call.id), None)
            if span is not None:
                if event.result.is_error:
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(self.trace.Status(self.trace.StatusCode.ERROR))
                span.end()
        elif isinstance(event, (ev.PartialOutput, ev.OutputItem)):
            span = self.commands.get(call)
            if span is not None and self.streamed.get(call) != event.attempt:
                self.streamed[call] = event.attempt
                span.add_event("alloy.stream.first_output", {"alloy.attempt": event.attempt})
        elif isinstance(event, ev.CommandFinished):
            self.streamed.pop(call, None)
            span = self.commands.pop(call, None)
            if span is not None:
                usage = event.transcript.usage
                span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
                span.set_attribute("alloy.attempts", event.transcript.attempts)
                span.end()
        elif isinstance(event, ev.CommandFailed):
            self.streamed.pop(call, None)
            self._fail_model_spans(call, event.error)
            span = self.commands.pop(call, None)
            if span is not None:
                self._mark_error(span, event.error)
                span.end()
        elif isinstance(event, ev.CommandCancelled):
            self.streamed.pop(call, None)
            opened = [self.models.pop(k) for k in [k for k in self.models if k[0] == call]]
            opened += [self.tools.pop(k) for k in [k for k in self.tools if k[0] == call]]
            span = self.commands.pop(call, None)
            for each in [*opened, span] if span is not None else opened:
                each.set_attribute("alloy.cancelled", True)
                each.add_event("alloy.cancelled", {"alloy.cancel.reason": event.reason})
                each.end()

    def _fail_model_spans(self, call: str, error: BaseException) -> None:
        for key in [k for k in self.models if k[0] == call]:
            span = self.models.pop(key)
            self._mark_error(span, error)
            span.end()

    def _mark_error(self, span: Any, error: BaseException) -> None:
        span.set_attribute("error.type", type(error).__name__)
        # The message is alloy's own (keys are redacted before errors are built); no prompt text.
        span.set_status(self.trace.Status(self.trace.StatusCode.ERROR, type(error).__name__))
