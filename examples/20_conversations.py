"""Conversations: messages from a prompt function, history carried on, worked examples, deps."""

from dataclasses import dataclass

from alloy import Assistant, Context, System, User, command, tool


@dataclass
class Reply:
    answer: str
    confident: bool


# A prompt function may return a conversation: alloy's messages, or role dicts as SDKs take them.
@command(output=Reply)
def kettle_faq(question: str) -> list:
    return [
        System("You answer questions about the Acme kettle, briefly."),
        {"role": "user", "content": "Does it switch off by itself?"},
        {"role": "assistant", "content": '{"answer": "Yes, when it boils.", "confident": true}'},
        User(question),
    ]


print(kettle_faq("How long does it take to boil a litre?"))


# history= carries a conversation on (on any provider: switch ALLOY_MODEL between calls).
@command(output=Reply, system="You answer questions about the Acme kettle, briefly.")
def support(question: str) -> str:
    return question


first = support.run("How long does it take to boil a litre?")
# using() gives the call its history (and deps) while a type checker still checks the arguments.
second = support.using(history=first.messages).run("And half a litre?")
print(second.value, "| turns so far:", len(second.messages))
assert second.messages[:2] == first.messages and isinstance(second.messages[-1], Assistant)


# A stream has the call's Result once it has run to its end, so it carries on too.
@command(system="You answer questions about the Acme kettle, briefly.")
def chat(line: str) -> str:
    return line


chunks = chat.using(history=second.messages).stream("Thanks! Anything else?")
print("".join(chunks))
third = support.using(history=chunks.result.messages).run("And a full kettle?")
print(third.value, "| turns so far:", len(third.messages))
assert third.messages[: len(chunks.result.messages)] == chunks.result.messages


# Worked examples are sent before the conversation, checked against the output type now.
@command(output=bool, examples=[("The kettle leaks", True), ("Thanks, all good!", False)])
def needs_follow_up(message: str) -> str:
    return f"Does this support message need a follow-up? {message}"


print("follow up:", needs_follow_up("It beeps all night"))


# deps= reaches tools (and checks and rails) that declare a Context, never the model.
@dataclass
class Customer:
    name: str
    plan: str


@tool
def warranty(ctx: Context[Customer]) -> str:
    """The calling customer's warranty."""
    years = 3 if ctx.deps.plan == "premium" else 1
    return f"{ctx.deps.name} has {years} year(s) of warranty"


@command(tools=[warranty])
def warranty_answer(question: str) -> str:
    return question


print(warranty_answer.using(deps=Customer("Ada", "premium"))("Is my kettle still under warranty?"))
