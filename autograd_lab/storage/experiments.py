"""The storage experiments: for each way of copying a tensor, what PyTorch really did.

Every cell of a report comes from a run: a twin of the learner's tensor (same values, dtype, device,
layout) saves itself for backward in y = a * a, a copy b is taken, b is edited in place, and y's
backward runs; its gradient is compared with the one an untouched twin gives. Whether b shares the
version counter is seen by bumping it (under no_grad) and watching a's counter."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..format import message
from ..tensors import shares_storage as _same_block
from .copies import Copy, check, copies, edit_named, twin
from .subject import Subject

OUTCOMES = ("ok", "error", "silently wrong", "refused")


@dataclass(frozen=True)
class Row:
    """What happened to one copy b of a. None means the question does not apply (an array has no
    requires_grad) or could not be asked (the copy itself was refused)."""

    key: str  # the code after the tensor's name: "detach()", ".data", ...
    code: str  # the whole expression: "a.detach()"
    edit: str  # the in-place edit that was tried: "b.mul_(2)"
    shares_storage: bool | None
    shares_version: bool | None
    requires_grad: bool | None
    is_leaf: bool | None
    grad_fn: str | None
    in_graph: bool | None
    after_inplace: str  # one of OUTCOMES
    message: str | None = None  # PyTorch's words when something was refused
    grad_expected: torch.Tensor | None = field(default=None, repr=False)
    grad_got: torch.Tensor | None = field(default=None, repr=False)
    changed: tuple = ()  # which of "a", "b" the edit changed
    a_version: tuple = (0, 0)  # a's version counter before and after the edit
    warnings: tuple = ()  # what PyTorch warned while taking the copy
    is_array: bool = False

    def __repr__(self) -> str:
        return f"Row({self.code}: {self.after_inplace})"


def _take(copy: Copy, t: torch.Tensor):
    """Take the copy, keeping PyTorch's warnings for the row instead of letting them reach stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = copy.take(t)
    return b, tuple(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))


def _values(b):
    if isinstance(b, torch.Tensor):
        return b.detach().clone()
    return torch.from_numpy(np.array(b, copy=True))


