"""Answer forms that are not numbers: one letter among options, a set of names, and yes/no
answers to named questions. Typed text is accepted as is, so the widget's answer box works for
them without quotes."""
from __future__ import annotations

import re

from .checking import WrongForm
from .forms import Form

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class ChoiceForm(Form):
    """One option by its letter ("c", "C", "(c)" all work)."""

    takes_text = True

    def __init__(self, options: dict[str, str]):
        self.options = options
        self.example = 'ex.check("a")'

    def read(self, answer):
        if not isinstance(answer, str):
            raise WrongForm(f"Answer with the letter of one option as a string, e.g. {self.example} "
                            f"(options: {', '.join(self.options)}).")
        letter = answer.strip().strip("\"'()[]. ").lower()
        if letter in self.options:
            return letter
        for key, text in self.options.items():
            if answer.strip().lower() == text.lower():
                return key
        raise WrongForm(f"'{answer}' is not one of the options; answer with one letter among "
                        f"{', '.join(self.options)}.")

    def describe(self) -> str:
        return "\n".join(f"  ({key}) {text}" for key, text in self.options.items())


class NamesForm(Form):
    """A set of names among candidates: {"a", "b"}, ["a"], "a, b", or "" / set() for none.
    aliases let one word stand for several names (the module "G" for all of G's parameters)."""

    takes_text = True

    def __init__(self, candidates: list[str], aliases: dict[str, list[str]] | None = None):
        self.candidates = candidates
        self.aliases = aliases or {}
        self.example = 'ex.check({"name", ...})'

    def read(self, answer):
        if answer is None:
            return frozenset()
        if isinstance(answer, str):
            words = _NAME.findall(answer)
            if [w.lower() for w in words] in (["none"], ["set"], ["nothing"]):
                words = []
        elif isinstance(answer, (set, frozenset, list, tuple)):
            words = list(answer)
            if not all(isinstance(w, str) for w in words):
                raise WrongForm("Give the names as strings, e.g. {\"name\"}, not the tensors themselves: "
                                "the check compares names.")
        else:
            raise WrongForm(f"Answer with a set of names as strings, e.g. {self.example}, or an empty "
                            "set() for none.")
        names = set()
        for word in words:
            word = word.strip()
            if word in self.aliases:
                names.update(self.aliases[word])
            elif word in self.candidates:
                names.add(word)
            else:
                raise WrongForm(f"'{word}' is not one of the names in this exercise; choose among "
                                f"{', '.join(self.candidates)}.")
        return frozenset(names)

    def explain(self, value, expected) -> str | None:
        if not value:
            return "You answered that nothing receives a gradient; follow the graph back from the output once more."
        if value < expected:
            return "Everything you named is right, but something is missing."
        if value > expected:
            return "Something you named should not be there."
        return "Some names are missing and some should not be there."


def _truth(word) -> bool:
    if isinstance(word, bool):
        return word
    if isinstance(word, str):
        text = word.strip().strip("\"'").lower()
        if text in ("yes", "y", "true", "t", "1"):
            return True
        if text in ("no", "n", "false", "f", "0"):
            return False
    if isinstance(word, int) and word in (0, 1):
        return bool(word)
    raise WrongForm(f"Cannot read {word!r} as yes or no; use True/False or \"yes\"/\"no\".")


class FlagsForm(Form):
    """Yes/no answers to named questions: (True, False), {"clone": True, ...} or "yes, no"."""

    takes_text = True

    def __init__(self, keys: list[str]):
        self.keys = keys
        self.example = "ex.check((" + ", ".join("..." for _ in keys) + "))"

    def read(self, answer):
        if isinstance(answer, str):
            answer = [w for w in re.split(r"[\s,()\[\]]+", answer) if w]
        if isinstance(answer, dict):
            if set(answer) != set(self.keys):
                raise WrongForm(f"Give a dict with the keys {', '.join(self.keys)}.")
            answer = [answer[k] for k in self.keys]
        if not isinstance(answer, (tuple, list)) or len(answer) != len(self.keys):
            raise WrongForm(f"Give {len(self.keys)} yes/no answers, one for each of "
                            f"{', '.join(self.keys)}, e.g. {self.example}.")
        return tuple(_truth(w) for w in answer)
