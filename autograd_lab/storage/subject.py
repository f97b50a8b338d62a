"""What the storage lab says about the learner's own tensor: read from its attributes only (nothing
is written), and which of the learner's other names live in the same storage."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import torch

from ..tensors import shares_storage
from .copies import wrap


@dataclass(frozen=True)
class Subject:
    """The learner's tensor as the report describes it.

    >>> Subject.of(torch.zeros(2), "w").describe()
    'w: a leaf tensor, of shape (2,), float32, that does not require grad; version counter at 0.'
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
    def of(cls, a: torch.Tensor, name: str = "a", names: Mapping | None = None) -> "Subject":
        base = a._base
        return cls(name, tuple(a.shape), str(a.dtype).replace("torch.", ""), str(a.device),
                   a.requires_grad, a.is_leaf, a.grad_fn.name() if a.grad_fn is not None else None,
                   a._version, a.storage_offset(), tuple(a.stride()),
                   tuple(base.shape) if base is not None else None, a.is_contiguous(),
                   relatives(a, name, names or {}))

    def describe(self) -> str:
        kind = "a leaf tensor" if self.is_leaf else f"a non-leaf tensor made by {self.grad_fn}"
        if self.base_shape is not None:
            kind += (f", a view onto a base of shape {self.base_shape} (at offset {self.offset}, "
                     f"stride {self.stride})")
        grad = "requires grad" if self.requires_grad else "does not require grad"
        device = "" if self.device == "cpu" else f" on {self.device}"
        return (f"{self.name}: {kind}, of shape {self.shape}, {self.dtype}{device}, that {grad}; "
                f"version counter at {self.version}.")

    def method(self, edit: str) -> str:
        n = wrap(self.name)
        return (f"Each row runs on a fresh twin of {self.name} (same values and layout): y = {n} * {n} "
                f"saves it for backward, the copy b is taken and edited with {edit}, then "
                f"y's backward runs. {self.name} itself is not touched.")

    def notes(self) -> list[str]:
        out = []
        if self.base_shape is not None:
            out.append(f"{self.name} is a view: every copy that shares storage shares its base's whole "
                       f"storage, not only the part {self.name} shows.")
        if not self.requires_grad:
            out.append(f"{self.name} does not require grad; the twins do, as a parameter would "
                       f"({self.name}.requires_grad_() makes yours one).")
        if self.device != "cpu":
            out.append(f"No detach().numpy() row: {self.name} lives on {self.device} and numpy arrays "
                       "live in CPU memory (.cpu() would copy it).")
        if not self.contiguous:
            out.append(f"{self.name} is not contiguous, so it has no flat view(-1); the view row is a slice.")
        out.extend(f"In your namespace, {other} {relation}." for other, relation in self.relatives)
        return out


def relatives(a: torch.Tensor, name: str, names: Mapping) -> tuple:
    """The learner's other tensors that live in a's storage, sorted by name (IPython's _ names skipped)."""
    found = []
    for other in sorted(k for k in names if isinstance(k, str) and not k.startswith("_")):
        value = names[other]
        if other == name or not isinstance(value, torch.Tensor) or value is a:
            continue
        if a._base is not None and value is a._base:
            found.append((other, f"is the base {name} is a view of"))
        elif value._base is not None and value._base is a:
            found.append((other, f"is a view of {name}"))
        elif shares_storage(value, a):
            found.append((other, f"shares storage with {name}"))
    return tuple(found)
