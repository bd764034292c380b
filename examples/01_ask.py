"""The smallest call: ask a one-off question and get text back."""

from alloy import ask

print(ask("In one sentence, what is a typed AI function?"))
