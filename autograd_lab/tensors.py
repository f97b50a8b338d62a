"""Small helpers about tensors that every room needs: keep a value whole or as a summary, and
decide whether two tensors are the same view of the same memory (without ever showing an address)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

# A trace keeps gradients up to this many elements whole; bigger ones become a Summary, so the
# memory a recording holds stays bounded on big models.
KEEP_WHOLE = 4096


@dataclass(frozen=True)
class Summary:
    """What is left of a big tensor: enough to recognise it, not the values.

    >>> Summary.of(torch.zeros(100, 100)).shape
    (100, 100)
    """

    shape: tuple[int, ...]
    dtype: torch.dtype
    device: str
    norm: float
    first: tuple[float, ...]

    @classmethod
    def of(cls, t: torch.Tensor, count: int = 4) -> Summary:
        # A recording summarises every big gradient inside the engine's hooks, so this does as few
        # tensor operations as it can: each costs a few microseconds, more than the arithmetic.
        if t.requires_grad:
            t = t.detach()
        device = "cpu" if t.is_cpu else str(t.device)
        if t.layout is not torch.strided:  # a sparse gradient (Embedding(sparse=True)): its stored values
            values = (t.coalesce() if t.layout is torch.sparse_coo else t).values()
            norm = float(torch.linalg.vector_norm(values)) if values.numel() and values.is_floating_point() else 0.0
            return cls(tuple(t.shape), t.dtype, device, norm, ())
        floating, complex_ = t.is_floating_point(), t.is_complex()
        # no reshape of the whole tensor: that would copy every non-contiguous gradient
        norm = float(torch.linalg.vector_norm(t)) if (floating or complex_) and t.numel() else 0.0
        shape = tuple(t.shape)
        if complex_:
            first: tuple[float, ...] = ()
        elif shape and shape[-1] >= count and t.numel() and type(t) is torch.Tensor \
                and t.layout is torch.strided and not t.is_neg():
            # the first values of the first row, t[0, ..., 0, :count], read in place: one view
            first = tuple(t.as_strided((count,), (t.stride(-1),)).tolist())
            if not floating:
                first = tuple(map(float, first))
        else:
            row = t[(0,) * (t.dim() - 1)] if t.dim() > 1 and t.shape[-1] >= count else t.reshape(-1)
            first = tuple(float(v) for v in row[:count].tolist())
        return cls(shape, t.dtype, device, norm, first)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


def keep(value: Any, limit: int | None = KEEP_WHOLE) -> Any:
    """A value as the lab stores it: small tensors by reference, big ones as a Summary
    (limit None keeps every tensor whole)."""
    if isinstance(value, torch.Tensor):
        return value if limit is None or value.numel() <= limit else Summary.of(value)
    return value


def same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when a and b are the same window onto the same storage (same object, or an alias)."""
    if a is b:
        return True
    if a.device != b.device or a.dtype != b.dtype or a.shape != b.shape:
        return False
    try:
        return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                and a.storage_offset() == b.storage_offset() and a.stride() == b.stride())
    except (RuntimeError, NotImplementedError):  # tensors without storage (meta, some subclasses)
        return False


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when a and b live in the same block of memory, whatever part of it each one shows."""
    try:
        return a.device == b.device and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return False


# PyTorch prints 4 decimals, so a value copied from its output may be off by half a unit in the
# 4th decimal: exercises and the stepper's predictions both accept exactly that much.
PRINTED = 5e-5


def tolerance(expected: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """How far each entry may be: 4 printed decimals, plus the rounding of the answer's dtype."""
    eps = torch.finfo(dtype).eps if dtype.is_floating_point else torch.finfo(torch.float64).eps
    return PRINTED * (1 + 1e-9) + (eps / 2) * expected.double().abs()


def close(value: torch.Tensor, expected: torch.Tensor) -> bool:
    """Same shape and every entry within the printed tolerance.

    >>> close(torch.tensor([0.6667]), torch.tensor([2 / 3], dtype=torch.double))
    True
    """
    if tuple(value.shape) != tuple(expected.shape):
        return False
    gap = (value.double() - expected.double()).abs()
    return bool((gap <= tolerance(expected, value.dtype)).all())
