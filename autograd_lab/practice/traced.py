"""Whether an answer is autograd's own result rather than the learner's prediction: a tensor (or a
numpy array) that shares memory with a gradient autograd computed. The gradients looked at are the
exercise's expected values and the ``.grad`` of the tensors and modules in the namespaces of the
code that called the check (a notebook cell's, a test's): only read, never changed, and every scan
bounded. A copy (``.clone()``, ``.tolist()``, ``.item()``) owns its memory and cannot be told from
numbers the learner worked out; a teacher's notes say so (docs/teachers.md, "What a value check can and cannot tell").

>>> import torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> traced(x.grad), traced(x.grad.numpy()), traced(torch.tensor([2.0, 4.0])), traced(x.grad.clone())
('x.grad', 'x.grad', '', '')
"""
from __future__ import annotations

import os
import sys
import warnings
from types import FrameType

import torch

FRAMES = 3       # frames outside the lab whose names are looked at (the caller's, and two above it)
NAMES = 2_000    # names looked at in one namespace
PARAMETERS = 1_000  # parameters looked at in one module
#: the lab's own code: frames running it are not the caller's
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _span(value) -> tuple[int, int] | None:
    """The memory a tensor's storage or a numpy array's data occupies, as (start, end); None when
    it has none (an empty tensor, a tensor without storage, anything else)."""
    if isinstance(value, torch.Tensor):
        try:
            storage = value.untyped_storage()
            start, size = storage.data_ptr(), storage.nbytes()
        except (RuntimeError, NotImplementedError):
            return None
        return (start, start + size) if size else None
    if type(value).__module__.split(".")[0] == "numpy":
        interface = getattr(value, "__array_interface__", None)
        if not isinstance(interface, dict) or not getattr(value, "nbytes", 0):
            return None
        start = int(interface["data"][0])
        return start, start + int(value.nbytes)
    return None


def _grad(t: torch.Tensor):
    """A tensor's .grad where it can hold one (a leaf, or a tensor that retains it), read without
    the warning a non-leaf's .grad gives."""
    try:
        if not (t.is_leaf or t.retains_grad):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = t.grad
    except Exception:  # a tensor subclass that cannot say: not a gradient the learner can pass
        return None
    return g if isinstance(g, torch.Tensor) else None


def _gradients(namespace: dict, inside: bool = True) -> list[tuple[str, torch.Tensor]]:
    """(how the learner names it, the gradient) for the tensors and modules of one namespace, and of
    the dicts it holds (one level: a namespace kept in a dict, ns["x"])."""
    found: list[tuple[str, torch.Tensor]] = []
    nested: list[tuple[str, torch.Tensor]] = []  # after the names of the namespace itself
    for name, value in list(namespace.items())[:NAMES]:
        if not isinstance(name, str) or name.startswith("_"):
            continue
        if inside and isinstance(value, dict) and value is not namespace:
            for label, g in _gradients(value, inside=False):
                key, _dot, rest = label.partition(".")
                nested.append((f"{name}[{key!r}].{rest}", g))
        elif isinstance(value, torch.Tensor):
            g = _grad(value)
            if g is not None:
                found.append((f"{name}.grad", g))
        elif isinstance(value, torch.nn.Module):
            try:
                named = value.named_parameters()
                for count, (pname, p) in enumerate(named):
                    if count >= PARAMETERS:
                        break
                    g = _grad(p)
                    if g is not None:
                        found.append((f"{name}.{pname}.grad", g))
            except Exception:  # a module whose parameters cannot be listed is not the learner's gradient
                continue
    return found + nested


def _callers() -> list[dict]:
    """The namespaces (locals, then globals) of the first FRAMES frames outside the lab."""
    spaces: list[dict] = []
    frame: FrameType | None = sys._getframe(1)
    seen = 0
    while frame is not None and seen < FRAMES:
        file = frame.f_code.co_filename
        if file.startswith("<") or not os.path.abspath(file).startswith(PACKAGE):
            seen += 1
            spaces.extend(s for s in (frame.f_locals, frame.f_globals) if all(s is not o for o in spaces))
        frame = frame.f_back
    return spaces


def _items(answer, depth: int = 3) -> list:
    """The tensors and arrays in an answer, looking into tuples, lists and dicts."""
    if isinstance(answer, (tuple, list)) and depth:
        return [i for a in answer[:100] for i in _items(a, depth - 1)]
    if isinstance(answer, dict) and depth:
        return [i for a in list(answer.values())[:100] for i in _items(a, depth - 1)]
    return [answer] if _span(answer) is not None else []


def traced(answer, own=()) -> str:
    """How the learner names the gradient an answer shares memory with ("x.grad"), "autograd" for one
    of `own` (the exercise's own tensors), or "" when the answer shares memory with none of them."""
    items = _items(answer)
    if not items:
        return ""
    spans = [s for s in (_span(i) for i in items) if s is not None]

    def overlaps(t) -> bool:
        other = _span(t)
        return other is not None and any(a < other[1] and other[0] < b for a, b in spans)

    for t in _items(list(own) if isinstance(own, (tuple, list)) else [own]):
        if overlaps(t):
            return "autograd"
    for namespace in _callers():
        for name, g in _gradients(namespace):
            if overlaps(g):
                return name
    return ""
