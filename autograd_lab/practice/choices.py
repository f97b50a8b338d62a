"""Answer forms that are not numbers: one letter among options, a set of names, and yes/no
answers to named questions. Typed text is accepted as is, so the widget's answer box works for
them without quotes."""
from __future__ import annotations

import re

from ..format import quote
from ..i18n import _
from ..languages import norm, truth_words
from .checking import WrongForm, safe_repr as _repr
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
            raise WrongForm(_("Answer with the letter of one option as a string, e.g. {example} "
                              "(options: {options}).").format(example=self.example, options=", ".join(self.options)))
        letter = answer.strip().strip("\"'()[]. ").lower()
        if letter in self.options:
            return letter
        for key, text in self.options.items():
            if answer.strip().lower() == text.lower():
                return key
        raise WrongForm(_("'{answer}' is not one of the options; answer with one letter among "
                          "{options}.").format(answer=quote(answer), options=", ".join(self.options)))

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
                raise WrongForm(_("Give the names as strings, e.g. {example}, not the tensors themselves: "
                                  "the check compares names.").format(example='{"name"}'))
        else:
            raise WrongForm(_("Answer with a set of names as strings, e.g. {example}, or an empty "
                              "set() for none.").format(example=self.example))
        names = set()
        for word in words:
            word = word.strip()
            if word in self.aliases:
                names.update(self.aliases[word])
            elif word in self.candidates:
                names.add(word)
            else:
                raise WrongForm(_("'{word}' is not one of the names in this exercise; choose among "
                                  "{names}.").format(word=quote(word), names=", ".join(self.candidates)))
        return frozenset(names)

    def explain(self, value, expected) -> str | None:
        if not value:
            return _("You answered that nothing receives a gradient; follow the graph back from the output once "
                     "more.")
        if value < expected:
            return _("Everything you named is right, but something is missing.")
        if value > expected:
            return _("Something you named should not be there.")
        return _("Some names are missing and some should not be there.")


def _truth(word) -> bool:
    if isinstance(word, bool):
        return word
    if isinstance(word, str):
        found = truth_words().get(norm(word))  # every language's words (languages.toml)
        if found is not None:
            return found
    if isinstance(word, int) and word in (0, 1):
        return bool(word)
    # Translators: True/False and "yes"/"no" are what the learner types: keep them as they are
    raise WrongForm(_('Cannot read {word} as yes or no; use True/False or "yes"/"no".').format(word=quote(_repr(word))))


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
                raise WrongForm(_("Give a dict with the keys {keys}.").format(keys=", ".join(self.keys)))
            answer = [answer[k] for k in self.keys]
        if not isinstance(answer, (tuple, list)) or len(answer) != len(self.keys):
            raise WrongForm(_("Give {n} yes/no answers, one for each of {keys}, e.g. {example}.").format(
                n=len(self.keys), keys=", ".join(self.keys), example=self.example))
        return tuple(_truth(w) for w in answer)
