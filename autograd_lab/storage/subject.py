"""What the storage lab says about the learner's own tensor: read from its attributes only (nothing
is written), and which of the learner's other names live in the same storage."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping

import torch

from ..names import learner_tensors
from ..tensors import shares_storage


@dataclass(frozen=True)
class Subject:
    """The learner's tensor as the report describes it (the words are in faces.py).

    >>> Subject.of(torch.zeros(2), "w").shape
    (2,)
    """

    name: str
    shape: tuple
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    version: int
    offset: int
    stride: tuple
    base_shape: tuple | None  # the base's shape when the tensor is a view
    contiguous: bool
    relations: tuple = ()  # ("b", "shares"), ...: one of RELATIONS for each of the learner's other names

    @property
    def relatives(self) -> tuple:
        """The learner's other names in a's storage, with how they relate, in English:
        ("b", "shares storage with a"), ... (faces.py words them in the current language)."""
        return tuple((other, RELATIONS[kind].format(name=self.name)) for other, kind in self.relations)

    @classmethod
    def of(cls, a: torch.Tensor, name: str = "a", names: Mapping | None = None) -> Subject:
        base = a._base
        return cls(name, tuple(a.shape), str(a.dtype).replace("torch.", ""), str(a.device),
                   a.requires_grad, a.is_leaf, a.grad_fn.name() if a.grad_fn is not None else None,
                   a._version, int(a.storage_offset()), tuple(a.stride()),
                   tuple(base.shape) if base is not None else None, a.is_contiguous(),
                   relatives(a, name, names or {}))


# How another of the learner's tensors relates to a: "base" (a is a view of it), "view" (it is a
# view of a), "shares" (the same storage otherwise). The English data of Subject.relatives.
RELATIONS = {"base": "is the base {name} is a view of", "view": "is a view of {name}",
             "shares": "shares storage with {name}"}


def relatives(a: torch.Tensor, name: str, names: Mapping) -> tuple:
    """The learner's other tensors that live in a's storage, with their relation (a key of
    RELATIONS), sorted by name (IPython's _ names skipped)."""
    found = []
    for other, value in sorted(learner_tensors(names), key=lambda item: item[0]):
        if other == name or value is a:
            continue
        if a._base is not None and value is a._base:
            found.append((other, "base"))
        elif value._base is not None and value._base is a:
            found.append((other, "view"))
        elif shares_storage(value, a):
            found.append((other, "shares"))
    return tuple(found)
