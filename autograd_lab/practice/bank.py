"""The bank of exercises, read off the registrations of the topic modules, in course order; and
exercise(name) to build one. Each exercise is built on demand, so its expected answer is computed by
torch at creation. These return models; the public names of the package return their views
(practice/view.py)."""
from __future__ import annotations

from ..errors import LabInputError
from ..format import quote
from ..i18n import _
from .checking import safe_repr
from .exercise import Exercise
from .registry import Entry, registered
from .topics import calls, flow, powers  # noqa: F401  (importing them registers their exercises)
from .topics import own_backward  # noqa: F401  (the implement-a-backward exercises)
from .topics import freezing, hooks, vjp  # noqa: F401  (lessons 06 to 08)
from .topics import detach_code, engine, history, stops, storage_rows  # noqa: F401  (lessons 01, 02, 03, 05: order, stops, storage, history)


class Catalog(list):
    """The list of exercises (each an Entry with .name and .title), in course order."""

    def names(self) -> list[str]:
        return [e.name for e in self]

    def __repr__(self) -> str:
        return f"<{len(self)} exercises>"


def catalog() -> Catalog:
    """All exercises in course order, each with .name and .title.

    >>> catalog()[0].name
    'mean_square'
    """
    return Catalog(registered())


def exercises() -> Catalog:
    """All exercises in course order (the model behind the public exercises()).

    >>> exercises()[0].name
    'mean_square'
    """
    return catalog()


def entry(name: str) -> Entry:
    """The registration of one exercise; an unknown name is explained with the list of names."""
    for e in registered():
        if e.name == name:
            return e
    raise LabInputError(_("there is no exercise called {name}. Exercises: {names}.").format(
        name=quote(safe_repr(name)), names=", ".join(catalog().names())))


def exercise(name: str, seed: int | None = None) -> Exercise:
    """Build one exercise; seed picks the values of exercises with random inputs.

    >>> ex = exercise("mean_square")
    >>> ex.check([0.6667, 1.3333, 2.0]).status
    'correct'
    """
    found = entry(name)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise LabInputError(_("seed takes a whole number, got {seed}: e.g. {example}.").format(
            seed=quote(safe_repr(seed)), example=f"exercise({name!r}, seed=7)"))
    if seed is not None and not 0 <= seed < 2**32:
        raise LabInputError(_("seed takes a whole number from 0 to {top}, got {seed}: e.g. {example}.").format(
            top=2**32 - 1, seed=quote(safe_repr(seed)), example=f"exercise({name!r}, seed=7)"))
    return found.make(seed=seed)
