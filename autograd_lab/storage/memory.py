"""The memory behind a and all its copies at once, as the picture draws it: storage blocks named S0,
S1, ... in the order they are met (never addresses), each tensor as a window onto one block
(offset, shape, strides), and version counters named V0 (a's), V1, ...

It is read from one real twin of a with every copy taken from it; optionally one copy is then edited
in place, so the picture shows the memory after the edit."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch

from ..format import fmt, message
from .copies import code_of, copies, edit_named, twin

SHOWN = 12  # cells drawn per block


@dataclass(frozen=True)
class Block:
    name: str  # "S0"
    values: tuple  # the first SHOWN values, as text
    size: int  # elements in the whole storage


@dataclass(frozen=True)
class Window:
    label: str  # "a", "a.detach()"
    block: str
    offset: int
    shape: tuple
    stride: tuple
    cells: tuple  # storage indices (below SHOWN) this window shows
    counter: str | None  # "V0"; None for a numpy array (it has no version counter)
    version: int | None
    requires_grad: bool
    in_graph: bool
    values: str = ""  # what the tensor shows, as text




@dataclass(frozen=True)
class Memory:
    blocks: tuple
    windows: tuple
    edited: str | None = None  # "a.detach(): b.mul_(2)" when an edit was applied
    refused: str | None = None  # PyTorch's message when that edit was refused

    def window(self, label: str) -> Window:
        return next(w for w in self.windows if w.label == label)


def memory(a: torch.Tensor, report, edit_key: str | None = None, edit: str = "mul_") -> Memory:
    """The memory picture's content for a report (its rows say which copies share a's counter).

    >>> from autograd_lab.storage.experiments import build_report as compare_storage
    >>> x = torch.tensor([1., 2.])
    >>> [w.block for w in memory(x, compare_storage(x)).windows][:3]
    ['S0', 'S0', 'S1']
    """
    name = report.subject.name
    t = twin(a)
    taken = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.tensor(a) warns; the report explains it
        for copy in copies(a):
            try:
                taken.append((copy, copy.take(t)))
            except (RuntimeError, TypeError):
                continue
    edited = refused = None
    if edit_key is not None:
        chosen = edit_named(edit)
        found = next(((c, b) for c, b in taken if c.key == edit_key), None)
        if found is not None:
            copy, b = found
            edited = f"{code_of(copy.key, name, shown=True)}: {chosen.code(copy)}"  # words, shortened
            try:
                chosen.apply(b)
            except (RuntimeError, TypeError) as err:
                refused = message(err)
    blocks: dict = {}
    windows = [_window(name, t, blocks, "V0", True, True)]
    extra = 1
    for copy, b in taken:
        row = report[copy.key]
        if isinstance(b, torch.Tensor):
            counter = "V0" if row.shares_version else f"V{extra}"
            extra += 0 if row.shares_version else 1
        else:
            counter = None
        windows.append(_window(copy.code(name), b, blocks, counter, bool(row.requires_grad),
                               bool(row.in_graph)))
    return Memory(tuple(v for _, v in sorted(blocks.values(), key=lambda kv: kv[1].name)),
                  tuple(windows), edited, refused)


def _window(label, b, blocks: dict, counter, requires_grad, in_graph) -> Window:
    if isinstance(b, torch.Tensor):
        storage, size = b.untyped_storage(), b.untyped_storage().nbytes() // b.element_size()
        start, offset = storage.data_ptr(), int(b.storage_offset())
        shape, stride, version, dtype = tuple(b.shape), tuple(b.stride()), b._version, b.dtype
        flat = torch.empty(0, dtype=dtype, device=b.device)
        with torch.no_grad():
            flat.set_(storage, 0, (size,), (1,))
    else:  # a numpy array: find the block it lies in by where its data starts
        pointer = b.__array_interface__["data"][0]
        start, block = next(((s, blk) for s, (end, blk) in blocks.items() if s <= pointer < end),
                            (pointer, None))
        offset = int((pointer - start) // b.itemsize)
        shape, stride, version = tuple(b.shape), tuple(s // b.itemsize for s in b.strides), None
        flat, size = (None, block.size) if block else (torch.from_numpy(b).reshape(-1), b.size)  # type: ignore[assignment]
    if start not in blocks and flat is not None:  # a block met for the first time (flat is its data)
        values = tuple(fmt(v) for v in flat[:SHOWN].detach().cpu())
        blocks[start] = (start + size * flat.element_size(),
                         Block(f"S{len(blocks)}", values, size))
    block = blocks[start][1]
    return Window(label, block.name, offset, shape, stride, _cells(offset, shape, stride, size),
                  counter, version, requires_grad, in_graph, fmt(b))


def _cells(offset: int, shape: tuple, stride: tuple, size: int) -> tuple:
    """The storage indices a window shows, among the first SHOWN cells."""
    if size == 0 or 0 in shape:
        return ()
    index = torch.arange(size).as_strided(shape, stride, offset).reshape(-1)
    return tuple(sorted({int(i) for i in index.tolist() if i < SHOWN}))
