"""Every non-JSON extractor on real-looking replies: reasoning first, markdown decoration,
ambiguity (an error, never a guess), and the messages a failed extraction sends back."""

from __future__ import annotations

import pytest

from alloy import ConfigurationError
from alloy._output import InvalidOutput
from alloy.formats import BoundedText, Code, KeyValues, Task, TaskList, YesNo, code_blocks

# -- yes / no ---------------------------------------------------------------------------

REASONING = (
    "Rust checks every type at compile time and there is no implicit coercion between "
    "numeric types, so no casts happen behind your back.\n\n"
)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Yes", True),
        ("no.", False),
        ("**Yes**", True),
        ("YES!", True),
        ("  No  \n", False),
        (REASONING + "Yes", True),
        (REASONING + "**Answer:** yes", True),
        (REASONING + "Final answer: No", False),
        ("The answer is yes.", True),
        ("Yes, Rust is strictly typed.", True),
        ("No, it is not.", False),
        ("There are no implicit casts. Yes.", True),
        ("> yes", True),
        ("Nope.", False),
        ("Yep!", True),
        ("Absolutely not.", False),
        ("Not at all", False),
        ("Correct.", True),
        ("**Answer:** incorrect", False),
        ("y", True),
        ("False", False),
        ("Nah, it is dynamically typed.", False),
    ],
)
def test_yesno_reads_the_answer(reply: str, value: bool) -> None:
    assert YesNo().parse(reply) is value


@pytest.mark.parametrize(
    ("reply", "feedback"),
    [
        (
            "Yes and no.",
            "- the reply says both yes and no; answer with exactly one word: yes or no",
        ),
        ("Yes\nNo", "- the reply says both yes and no; answer with exactly one word: yes or no"),
        (
            "Answer: yes\nAnswer: no",
            "- the reply says both yes and no; answer with exactly one word: yes or no",
        ),
        (
            "I don't know.",
            "- the reply does not commit to yes or no (it says it cannot tell); answer with "
            "exactly one word: yes or no",
        ),
        (
            "I have no idea, honestly.",
            "- the reply does not commit to yes or no (it says it cannot tell); answer with "
            "exactly one word: yes or no",
        ),
        (
            "It can't be determined; I cannot tell.",
            "- the reply does not commit to yes or no (it says it cannot tell); answer with exactly one word: yes or no",
        ),
        ("Maybe.", "- the reply does not say yes or no; answer with exactly one word: yes or no"),
        (
            "Maybe yes, maybe no.",
            "- the reply says both yes and no; answer with exactly one word: yes or no",
        ),
        ("", "- the reply does not say yes or no; answer with exactly one word: yes or no"),
    ],
)
def test_yesno_refuses_to_guess(reply: str, feedback: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        YesNo().parse(reply)
    assert info.value.feedback == feedback


def test_i_dont_know_is_not_a_no() -> None:
    for reply in ("I don't know", "I do not know.", "Not sure", "dunno, I can't say"):
        with pytest.raises(InvalidOutput):
            YesNo().parse(reply)


# -- code -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "reply", "code"),
    [
        (Code(), "```python\nprint(1)\n```", "print(1)"),
        (
            Code(),
            "Here is the function:\n\n```\ndef f():\n    return 1\n```\n\nIt returns 1.",
            "def f():\n    return 1",
        ),
        (Code("python"), "```py\nx = 1\n```\nRun it with:\n```bash\npython x.py\n```", "x = 1"),
        (Code("python"), "```python\nx = 1\n```\nOutput:\n```\n1\n```", "x = 1"),
        (Code("python"), "```\nx = 2\n```", "x = 2"),
        (Code(), "   ```js\n   if (a) {\n       b()\n   }\n   ```", "if (a) {\n    b()\n}"),
        (Code(), "~~~\nuses ``` inside\n~~~", "uses ``` inside"),
        (Code(), "````markdown\n```python\nx\n```\n````", "```python\nx\n```"),
        (Code(), "```python\nunclosed = True", "unclosed = True"),
        (Code(), "Use ```inline``` code or this:\n```sql\nSELECT 1\n```", "SELECT 1"),
    ],
)
def test_code_takes_the_one_block(fmt: Code, reply: str, code: str) -> None:
    assert fmt.parse(reply) == code


