"""Quality criteria on fields, each with a corrective action (reask, fix, filter, refrain, noop, ...)."""

from dataclasses import dataclass
from typing import Annotated

from alloy import command
from alloy.checks import Length, LowerCase, UpperCase, ValidRange


@dataclass
class Headline:
    title: Annotated[str, UpperCase(on_fail="fix"), Length(max=60, on_fail="fix")]
    score: Annotated[float, ValidRange(min=0, max=10, on_fail="fix")]
    tags: list[Annotated[str, LowerCase(on_fail="filter")]]


@command(output=Headline)
def headline(story: str) -> str:
    return f"Write a headline, a 0-10 newsworthiness score and a few lower-case tags for: {story}"


result = headline.run("A library that turns prompts into typed functions ships its first release.")
print(result.value)
for report in result.reports:
    for check in report.results:
        print(f"  {check.path}: {check.criterion} -> {'ok' if check.passed else check.action}")
