"""Text commands stream: iterate over the answer as it arrives (sync or async)."""

from alloy import ask, command


@command
def story(topic: str) -> str:
    return f"Write a three-sentence story about {topic}."


for chunk in story.stream("a lighthouse"):
    print(chunk, end="", flush=True)
print()
print("".join(ask.stream("Say hello in French.")))