@pytest.mark.parametrize(
    ("fmt", "reply", "feedback"),
    [
        (
            Code(),
            "```\na\n```\n\nor\n\n```\nb\n```",
            "- the reply has 2 code blocks; give exactly one",
        ),
        (
            Code("python"),
            "```python\na\n```\n```python\nb\n```",
            "- the reply has 2 python code blocks; give exactly one",
        ),
        (
            Code(),
            "print(1)",
            "- the reply has no fenced code block; put the code in one block opening with ``` and closing with ```",
        ),
        (
            Code("python"),
            "```bash\nls\n```",
            "- the reply has no fenced python code block (found only bash); put the code in one "
            "block opening with ```python and closing with ```",
        ),
        (Code(), "```\n\n```", "- the code block is empty; put the code in it"),
    ],
)
def test_code_errors(fmt: Code, reply: str, feedback: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        fmt.parse(reply)
    assert info.value.feedback == feedback


@pytest.mark.parametrize(
    ("text", "blocks"),
    [
        ("~~~ py `x`\ncode\n~~~", [("py", "code")]),  # a tilde info string may hold backticks
        ("``` py `x`\ncode\n```", [("", "")]),  # a backtick one may not: the last line opens
        ("~" * 10_000 + "`", [("`", "")]),
        ("```js\na\u2028b\fc\n```", [("js", "a\u2028b\fc")]),  # only \n, \r\n, \r end lines
        ("```\r\na\r\nb\r\n```\r\n", [("", "a\nb")]),
        ("    ```\nindented four: not a fence\n", []),
    ],
)
def test_code_blocks_follow_commonmark(text: str, blocks: list[tuple[str, str]]) -> None:
    assert code_blocks(text) == blocks


# -- task list --------------------------------------------------------------------------


def test_task_list_with_prose_continuations_and_numbering() -> None:
    reply = (
        "Here is the plan:\n\n"
        "- [ ] write the tests\n"
        "- [x] write the code\n"
        "  carefully, with types\n"
        "* [X] ship it\n"
        "1. [ ] celebrate\n"
        "   - [ ] with cake\n\n"
        "Let me know if you need more."
    )
    assert TaskList().parse(reply) == [
        Task("write the tests", False),
        Task("write the code carefully, with types", True),
        Task("ship it", True),
        Task("celebrate", False),
        Task("with cake", False),
    ]


def test_task_items_are_frozen() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        Task("a").done = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("reply", "feedback"),
    [
        (
            "- a\n- b",
            "- the reply has no markdown task list; write one item per line as `- [ ] task`",
        ),
        (
            "- [ ] a\n\nAlternatively:\n\n- [ ] b",
            "- the reply has 2 separate task lists; give exactly one list",
        ),
        (
            "-[ ] cramped",
            "- the reply has no markdown task list; write one item per line as `- [ ] task`",
        ),
    ],
)
def test_task_list_errors(reply: str, feedback: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        TaskList().parse(reply)
    assert info.value.feedback == feedback


# -- bounded text -----------------------------------------------------------------------


def test_bounded_text() -> None:
    assert BoundedText(min=3, max=5).parse("  abcd \n") == "abcd"
    assert BoundedText().parse("anything") == "anything"
    assert BoundedText().instructions is None
    assert BoundedText(min=100).instructions == "Answer in plain text of at least 100 characters."
    assert BoundedText(max=5).instructions == "Answer in plain text of at most 5 characters."
    with pytest.raises(InvalidOutput) as info:
        BoundedText(min=10, max=20).parse("short")
    assert info.value.feedback == (
        "- the answer is too short: it has 5 characters; it must have between 10 and 20 characters"
    )
    with pytest.raises(InvalidOutput, match="too long"):
        BoundedText(max=3).parse("four")
    with pytest.raises(ConfigurationError, match="greater than max"):
        BoundedText(min=5, max=1)


def test_bounded_text_stand_in_reply_for_an_absurd_min_stays_small() -> None:
    assert len(BoundedText(min=200).example()) >= 200
    assert len(BoundedText(min=10**20).example()) < 2_000_000  # not an OverflowError


# -- key: value -------------------------------------------------------------------------


def test_keyvalues_formatting_instructions_match_the_seed() -> None:
    assert KeyValues(["Thought", "Answer"]).formatting_instructions() == (
        "Strictly answer in the format:\nThought: <thought>\nAnswer: <answer>"
    )


def test_keyvalues_seed_examples() -> None:
    raw = "\nName: John Doe\nAge: 30\nLocation: New York\n"
    assert KeyValues(["Name", "Age", "Location"]).parse(raw) == {
        "name": "John Doe",
        "age": "30",
        "location": "New York",
    }
    assert KeyValues(["Thought", "Answer"]).parse("Thought: XX\nThought: YY\nAnswer: 42") == {
        "thought": "XX\nYY",
        "answer": "42",
    }


# The key spellings KeyValues reads (bold, bulleted, indented...) are cases in
# data/keyvalues_cases.json, with other parsers' key-value and ReAct cases (test_spec_examples).


def test_keyvalues_value_runs_to_the_next_key() -> None:
    reply = (
        "Thought: Let me write it.\n\nIt needs one line.\n\n"
        "Answer: Here is the function:\n\n"
        "```python\ndef f():\n    return 1  # Answer: not a key\n```\n\n"
        "    indented note\n\nHope this helps!\n"
    )
    assert KeyValues(["Thought", "Answer"]).parse(reply) == {
        "thought": "Let me write it.\n\nIt needs one line.",
        "answer": "Here is the function:\n\n```python\ndef f():\n    return 1  # Answer: not a "
        "key\n```\n\n    indented note\n\nHope this helps!",
    }


def test_keyvalues_value_keeps_its_indentation() -> None:
    reply = "Plan:\n    step one\n        detail\n    step two\nAnswer: 4"
    assert KeyValues(["Plan", "Answer"]).parse(reply)["plan"] == "step one\n    detail\nstep two"


def test_keyvalues_bulleted_values_end_at_the_next_item() -> None:
    reply = "- Name: Alice\n- Age: 30\n- Hobby: chess\n- Steps: go\n  - first\n  - second\n- Done"
    assert KeyValues(["Name", "Age", "Steps"]).parse(reply) == {
        "name": "Alice",
        "age": "30",
        "steps": "go\n- first\n- second",
    }


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        # A value written on its key line does not take a list that follows it.
        ("Thought: t\nAnswer: 42\n- a note\n- another", "42"),
        ("Thought: t\nAnswer: 42\n\n1. first\n2. second", "42"),
        ("  Thought: t\n  Answer: 42\n- a note", "42"),
        # A key that announces a list takes it: nothing after the colon, or text ending in one.
        ("Thought: t\nAnswer:\n- a\n- b", "- a\n- b"),
        ("Thought: t\nAnswer: the steps are:\n- a\n- b", "the steps are:\n- a\n- b"),
        # A list indented under the key line is the value's, whatever the key line holds.
        ("Thought: t\nAnswer: 42\n  - detail\n  - more", "42\n- detail\n- more"),
    ],
)
def test_keyvalues_a_list_after_a_one_line_value_is_not_swallowed(reply: str, answer: str) -> None:
    assert KeyValues(["Thought", "Answer"]).parse(reply) == {"thought": "t", "answer": answer}


