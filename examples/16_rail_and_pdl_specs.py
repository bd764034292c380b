"""Output specs written for other tools: a Guardrails RAIL <output> element and a ragit PDL schema."""

from alloy import command
from alloy.compat import load_pdl, load_rail

RAIL = """
<rail version="0.1">
    <output>
        <string name="text" description="The generated text" validators="upper-case" on-fail-upper-case="fix"/>
        <float name="score" description="The score of the generated text" validators="min-val: 0" on-fail-min-val="fix"/>
    </output>
</rail>
"""


@command(output=load_rail(RAIL))
def review(product: str) -> str:
    return f"Review {product}."


@command(output=load_pdl("[{name: str, age: int}]{min: 2, max: 2}"))
def two_people() -> str:
    return "Invent two people with their ages."


print(review("a typed AI library"))
print(two_people())
