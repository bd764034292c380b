"""Deprecated: this module is now :mod:`alloy.providers.batch_api`, and its ``Wire`` is
``BatchAPI``; importing it warns."""

import warnings

from .batch_api import *  # noqa: F403
from .batch_api import BatchAPI as Wire  # noqa: F401

warnings.warn(
    "alloy.providers.batch_wire is now alloy.providers.batch_api (and its Wire is BatchAPI)",
    DeprecationWarning,
    stacklevel=2,
)
