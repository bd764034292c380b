"""Settings come from ALLOY_* variables, configure(), use_config(), the decorator, or with_options()."""

from alloy import command, configure, use_config
from alloy._config import resolve

configure(max_tokens=400)  # process-wide default, above the environment


@command(output=str, temperature=0.2)
def title(text: str) -> str:
    return f"Give a short title for: {text}"


with use_config(system="Answer in English."):
    print(title("A guide to typed AI functions"))
    print(title.with_options(temperature=0.0)("Notes on strict JSON Schema"))
    print(
        "effective:",
        {k: v for k, v in vars(resolve({}, {})).items() if k in ("max_tokens", "system")},
    )
