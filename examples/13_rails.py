"""Rails pass, rewrite or block: mask PII in prompts, block words, check the output."""

from alloy import RailBlocked, command
from alloy.rails import Block, blocklist, mask_pii, output_rail


@output_rail
def not_empty(text: str) -> Block | None:
    return Block("empty answer") if not text.strip() else None


@command(rails=[*mask_pii(), *blocklist(words=["password"]), not_empty])
def support(message: str) -> str:
    return f"Answer this customer message: {message}"


sent = support.run("My email is ada@example.com and my card is 4111 1111 1111 1111. Can you help?")
print(sent.value)
print("what the model saw:", sent.transcript.messages[0])
try:
    support("What is the admin password?")
except RailBlocked as error:
    print(f"RailBlocked: rail={error.rail} reason={error.reason}")
