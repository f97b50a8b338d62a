"""The lab's registry of what a recording must look after, kept up to date by wrappers around six
of torch's Python-level functions. install() wraps them, once, when the lab is first used (%load_ext
or the first trace()); uninstall() (%unload_ext) puts torch's own methods back:

- torch.Tensor.retain_grad and torch.Tensor.register_hook: the tensor is remembered (weakly), so a
  recording finds the retain_grad() tensors whose .grad it must put back, however they are held,
  and the learner's tensor hooks it must name;
- torch.autograd.Function._register_hook, which torch calls for every node hook (fn.register_hook,
  fn.register_prehook, module backward hooks): the hook dict is remembered (weakly), so a recording
  knows whether a node hook of the learner's is in place anywhere, and only then probes every node
  for it (probing costs a hook handle per node);
- torch.utils.checkpoint._CheckpointFrame.__init__: the frame of a non-reentrant checkpoint is
  remembered (weakly), so a recording looks for checkpointed values only while one is alive;
- torch.autograd.backward and torch.autograd.grad (Tensor.backward calls the first): before they
  run, every recording that still owes values reads them (later.py), while its graph is as it was
  recorded. The tensor and node hook registrations do the same, as a new hook may change the next
  run of a graph.

What existed before install() is found by one pass over the objects the garbage collector tracks
(tensors that retain their grad or have hooks, leaves, checkpoint frames), and the nodes made before
it are probed, as their hooks were not seen. Each wrapper calls torch's method first and changes
nothing of what it returns."""
from __future__ import annotations

import functools
import gc
import weakref
from itertools import compress

import torch
from torch.autograd.function import _HookMixin
from torch.utils.checkpoint import _CheckpointFrame


class WeakIds:
    """A set of live objects by identity, held weakly (tensors compare element-wise and dicts by
    value, so weakref.WeakSet cannot hold them).

    >>> s, t = WeakIds(), torch.ones(2)
    >>> s.add(t); s.add(t)
    >>> (t in s, len(list(s)))
    (True, 1)
    """

    def __init__(self):
        self._refs: dict[int, weakref.ref] = {}

    def add(self, obj) -> None:
        key, refs = id(obj), self._refs
        old = refs.get(key)
        if old is not None and old() is obj:
            return

        def gone(ref, key=key, refs=refs):
            if refs.get(key) is ref:
                del refs[key]
        refs[key] = weakref.ref(obj, gone)

    def discard(self, obj) -> None:
        ref = self._refs.get(id(obj))
        if ref is not None and ref() is obj:
            del self._refs[id(obj)]

    def __bool__(self) -> bool:
        return bool(self._refs)

    def __contains__(self, obj) -> bool:
        ref = self._refs.get(id(obj))
        return ref is not None and ref() is obj

    def __iter__(self):
        for ref in list(self._refs.values()):
            obj = ref()
            if obj is not None:
                yield obj

    def clear(self) -> None:
        self._refs.clear()


class _State:
    def __init__(self):
        self.installed = False
        self.retained, self.hooked, self.node_hooks = WeakIds(), WeakIds(), WeakIds()
        self.frames, self.old_leaves = WeakIds(), WeakIds()
        self.before_seq = 0  # nodes made before install() have smaller sequence numbers
        # recordings that owe values until a learner looks (each has .read_later()): read before
        # anything can free or change their graph
        self.owing = WeakIds()
        self.busy = 0  # > 0 while the lab runs the engine: a learner's hook calling grad() settles nothing
        self.originals: dict[str, object] = {}


STATE = _State()
_TORCH_RETAIN = torch._C.TensorBase.retain_grad
_TORCH_REGISTER = torch.Tensor.register_hook
_TORCH_NODE_REGISTER = _HookMixin.__dict__["_register_hook"].__func__
_TORCH_FRAME_INIT = _CheckpointFrame.__init__
_TORCH_BACKWARD = torch.autograd.backward
_TORCH_GRAD = torch.autograd.grad
torch_backward = _TORCH_BACKWARD  # torch's own, for the lab's runs (they must not settle others)


def settle() -> None:
    """Every recording that owes values reads them now (the graphs are as they were recorded), unless
    the lab is running the engine itself (then a second run would land inside the first)."""
    owing = STATE.owing
    if STATE.busy:
        return
    for recording in list(owing):
        recording.read_later()
    owing.clear()


