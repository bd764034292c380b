"""Outputs that are not JSON: yes/no, a code block, a task list, "Key: value" lines, bounded text."""

from alloy import BoundedText, Code, KeyValues, TaskList, YesNo, command


@command(output=YesNo())
def is_strictly_typed(language: str) -> str:
    return f"Is {language} a strictly typed programming language?"


@command(output=Code(language="python"))
def write_function(task: str) -> str:
    return f"Write a Python function that {task}."


@command(output=TaskList())
def plan(goal: str) -> str:
    return f"Write a short markdown task list to {goal}."


@command(output=KeyValues(["Thought", "Answer"]))
def think(question: str) -> str:
    return f"{question}\n\n{KeyValues(['Thought', 'Answer']).formatting_instructions()}"


@command(output=BoundedText(min=10, max=80))
def tagline(product: str) -> str:
    return f"A tagline for {product}."


print(is_strictly_typed("Rust"))
print(write_function("adds two numbers"))
print(plan("ship a release"))
print(think("What is 6 x 7?"))
print(tagline("alloy"))
