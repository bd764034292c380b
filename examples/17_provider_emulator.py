"""Test against the real provider SDKs without a network: alloy.testing.emulator serves their APIs locally."""

from dataclasses import dataclass

from alloy import RateLimitError, command
from alloy.testing.emulator import Emulator, RateLimited, ReplyJson


@dataclass
class City:
    name: str
    country: str


with Emulator() as emu:

    @command(
        output=City, model="openai:gpt-4o-mini", api_key="test-key", base_url=emu.openai_base_url
    )
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    emu.push("openai", RateLimited(), ReplyJson({"name": "Paris", "country": "France"}))
    print(capital("France"))  # the 429 is retried with backoff, then the real SDK parses the answer
    request = emu.last_request("openai")
    print(request.path, "strict schema sent:", request.body["text"]["format"]["strict"])

    emu.push("openai", *[RateLimited()] * 3)
    try:
        capital.with_options(retries=2)("Spain")
    except RateLimitError as error:
        print(f"{type(error).__name__} after {error.attempts} attempts")
