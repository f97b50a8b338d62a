"""Where each exercise declares itself: its name and title, written once, next to the function
that builds it. The bank is read off these registrations."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from ..i18n import _

_REGISTERED: list[Entry] = []


@dataclass(frozen=True)
class Entry:
    """One registered exercise: the name to pass to exercise(), its title, its place in the course
    and the function that builds it (called with seed=)."""

    name: str
    title: str
    place: int
    build: Callable

    def make(self, seed: int | None = None):
        """Build the exercise and give it the registered name and title."""
        ex = self.build(seed=seed)
        ex.name, ex.title = self.name, self.title
        return ex

    def __repr__(self) -> str:
        return f"{self.name}: {_(self.title)}"


def register(name: str, title: str, place: int) -> Callable:
    """Decorator: add the builder below to the bank under name and title, at place in course order.
    The title is registered at import, so mark it with ``N_()``: it is translated where it is shown.

    >>> @register("doc_example", "An example", place=10_000)
    ... def doc_example(seed=None): ...
    >>> registered()[-1].name
    'doc_example'
    >>> _REGISTERED.pop().title
    'An example'
    """
    def add(build: Callable) -> Callable:
        if any(e.name == name for e in _REGISTERED):
            raise ValueError(f"two exercises are registered as {name!r}")
        _REGISTERED.append(Entry(name, title, place, build))
        return build
    return add


def registered() -> list[Entry]:
    """Every registration in course order."""
    return sorted(_REGISTERED, key=lambda e: e.place)