def test_keyvalues_a_bulleted_key_after_a_plain_one_is_still_a_key() -> None:
    reply = "Answer: 42\n- Thought: because\n- Hobby: chess"
    assert KeyValues(["Thought", "Answer"]).parse(reply) == {"thought": "because", "answer": "42"}


def test_keyvalues_value_continues_to_the_end_of_its_paragraph() -> None:
    reply = "Thought: first line\nsecond line\nAnswer: x"
    assert KeyValues(["Thought", "Answer"]).parse(reply)["thought"] == "first line\nsecond line"
    assert KeyValues(["Final Answer", "Answer"]).parse("Answer: a\nFinal Answer: b") == {
        "final answer": "b",
        "answer": "a",
    }


def test_keyvalues_missing_key_is_an_error() -> None:
    with pytest.raises(InvalidOutput) as info:
        KeyValues(["Thought", "Answer"]).parse("Thought: hmm\nThoughts: still\nAnswer:")
    assert info.value.feedback == (
        "- the reply is missing Answer; write each on its own line as `Answer: <answer>`"
    )


def test_keyvalues_needs_distinct_keys() -> None:
    with pytest.raises(ConfigurationError):
        KeyValues([])
    with pytest.raises(ConfigurationError):
        KeyValues(["Answer", "answer"])
    with pytest.raises(ConfigurationError):
        KeyValues(["Key:"])


def test_every_format_has_instructions() -> None:
    for fmt in (YesNo(), Code(), Code("sql"), TaskList(), KeyValues(["A"])):
        assert fmt.instructions and fmt.instructions == fmt.formatting_instructions()
        assert fmt.schema is None
    assert "```sql" in Code("sql").instructions
