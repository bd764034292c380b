"""A prompt function that returns nothing stays refused, and says why (issue 21, item 6)."""

from __future__ import annotations

import pytest

from alloy import ConfigurationError, command
from alloy.testing import FunctionModel


def test_a_prompt_function_returning_none_is_refused_with_the_reason(model: FunctionModel) -> None:
    @command
    def summarize(text: str) -> str:  # type: ignore[empty-body]
        """Return a short summary of the input."""

    with pytest.raises(ConfigurationError, match="returned None: return the prompt text"):
        summarize("alloy")
    assert model.requests == []
