"""Requests built by hand as a command's plan builds them: schemas in the provider's dialect."""

from __future__ import annotations

from dataclasses import replace

from alloy._types import Request
from alloy.providers import dialect_for


def as_planned(request: Request) -> Request:
    """``request`` with its output and tool schemas in the dialect of its model's provider
    (``Provider.dialect``), as ``Plan.request_parts`` makes them; adapters send those."""
    dialect = dialect_for(request.model)
    if dialect is None:
        return request
    model_id = request.model.partition(":")[2]
    output = request.output
    if output is not None and output.mode != "prompt":
        output = replace(output, dialect_schema=dialect(output.schema, model_id))
    tools = tuple(
        replace(t, dialect_parameters=dialect(t.parameters, model_id)) for t in request.tools
    )
    return replace(request, output=output, tools=tools)
