"""Tables of sentences kept as data. A module whose sentences form a table (an exercise's intro,
question, hints, solution and diagnoses; the wrong-answer messages several exercises share; the
explainer's templates) keeps them in a TOML file beside it, ``<module>.toml``, and its code keeps
only the computing. A teacher or a translator reads and edits the words in one place, without the
code around them.

The strings are the English sentences of the catalogs: ``scripts/catalogs.py`` extracts every
string of these files (a comment ``# Translators: ...`` right above a key goes with it), so a
TOML file holds sentences only, never code. ``Words`` gives a sentence in the language of the
moment when it is read: ``words("intro")``; ``words["intro"]`` is the English itself, for a value
translated later where it is shown (as ``N_()`` marks it in code).

>>> from autograd_lab.i18n import language
>>> w = Words({"hi": "Correct.", "more": ["Correct.", "Close."], "sub": {"k": "Correct."}}, "example")
>>> language("en"), w("hi"), w.all("more"), w["sub"]("k"), w["hi"]
('en', 'Correct.', ['Correct.', 'Close.'], 'Correct.', 'Correct.')
>>> w("nope")
Traceback (most recent call last):
...
KeyError: "example has no sentence 'nope'"
"""
from __future__ import annotations

import functools
import importlib.util
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

from .i18n import _


class Words(Mapping):
    """One table of a sentences file: w(key) the sentence in the learner's language, w.all(key) a
    list of them, w[key] the English (or the sub-table, itself a Words)."""

    def __init__(self, table: dict, where: str):
        self._table = table
        self._where = where

    def __getitem__(self, key: str):
        try:
            value = self._table[key]
        except KeyError:
            raise KeyError(f"{self._where} has no sentence {key!r}") from None
        return Words(value, f"{self._where}.{key}") if isinstance(value, dict) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __call__(self, key: str) -> str:
        value = self[key]
        if not isinstance(value, str):
            raise TypeError(f"{self._where}.{key} is not one sentence")
        return _(value)

    def all(self, key: str) -> list[str]:
        """A list of sentences (hints, for example), each in the learner's language."""
        values = self[key]
        if not isinstance(values, list):
            raise TypeError(f"{self._where}.{key} is not a list of sentences")
        return [_(v) for v in values]

    def __repr__(self) -> str:
        return f"<Words of {self._where}: {len(self)} keys>"


def path_of(module: str) -> Path:
    """The sentences file of a module: its own file with .toml for .py."""
    spec = importlib.util.find_spec(module)
    return Path(spec.origin if spec and spec.origin else module).with_suffix(".toml")


@functools.cache
def words_of(module: str) -> Words:
    """The sentences of a module (pass ``__name__``), read once from ``<module>.toml``.

    >>> words_of("autograd_lab.practice.messages")("missing_mean").startswith("This is the gradient of the sum.")
    True
    """
    path = path_of(module)
    with path.open("rb") as f:
        return Words(tomllib.load(f), module.rsplit(".", 1)[-1])
