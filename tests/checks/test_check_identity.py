"""Two checks of different functions are different criteria, also to typing's cache.

``Annotated[int, check(f)]`` and ``Annotated[int, check(g)]`` were one cached object (checks
compared equal when their on_fail matched), so the second command ran the first one's check.
"""

from __future__ import annotations

from typing import Annotated

from alloy import command
from alloy.checks import check
from alloy.testing import script


def test_commands_with_checks_of_different_functions_run_their_own() -> None:
    ran: list[str] = []

    def small(value: int) -> bool:
        ran.append("small")
        return True

    def even(value: int) -> bool:
        ran.append("even")
        return True

    @command(output=Annotated[int, check(small)], model=script('{"value": 4}'))
    def first() -> str:
        return "a number"

    @command(output=Annotated[int, check(even)], model=script('{"value": 4}'))
    def second() -> str:
        return "a number"

    assert (first(), second()) == (4, 4)
    assert ran == ["small", "even"]
    assert check(small) != check(small)  # each check is its own criterion
