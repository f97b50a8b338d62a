"""What a recording must set aside before it runs the engine, and put back after, so that nothing of
the learner's changes: every .grad the run would write (leaves, and retain_grad() tensors however
they are held), post-accumulate-grad hooks (an optimizer step inside backward), module buffers a
checkpoint's recomputation would move, and the random-number state.

retain_grad() tensors and the learner's hooks cannot be found from the graph (a node does not know
the tensors it made, and torch shows a node's pre-hooks only to whoever registers one), and a pass
over every object of the kernel at every recording costs 30 to 60 ms. So the lab keeps a registry,
filled by wrappers installed once, when it is first used (%load_ext or the first trace()), and
seeded then by one pass over the objects the garbage collector tracks (registry.py says what is
wrapped). A recording then looks only at what the registry holds."""
from __future__ import annotations

import gc
from collections import OrderedDict
from itertools import compress

import torch

from ..graph import Graph
from .registry import SEES_FRAMES, SEES_NODE_HOOKS, STATE, install, uninstall

__all__ = ["Found", "SetAside", "install", "kept_buffers", "put_back", "uninstall"]


class Found:
    """What the registry knows that a recording of graph must look after: retained and hooked tensors
    of the graph, whether a non-reentrant checkpoint recomputes part of it (then every module, for
    their buffers), and whether every node may carry a node hook of the learner's (probe_all)."""

    __slots__ = ("checkpoint", "hooked", "modules", "probe_all", "retained")

    def __init__(self, graph: Graph):
        install()
        fns = graph.fns
        self.retained = [t for t in STATE.retained if t.grad_fn in fns and t.retains_grad]
        self.hooked: list[torch.Tensor] = []  # tensors of the graph with the learner's hooks
        hooked = [t for t in STATE.hooked if t._backward_hooks and t.requires_grad]
        if hooked:
            leaves = {id(fn.variable) for fn in graph.accumulators()}
            self.hooked = [t for t in hooked if (t.grad_fn in fns if t.grad_fn is not None else id(t) in leaves)]
        self.checkpoint = _checkpointed(graph)
        self.modules = _modules() if self.checkpoint else []
        # a node hook registered since the lab was installed, still in place somewhere (or no way
        # to know: torch without the private name the registry wraps)
        self.probe_all = not SEES_NODE_HOOKS or any(STATE.node_hooks)


def _checkpointed(graph: Graph) -> bool:
    """Whether a value the graph saved is held by a live non-reentrant checkpoint (reading it, or
    running backward, runs that checkpoint's forward again). Looked for only while a checkpoint
    frame is alive anywhere, which the registry knows without a scan."""
    if SEES_FRAMES and not any(True for _ in STATE.frames):
        return False
    for fn in graph.fns:
        for attr in _raw_attrs(fn):
            try:
                saved = getattr(fn, attr)
            except RuntimeError:  # freed by an earlier backward
                continue
            for value in saved if isinstance(saved, (tuple, list)) else (saved,):
                hook = getattr(value, "unpack_hook", None)
                if hook is not None and getattr(hook, "__module__", "") == "torch.utils.checkpoint":
                    return True
    return False


_raw_by_type: dict[type, tuple[str, ...]] = {}


def _raw_attrs(fn) -> tuple[str, ...]:
    attrs = _raw_by_type.get(type(fn))
    if attrs is None:
        attrs = _raw_by_type[type(fn)] = tuple(a for a in dir(fn) if a.startswith("_raw_saved_"))
    return attrs


def _modules() -> list:
    """Every module in the kernel (one pass, filtered in C): only for a checkpointed graph, whose
    recomputation may call any of them."""
    objects = gc.get_objects()
    kinds = list(map(type, objects))
    wanted = {k for k in set(kinds) if issubclass(k, torch.nn.Module)}
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
        self.leaves: list = [fn.variable for fn in graph.accumulators()]
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
        for leaf, hooks in zip(leaves, self.post_hooks, strict=True):
            leaf.grad = None
            if hooks:
                leaf._post_accumulate_grad_hooks = OrderedDict()
        return self

    def __exit__(self, *exc):
        for leaf, g, hooks in zip(self.leaves, self.leaf_grads, self.post_hooks, strict=True):
            leaf.grad = g
            if hooks:
                leaf._post_accumulate_grad_hooks = hooks
        for t, g in zip(self.found.retained, self.retained_grads, strict=True):
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
