"""OpenTelemetry spans per command, model call and tool call (pip install 'alloy[otel]')."""

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from alloy import command
from alloy.otel import instrument

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
stop = instrument(provider)


@command(output=float)
def temperature(city: str) -> str:
    return f"Today's temperature in {city}, in Celsius?"


temperature("Oslo")
stop()
for span in exporter.get_finished_spans():
    usage = {k: v for k, v in span.attributes.items() if k.startswith("gen_ai.usage")}
    print(span.name, usage)
