"""Every command also runs async: `await cmd.acall(...)`, or an `async def` prompt function."""

import asyncio

from alloy import command


@command(output=int)
def count_words(text: str) -> str:
    return f"How many words are in: {text!r}"


@command(output=bool)
async def is_question(text: str) -> str:
    await asyncio.sleep(0)  # e.g. fetch context before building the prompt
    return f"Is this a question? {text}"


async def main() -> None:
    counts = await asyncio.gather(*(count_words.acall(t) for t in ["a b c", "hello world", "one"]))
    print(counts)
    print(await is_question("Is it raining?"))


asyncio.run(main())
