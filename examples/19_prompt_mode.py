"""For models without native structured output, the schema goes into the prompt and JSON is extracted."""

from dataclasses import dataclass

from alloy import command


@dataclass
class Contact:
    name: str
    email: str


@command(output=Contact, output_mode="prompt")
def contact(text: str) -> str:
    return f"Extract the contact from: {text}"


print(contact("Write to Ada Lovelace at ada@example.com"))
