"""Failures are specific: ConfigurationError for your mistakes, CommandError (with context) for failed calls."""

from alloy import CommandError, ConfigurationError, ParseError, command
from alloy.testing import override_model, script

try:

    @command(output=dict)
    def loose() -> str:
        return "anything"

except ConfigurationError as error:
    print("ConfigurationError:", error)


@command(output=float)
def extract_price(text: str) -> str:
    return f"Extract the price from: {text}"


# A scripted model that never answers with a number: alloy re-asks once, then raises.
never_a_number = script(
    '{"value": "Please provide the text"}', '{"value": "I still need the text"}'
)
with override_model(never_a_number):
    try:
        extract_price("no price here")
    except ParseError as error:
        print(f"{type(error).__name__}: {error}")
        print("attempts:", error.attempts, "| expected:", error.expected)
        assert isinstance(error, CommandError)
