"""Where each exercise declares itself: its name, its title and the lesson that teaches it, written
once, next to the function that builds it. The bank is read off these registrations; its order is
the course's: by lesson, and inside a lesson in the order the lesson's notebook first uses its
exercises (lessons.toml, derived from the notebooks by scripts/derived.py)."""
from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..i18n import _

_REGISTERED: list[Entry] = []
#: lesson number -> its exercises in the order its notebook first uses them (made by scripts/derived.py)
LESSONS_FILE = Path(__file__).resolve().parent / "lessons.toml"


@dataclass(frozen=True)
class Entry:
    """One registered exercise: the name to pass to exercise(), its title, the lesson that teaches
    it and the function that builds it (called with seed=)."""

    name: str
    title: str
    lesson: int
    build: Callable

    def make(self, seed: int | None = None):
        """Build the exercise and give it the registered name and title."""
        ex = self.build(seed=seed)
        ex.name, ex.title = self.name, self.title
        return ex

    def __repr__(self) -> str:
        return f"{self.name}: {_(self.title)}"


def register(name: str, title: str, lesson: int) -> Callable:
    """Decorator: add the builder below to the bank under name and title, taught in lesson (its
    number: 4 for 04_mean_square_exercises.ipynb). The title is registered at import, so mark it
    with ``N_()``: it is translated where it is shown.

    >>> @register("doc_example", "An example", lesson=99)
    ... def doc_example(seed=None): ...
    >>> registered()[-1].name
    'doc_example'
    >>> _REGISTERED.pop().title
    'An example'
    """
    def add(build: Callable) -> Callable:
        if any(e.name == name for e in _REGISTERED):
            raise ValueError(f"two exercises are registered as {name!r}")
        _REGISTERED.append(Entry(name, title, lesson, build))
        return build
    return add


@functools.cache
def lesson_order() -> dict[str, int]:
    """Each exercise's place inside its lesson, as lessons.toml gives it."""
    table = tomllib.loads(LESSONS_FILE.read_text(encoding="utf-8"))
    return {name: k for names in table.get("lessons", {}).values() for k, name in enumerate(names)}


def registered() -> list[Entry]:
    """Every registration in course order: by lesson, then as the lesson first uses them (one
    lessons.toml does not list yet comes last in its lesson)."""
    order = lesson_order()
    return sorted(_REGISTERED, key=lambda e: (e.lesson, order.get(e.name, len(order)), e.name))
