"""Output specs from other tools, loaded as alloy output types.

- :func:`load_rail`: a Guardrails RAIL ``<output>`` element (structure, descriptions,
  validators and ``on-fail-*`` actions applied as Guardrails applies them, strict or lenient).
- :func:`load_pdl`: a ragit PDL schema string (``[{name: str, age: int}]{min: 3, max: 3}``).
- :func:`read_pdl`: a whole ragit PDL document, as its output type and its messages.
"""

from ..checks import SpecWarning
from .pdl import load_pdl
from .pdl_document import PdlDocument, read_pdl
from .rail import RailText, load_rail

__all__ = ["PdlDocument", "RailText", "SpecWarning", "load_pdl", "load_rail", "read_pdl"]