@functools.wraps(_TORCH_RETAIN)
def _retain_grad(self):
    _TORCH_RETAIN(self)
    if self.retains_grad:
        STATE.retained.add(self)


@functools.wraps(_TORCH_BACKWARD)
def _backward(*args, **kwargs):
    __tracebackhide__ = True  # IPython leaves this frame out of the learner's tracebacks
    if STATE.owing:
        settle()
    return _TORCH_BACKWARD(*args, **kwargs)


@functools.wraps(_TORCH_GRAD)
def _grad(*args, **kwargs):
    __tracebackhide__ = True
    if STATE.owing:
        settle()
    return _TORCH_GRAD(*args, **kwargs)


@functools.wraps(_TORCH_REGISTER)
def _register_hook(self, hook):
    if STATE.owing:
        settle()
    handle = _TORCH_REGISTER(self, hook)
    STATE.hooked.add(self)
    return handle


def _register_node_hook(backward_hooks, hook):
    if STATE.owing:
        settle()
    hooks, handle = _TORCH_NODE_REGISTER(backward_hooks, hook)
    STATE.node_hooks.add(hooks)
    return hooks, handle


@functools.wraps(_TORCH_FRAME_INIT)
def _frame_init(self, *args, **kwargs):
    _TORCH_FRAME_INIT(self, *args, **kwargs)
    STATE.frames.add(self)


def install() -> None:
    """Wrap the six functions and seed the registry (once; later calls return at once)."""
    if STATE.installed:
        return
    STATE.installed = True
    STATE.originals = {"retain_grad": torch.Tensor.__dict__.get("retain_grad")}
    setattr(torch.Tensor, "retain_grad", _retain_grad)  # noqa: B010 (mypy: no method assignment)
    setattr(torch.Tensor, "register_hook", _register_hook)  # noqa: B010
    setattr(_HookMixin, "_register_hook", staticmethod(_register_node_hook))  # noqa: B010
    setattr(_CheckpointFrame, "__init__", _frame_init)  # noqa: B010
    torch.autograd.backward, torch.autograd.grad = _backward, _grad
    tensor = torch.Tensor
    objects = gc.get_objects()
    kinds = list(map(type, objects))
    wanted = {k for k in set(kinds) if k is _CheckpointFrame or issubclass(k, tensor)}
    for o in compress(objects, map(wanted.__contains__, kinds)):
        if type(o) is _CheckpointFrame:
            STATE.frames.add(o)
        elif o.requires_grad:
            if o.is_leaf:
                STATE.old_leaves.add(o)
            elif o.retains_grad:
                STATE.retained.add(o)
            if o._backward_hooks:
                STATE.hooked.add(o)
    del objects, kinds
    with torch.enable_grad():
        STATE.before_seq = (torch.zeros((), requires_grad=True) * 1).grad_fn._sequence_nr()  # type: ignore[union-attr]


def uninstall() -> None:
    """Put torch's own methods back and forget the registry (the next use installs again)."""
    if not STATE.installed:
        return
    settle()
    if STATE.originals.get("retain_grad") is None:
        delattr(torch.Tensor, "retain_grad")
    else:
        setattr(torch.Tensor, "retain_grad", STATE.originals["retain_grad"])  # noqa: B010
    setattr(torch.Tensor, "register_hook", _TORCH_REGISTER)  # noqa: B010
    setattr(_HookMixin, "_register_hook", staticmethod(_TORCH_NODE_REGISTER))  # noqa: B010
    setattr(_CheckpointFrame, "__init__", _TORCH_FRAME_INIT)  # noqa: B010
    torch.autograd.backward, torch.autograd.grad = _TORCH_BACKWARD, _TORCH_GRAD
    for kept in (STATE.retained, STATE.hooked, STATE.node_hooks, STATE.frames, STATE.old_leaves):
        kept.clear()
    STATE.installed = False


class TorchRegistration:
    """A context manager: torch's own node-hook registration, for the lab's hooks (not the
    learner's: they must not make every later recording probe every node)."""

    def __enter__(self):
        if STATE.installed:
            setattr(_HookMixin, "_register_hook", staticmethod(_TORCH_NODE_REGISTER))  # noqa: B010
        return self

    def __exit__(self, *exc):
        if STATE.installed:
            setattr(_HookMixin, "_register_hook", staticmethod(_register_node_hook))  # noqa: B010
        return False
