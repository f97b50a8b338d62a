"""What the lab knows of each language it speaks, read from ``locale/languages.toml`` (one table a
language): its own name, the words a learner may type in it, the font its figures need. The
sentences themselves are in the gettext catalogs (i18n.py); nothing else in the code names a
language.

>>> sorted(LANGUAGES)
['en', 'zh']
>>> truth_words()["是"], outcome_words()["报错"]
(True, 'error')
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "locale" / "languages.toml"


@dataclass(frozen=True)
class Font:
    """The font a language's figures draw with, behind DejaVu Sans."""

    family: str  # the name matplotlib knows it by
    files: str  # how its file names start, where matplotlib and fontconfig look
    install: str  # the command that installs it (shown when it is missing)


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    aliases: tuple[str, ...]
    yes: tuple[str, ...]
    no: tuple[str, ...]
    outcomes: dict[str, tuple[str, ...]]  # outcome (storage/experiments.py's OUTCOMES) -> words
    font: Font | None


def _read(text: str) -> dict[str, Language]:
    found = {}
    for code, t in tomllib.loads(text).items():
        found[code] = Language(
            code, t["name"], tuple(t.get("aliases", ())), tuple(t.get("yes", ())), tuple(t.get("no", ())),
            {k.replace("_", " "): tuple(v) for k, v in t.get("outcomes", {}).items()},
            Font(**t["font"]) if "font" in t else None)
    if "en" not in found:
        raise ValueError("languages.toml: English ([en]) is the language of the code and must be there")
    return found


LANGUAGES: dict[str, Language] = _read(TABLE.read_text(encoding="utf-8"))


def norm(word: str) -> str:
    """A typed word as the answer forms compare it: lower case, no spaces, quotes or underscores."""
    return re.sub(r"[\s\"'`_]", "", str(word)).lower()


@functools.cache
def truth_words() -> dict[str, bool]:
    """Every word a learner may type for yes (True) or no (False), in every language, normalised."""
    return {norm(w): value for lang in LANGUAGES.values()
            for value, words in ((True, lang.yes), (False, lang.no)) for w in words}


@functools.cache
def outcome_words() -> dict[str, str]:
    """Every word a learner may type for an outcome of an in-place edit, in every language
    (normalised), with the outcome it names."""
    return {norm(w): outcome for lang in LANGUAGES.values()
            for outcome, words in lang.outcomes.items() for w in words}