def _same(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.shape == y.shape and bool(torch.allclose(x, y, rtol=0, atol=0, equal_nan=True))


def _ones_grad(out: torch.Tensor, t):
    """d(sum of out)/dt; t may be a gradient edge, taken before an edit could rebuild a view's node."""
    return torch.autograd.grad(out, t, torch.ones_like(out), allow_unused=True)[0]


def _edge(t: torch.Tensor):
    return torch.autograd.graph.get_gradient_edge(t)


def _facts(a: torch.Tensor, copy: Copy) -> dict:
    """The static columns: storage, requires_grad, leaf, grad_fn, and whether a gradient flows back."""
    t = twin(a)
    b, caught = _take(copy, t)
    if not isinstance(b, torch.Tensor):
        shared = bool(np.shares_memory(b, t.detach().numpy()))
        return dict(shares_storage=shared, requires_grad=None, is_leaf=None, grad_fn=None,
                    in_graph=False, warnings=caught, is_array=True)
    in_graph = b.requires_grad and _ones_grad(b, t) is not None
    return dict(shares_storage=_same_block(t, b), requires_grad=b.requires_grad, is_leaf=b.is_leaf,
                grad_fn=b.grad_fn.name() if b.grad_fn is not None else None, in_graph=in_graph,
                warnings=caught, is_array=False)


def _shares_version(a: torch.Tensor, copy: Copy) -> bool:
    """Bump b's counter with an edit that changes no value (no_grad lets even a leaf's view do it)."""
    t = twin(a)
    b, _ = _take(copy, t)
    before = t._version
    with torch.no_grad():
        if not isinstance(b, torch.Tensor):
            b += 0  # numpy keeps no counter: the write is the whole experiment
        else:
            try:
                b.add_(0)
            except RuntimeError:  # memory written twice (an expanded tensor): bump the counter alone
                torch.autograd.graph.increment_version(b)
    return t._version != before


def experiment(a: torch.Tensor, copy: Copy, edit: str = "mul_", name: str = "a") -> Row:
    """Run one row for real on twins of a: take the copy, edit it in place, run backward.

    >>> experiment(torch.tensor([1., 2., 3.]), copies(torch.ones(3))[4]).after_inplace
    'silently wrong'
    """
    chosen = edit_named(edit)
    head: dict[str, Any] = dict(key=copy.key, code=copy.code(name), edit=chosen.code(copy))
    with warnings.catch_warnings(), torch.enable_grad():
        warnings.simplefilter("ignore")  # PyTorch's warnings are recorded by _take, never printed
        try:
            facts = _facts(a, copy)
        except (RuntimeError, TypeError) as err:  # the copy itself cannot be taken
            return Row(**head, shares_storage=None, shares_version=None, requires_grad=None,
                       is_leaf=None, grad_fn=None, in_graph=None, after_inplace="refused",
                       message=message(err), is_array=copy.numpy)
        facts["shares_version"] = _shares_version(a, copy)
        clean = twin(a)
        expected = _ones_grad(clean * clean, _edge(clean))
        t = twin(a)
        y, edge = t * t, _edge(t)  # y saves t (twice) for backward
        b, _ = _take(copy, t)
        a_before, b_before, version = _values(t), _values(b), t._version
        try:
            chosen.apply(b)
        except (RuntimeError, TypeError) as err:
            return Row(**head, **facts, after_inplace="refused", message=message(err),
                       a_version=(version, t._version))
        changed = tuple(n for n, old, new in (("a", a_before, _values(t)), ("b", b_before, _values(b)))
                        if not _same(old, new))
        moved = (version, t._version)
        try:
            got = _ones_grad(y, edge)
        except RuntimeError as err:
            return Row(**head, **facts, after_inplace="error", message=message(err),
                       grad_expected=expected, changed=changed, a_version=moved)
    outcome = "ok" if _same(got, expected) else "silently wrong"
    return Row(**head, **facts, after_inplace=outcome, grad_expected=expected, grad_got=got,
               changed=changed, a_version=moved)


class StorageReport:
    """One row per way of copying a tensor; report["detach()"] is a Row. Its faces are in faces.py."""

    def __init__(self, subject: Subject, rows: list[Row], edit: str):
        self.subject, self.rows, self.edit = subject, rows, edit

    def __getitem__(self, key: str) -> Row:
        for row in self.rows:
            if row.key == key or row.code == key:
                return row
        raise KeyError(f"{key!r} (rows: {', '.join(self.keys())})")

    def keys(self) -> list[str]:
        return [row.key for row in self.rows]

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def view_key(self) -> str:
        """The key of the view row: 'view(-1)', or a slice when a has no flat view."""
        return next(r.key for r in self.rows if r.key.startswith(("view", "[")))

    def __repr__(self) -> str:
        return f"<StorageReport of {self.subject.name}: {len(self.rows)} copies, edit {self.edit}>"


def build_report(a, edit: str = "mul_", name: str = "a", names: Mapping | None = None) -> StorageReport:
    """Which copies of a share its storage and its version counter, which stay in the graph, and what
    an in-place edit of each copy does to the next backward. Runs on twins; a is never changed.
    edit is one of "mul_", "add_", "zero_", "numpy"; name is how texts call a; names (a namespace)
    lets the report mention the learner's other tensors that live in a's storage.

    >>> report = build_report(torch.tensor([1., 2., 3.], requires_grad=True))
    >>> report["detach()"].after_inplace, report[".data"].after_inplace
    ('error', 'silently wrong')
    """
    check(a, name)
    edit_named(edit)
    rows = [experiment(a, copy, edit, name) for copy in copies(a)]
    return StorageReport(Subject.of(a, name, names), rows, edit)
