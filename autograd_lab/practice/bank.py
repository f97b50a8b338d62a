"""The bank of exercises: their names and titles in course order, and exercise(name) to build one.
Each exercise is built on demand, so its expected answer is computed by torch at creation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import LabInputError
from . import calls, flow, powers
from .exercise import Exercise


@dataclass(frozen=True)
class Entry:
    """One line of the catalogue: the name to pass to exercise(), and a title."""

    name: str
    title: str
    build: Callable

    def __repr__(self) -> str:
        return f"{self.name}: {self.title}"


class Catalog(list):
    """The list of exercises; shows one per line."""

    def __repr__(self) -> str:
        width = max(len(e.name) for e in self)
        return "\n".join(f"{e.name.ljust(width)}  {e.title}" for e in self)

    def names(self) -> list[str]:
        return [e.name for e in self]


_BANK = Catalog([
    Entry("mean_square", "The gradient of a mean of squares", powers.mean_square),
    Entry("sum_square", "The gradient of a sum of squares", powers.sum_square),
    Entry("mean_cube", "The gradient of a mean of cubes", powers.mean_cube),
    Entry("weighted_mean_square", "Two leaves: a weighted mean of squares", calls.weighted_mean_square),
    Entry("mean_square_random", "A mean of squares with your own x", powers.mean_square_random),
    Entry("nonscalar_backward", "backward() on a non-scalar output", calls.nonscalar_backward),
    Entry("accumulate", "Two backward calls without zeroing", calls.accumulate),
    Entry("no_requires_grad", "Forgetting requires_grad=True", flow.no_requires_grad),
    Entry("where_backprop_stops", "Where backprop stops", flow.where_backprop_stops),
    Entry("gan_detach", "detach() in a GAN's discriminator step", flow.gan_detach),
    Entry("detach_vs_clone", "detach() versus clone()", flow.detach_vs_clone),
    Entry("symbolic_mean_square", "The gradient of a mean of squares, as a formula", powers.symbolic_mean_square),
])


def catalog() -> Catalog:
    """All exercises in course order, each with .name and .title.

    >>> catalog()[0].name
    'mean_square'
    """
    return Catalog(_BANK)


def exercises() -> Catalog:
    """All exercises in course order, each with .name and .title (the public name of catalog()).

    >>> exercises()[0].name
    'mean_square'
    """
    return catalog()


def exercise(name: str, seed: int | None = None) -> Exercise:
    """Build one exercise; seed picks the values of exercises with random inputs.

    >>> ex = exercise("mean_square")
    >>> ex.check([0.6667, 1.3333, 2.0]).status
    'correct'
    """
    for entry in _BANK:
        if entry.name == name:
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
                raise LabInputError(f"seed takes a whole number, got {seed!r}: e.g. exercise({name!r}, seed=7).")
            return entry.build(seed=seed)
    raise LabInputError(f"there is no exercise called {name!r}. Exercises: {', '.join(_BANK.names())}.")

