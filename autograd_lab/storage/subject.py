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
    relatives: tuple = ()  # ("b", "shares storage with a"), ...

    @classmethod
    def of(cls, a: torch.Tensor, name: str = "a", names: Mapping | None = None) -> Subject:
        base = a._base
        return cls(name, tuple(a.shape), str(a.dtype).replace("torch.", ""), str(a.device),
                   a.requires_grad, a.is_leaf, a.grad_fn.name() if a.grad_fn is not None else None,
                   a._version, int(a.storage_offset()), tuple(a.stride()),
                   tuple(base.shape) if base is not None else None, a.is_contiguous(),
                   relatives(a, name, names or {}))


def relatives(a: torch.Tensor, name: str, names: Mapping) -> tuple:
    """The learner's other tensors that live in a's storage, sorted by name (IPython's _ names skipped)."""
    found = []
    for other, value in sorted(learner_tensors(names), key=lambda item: item[0]):
        if other == name or value is a:
            continue
        if a._base is not None and value is a._base:
            found.append((other, f"is the base {name} is a view of"))
        elif value._base is not None and value._base is a:
            found.append((other, f"is a view of {name}"))
        elif shares_storage(value, a):
            found.append((other, f"shares storage with {name}"))
    return tuple(found)
