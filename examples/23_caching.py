"""Response cache: a repeated request is answered from a SQLite file instead of the provider.

The provider emulator plays Anthropic here (the real SDK, no network). The second call makes no
request and costs nothing; its reply is still parsed and validated as `City`. A stream replays
as the same chunks. Replay mode answers only from the file, as a test suite run offline does.
"""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from alloy import CacheMissError, command, use_config
from alloy.testing.emulator import Emulator, ReplyJson, ReplyText


@dataclass
class City:
    name: str
    country: str


with tempfile.TemporaryDirectory() as folder, Emulator() as emu:
    os.environ.update(emu.env())  # every SDK in this process talks to the emulator
    cache = Path(folder) / "replies.sqlite"

    # temperature=0 makes the request repeatable: only such requests are cached by default.
    @command(output=City, model="anthropic:claude-sonnet-4-6", temperature=0)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    emu.push("anthropic", ReplyJson({"name": "Paris", "country": "France"}))
    with use_config(cache=str(cache)):  # or ALLOY_CACHE=replies.sqlite
        first = capital.run("France")
        second = capital.run("France")
    print(first.value, "| cached:", first.cached, "| tokens:", first.usage.total_tokens)
    print(second.value, "| cached:", second.cached, "| tokens:", second.usage.total_tokens)
    assert second.cached and second.value == first.value

    # A stream is stored with its chunks and replayed as the same chunks.
    @command(model="anthropic:claude-sonnet-4-6", temperature=0)
    def describe(city: str) -> str:
        return f"Describe {city} in one line."

    emu.split_streams(8)
    emu.push("anthropic", ReplyText("Paris sits on the Seine, famous for its cafés and museums."))
    with use_config(cache=str(cache)):
        streamed = list(describe.stream("Paris"))
        replayed = list(describe.stream("Paris"))
    print(len(replayed), "chunks replayed:", replayed[:3], "...")
    assert replayed == streamed

    # Replay mode: no provider call at all; a request the file does not hold is an error.
    with use_config(cache=str(cache), cache_mode="replay"):
        print("replayed:", capital("France"))
        try:
            capital("Peru")
        except CacheMissError as missing:
            print("not recorded:", missing.model, missing.key[:16] + "…")
