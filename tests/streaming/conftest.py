"""Fixtures: ``partials`` and ``items`` run stream_partial / stream_items (or their async twins)."""

from __future__ import annotations

import pytest

from .helpers import Collect, collector


@pytest.fixture(params=["sync", "async"])
def partials(request: pytest.FixtureRequest) -> Collect:
    """``partials(cmd, *args)``: the partials of a call, through either driver."""
    return collector(request.param, "stream_partial")


@pytest.fixture(params=["sync", "async"])
def items(request: pytest.FixtureRequest) -> Collect:
    """``items(cmd, *args)``: the elements of a list answer, through either driver."""
    return collector(request.param, "stream_items")
