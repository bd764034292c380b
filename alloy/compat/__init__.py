"""Output specs from other tools, loaded as alloy output types.

- :func:`load_rail`: a Guardrails RAIL ``<output>`` element (structure, descriptions,
  validators and ``on-fail-*`` actions applied as Guardrails applies them, strict or lenient).
- :func:`load_pdl`: a ragit PDL schema string (``[{name: str, age: int}]{min: 3, max: 3}``).
"""

from ..checks import SpecWarning
from .pdl import load_pdl
from .rail import RailText, load_rail

__all__ = ["RailText", "SpecWarning", "load_pdl", "load_rail"]
