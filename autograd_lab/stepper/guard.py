"""What a recording must set aside before it runs the engine, and put back after, so that nothing of
the learner's changes: every .grad the run would write (leaves, and retain_grad() tensors however
they are held), post-accumulate-grad hooks (an optimizer step inside backward), module buffers a
checkpoint's recomputation would move, and the random-number state.

retain_grad() tensors cannot be found from the graph (a node does not know the tensors it made), so
they are found among the objects the garbage collector tracks: one pass, filtered in C (about
0.1 microsecond per object: some 50 ms in a kernel holding half a million objects). The same pass
finds the learner's tensor hooks and whether a non-reentrant checkpoint is alive."""
from __future__ import annotations

import gc
from collections import OrderedDict
from itertools import compress

import torch
from torch.utils.checkpoint import _CheckpointFrame

from ..graph import Graph

REENTRANT = "CheckpointFunctionBackward"


class Found:
    """What one pass over the kernel's objects found that a recording of graph must look after."""

    __slots__ = ("retained", "hooked", "modules", "checkpoint")

    def __init__(self, graph: Graph):
        fns = graph._by_fn
        leaves = {id(n.leaf) for n in graph.nodes if n.leaf is not None}
        self.retained: list[torch.Tensor] = []
        self.hooked: list[torch.Tensor] = []  # tensors of the graph with the learner's hooks
        self.modules: list[torch.nn.Module] = []
        self.checkpoint = False
        tensor, module = torch.Tensor, torch.nn.Module
        for o in _tensors_and_modules():
            kind = type(o)
            if issubclass(kind, tensor):
                if not o.requires_grad:
                    continue
                fn = o.grad_fn
                mine = (fn in fns) if fn is not None else id(o) in leaves
                if not mine:
                    continue
                if fn is not None and o.retains_grad:
                    self.retained.append(o)
                if o._backward_hooks:
                    self.hooked.append(o)
            elif issubclass(kind, module):
                self.modules.append(o)
            else:
                self.checkpoint = True


def _tensors_and_modules() -> list:
    """Every tensor, module and checkpoint frame the collector tracks. The filtering runs in C
    (map, set, compress): a Python test per object would cost a second on a big kernel."""
    objects = gc.get_objects()
    kinds = list(map(type, objects))
    wanted = {k for k in set(kinds)
              if k is _CheckpointFrame or issubclass(k, (torch.Tensor, torch.nn.Module))}
    return list(compress(objects, map(wanted.__contains__, kinds)))


class SetAside:
    """A context manager: on entry everything a backward would write is set aside, on exit put
    back, the same objects, so values, versions and identities are as before.

    >>> x = torch.ones(2, requires_grad=True)
    >>> z = (x * 3).sum()
    >>> from ..graph import snapshot
    >>> with SetAside(snapshot(z), Found(snapshot(z))):
    ...     torch.autograd.backward(z, retain_graph=True)
    >>> x.grad is None
    True
    """

    def __init__(self, graph: Graph, found: Found):
        self.leaves = [n.leaf for n in graph.leaves()]
        self.found = found

    def __enter__(self):
        leaves, found = self.leaves, self.found
        self.leaf_grads = [leaf.grad for leaf in leaves]
        self.retained_grads = [t.grad for t in found.retained]
        # Post-accumulate-grad hooks are set aside (not run) rather than recording with
        # torch.autograd.grad: backward() keeps the engine's own accumulator steps, in its order.
        self.post_hooks = [leaf._post_accumulate_grad_hooks for leaf in leaves]
        self.rng = torch.get_rng_state()
        # A non-reentrant checkpoint runs its forward again inside backward: batch norm's running
        # statistics would move. Keep every buffer's value and version to put them back.
        self.buffers = kept_buffers(found) if found.checkpoint else []
        for leaf, hooks in zip(leaves, self.post_hooks):
            leaf.grad = None
            if hooks:
                leaf._post_accumulate_grad_hooks = OrderedDict()
        return self

    def __exit__(self, *exc):
        for leaf, g, hooks in zip(self.leaves, self.leaf_grads, self.post_hooks):
            leaf.grad = g
            if hooks:
                leaf._post_accumulate_grad_hooks = hooks
        for t, g in zip(self.found.retained, self.retained_grads):
            t.grad = g
        put_back(self.buffers)
        torch.set_rng_state(self.rng)
        return False


def kept_buffers(found: Found) -> list:
    """Every module buffer with a copy of its value and its version, to put back after a run."""
    out, seen = [], set()
    for m in found.modules:
        for b in m.buffers(recurse=False):
            if id(b) not in seen and b.device.type != "meta":
                seen.add(id(b))
                out.append((b, b.detach().clone(), b._version))
    return out


def put_back(buffers: list) -> None:
    with torch.no_grad():
        for b, value, version in buffers:
            if b._version != version or not torch.equal(b, value):
                b.copy_(value)
                torch._C._autograd._unsafe_set_version_counter((b,), (version,))
