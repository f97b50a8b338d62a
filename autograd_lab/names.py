"""The learner's names for values: one place for reading a namespace the way a learner sees it.

IPython keeps its output history in the namespace too (``_``, ``_1``, ``__``), and modules keep
private helpers under ``_`` names: neither is a name the learner chose, so every room filters them
here and nowhere else. A name or an expression can be of any length: label() is how every face shows
one (shortened for display only)."""
from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from .format import quote

#: characters of a learner's name or expression a label shows: a longer one is shortened for display
#: only (head and tail around its length), the data keeps it whole
LABEL = 60


def label(text: object, limit: int = LABEL) -> str:
    """A learner's name or expression as a label, a title or a table shows it: whole when short,
    else its head and tail around its length (format.quote).

    >>> label("z")
    'z'
    >>> len(label("x" * 10**6)) <= LABEL
    True
    """
    return quote(text, limit)


def is_learner_name(name: object) -> bool:
    """False for IPython's output history and private names.

    >>> is_learner_name("x"), is_learner_name("_1")
    (True, False)
    """
    return isinstance(name, str) and not name.startswith("_")


def learner_items(names: Mapping[Any, Any] | None) -> Iterator[tuple[str, object]]:
    """The (name, value) pairs of names that the learner chose, in the namespace's order.

    >>> list(learner_items({"x": 1, "_": 2}))
    [('x', 1)]
    """
    for name, value in list((names or {}).items()):
        if is_learner_name(name):
            yield name, value


def learner_tensors(names: Mapping[Any, Any] | None) -> Iterator[tuple[str, torch.Tensor]]:
    """The learner's names that hold tensors.

    >>> [k for k, _ in learner_tensors({"x": torch.ones(1), "n": 3})]
    ['x']
    """
    for name, value in learner_items(names):
        if isinstance(value, torch.Tensor):
            yield name, value


def name_in(names: Mapping[Any, Any] | None, value: object) -> str | None:
    """The learner's name for this very object, if they gave it one.

    >>> t = torch.ones(1)
    >>> name_in({"_": t, "t": t}, t)
    't'
    """
    for name, candidate in learner_items(names):
        if candidate is value:
            return name
    return None


def caller_names(depth: int = 2) -> dict[str, Any]:
    """The variables of the function that called our caller: the learner's names by default
    (locals shadow globals, as in Python's own lookup)."""
    frame = sys._getframe(depth)
    return {**frame.f_globals, **frame.f_locals}


def learner_labels(names: Mapping[Any, Any] | None) -> tuple[dict[Any, str], dict[int, str]]:
    """The learner's names for graph nodes (by grad_fn) and for leaves (by tensor identity);
    a module's parameters are named module.weight, module.0.bias, ...

    >>> w = torch.ones(1, requires_grad=True)
    >>> learner_labels({"w": w, "y": w * 2})[1] == {id(w): "w"}
    True
    """
    node_labels: dict[Any, str] = {}
    leaf_labels: dict[int, str] = {}

    def add(name: str, value: object) -> None:
        if not isinstance(value, torch.Tensor):
            return
        if value.grad_fn is not None:
            node_labels.setdefault(value.grad_fn, name)
        elif value.requires_grad:
            leaf_labels.setdefault(id(value), name)

    for name, value in learner_items(names):
        if isinstance(value, torch.nn.Module):
            for pname, p in value.named_parameters():
                add(f"{name}.{pname}", p)
        else:
            add(name, value)
    return node_labels, leaf_labels
