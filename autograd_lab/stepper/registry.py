"""The lab's registry of what a recording must look after, kept up to date by wrappers around four
of torch's Python-level functions. install() wraps them, once, when the lab is first used (%load_ext
or the first trace()); uninstall() (%unload_ext) puts torch's own methods back where the wrapper is
still in place (another tool's later patch is left as it is):

- torch.Tensor.retain_grad and torch.Tensor.register_hook: the tensor is remembered (weakly), so a
  recording finds the retain_grad() tensors whose .grad it must put back, however they are held,
  and the learner's tensor hooks it must name;
- torch.autograd.Function._register_hook, which torch calls for every node hook (fn.register_hook,
  fn.register_prehook, module backward hooks): the hook dict is remembered (weakly), so a recording
  knows whether a node hook of the learner's is in place anywhere, and only then probes every node
  for it (probing costs a hook handle per node);
- torch.utils.checkpoint._CheckpointFrame.__init__: the frame of a non-reentrant checkpoint is
  remembered (weakly), so a recording looks for checkpointed values only while one is alive.

torch.autograd.backward and torch.autograd.grad are never replaced (every value a recording shows
comes from its one run). The two private names (_HookMixin, _CheckpointFrame) are looked up, not
imported: where one is missing its wrapper is left out, and recordings probe every node for hooks,
or look for checkpointed values in every graph, instead.

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
_HookMixin = getattr(torch.autograd.function, "_HookMixin", None)
_CheckpointFrame = getattr(torch.utils.checkpoint, "_CheckpointFrame", None)


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
        self.originals: dict[str, object] = {}


STATE = _State()


def _torchs(function):
    """torch's own function behind a wrapper of the lab's (an earlier import of this module, as
    importlib.reload leaves it): a wrapper must never wrap another one of the lab's."""
    return getattr(function, "_autograd_lab_wraps", function)


_TORCH_RETAIN = torch._C.TensorBase.retain_grad
_TORCH_REGISTER = _torchs(torch.Tensor.register_hook)
_TORCH_NODE_REGISTER = _torchs(_HookMixin.__dict__["_register_hook"].__func__) if _HookMixin is not None else None
_TORCH_FRAME_INIT = _torchs(_CheckpointFrame.__init__) if _CheckpointFrame is not None else None
#: whether every node hook the learner registers is seen (else every recording probes every node)
SEES_NODE_HOOKS = _HookMixin is not None
#: whether every checkpoint frame made is seen (else every graph is searched for checkpointed values)
SEES_FRAMES = _CheckpointFrame is not None


@functools.wraps(_TORCH_RETAIN)
def _retain_grad(self):
    _TORCH_RETAIN(self)
    if self.retains_grad:
        STATE.retained.add(self)


@functools.wraps(_TORCH_REGISTER)
def _register_hook(self, hook):
    handle = _TORCH_REGISTER(self, hook)
    STATE.hooked.add(self)
    return handle


def _register_node_hook(backward_hooks, hook):
    hooks, handle = _TORCH_NODE_REGISTER(backward_hooks, hook)  # type: ignore[misc]
    STATE.node_hooks.add(hooks)
    return hooks, handle


def _frame_init(self, *args, **kwargs):
    _TORCH_FRAME_INIT(self, *args, **kwargs)  # type: ignore[misc]
    STATE.frames.add(self)


for _wrapper, _own in ((_retain_grad, _TORCH_RETAIN), (_register_hook, _TORCH_REGISTER),
                       (_register_node_hook, _TORCH_NODE_REGISTER), (_frame_init, _TORCH_FRAME_INIT)):
    setattr(_wrapper, "_autograd_lab_wraps", _own)  # noqa: B010


def install() -> None:
    """Wrap the four functions and seed the registry (once; later calls return at once)."""
    if STATE.installed:
        return
    STATE.installed = True
    STATE.originals = {"retain_grad": torch.Tensor.__dict__.get("retain_grad")}
    setattr(torch.Tensor, "retain_grad", _retain_grad)  # noqa: B010 (mypy: no method assignment)
    setattr(torch.Tensor, "register_hook", _register_hook)  # noqa: B010
    if _HookMixin is not None:
        setattr(_HookMixin, "_register_hook", staticmethod(_register_node_hook))  # noqa: B010
    if _CheckpointFrame is not None:
        functools.update_wrapper(_frame_init, _TORCH_FRAME_INIT)  # type: ignore[arg-type]
        setattr(_CheckpointFrame, "__init__", _frame_init)  # noqa: B010
    tensor = torch.Tensor
    objects = gc.get_objects()
    kinds = list(map(type, objects))
    wanted = {k for k in set(kinds) if (_CheckpointFrame is not None and k is _CheckpointFrame)
              or issubclass(k, tensor)}
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
    """Put torch's own methods back where the lab's wrapper is still in place (a tool that patched
    one since keeps its patch), and forget the registry (the next use installs again)."""
    if not STATE.installed:
        return
    if torch.Tensor.__dict__.get("retain_grad") is _retain_grad:
        if STATE.originals.get("retain_grad") is None:
            delattr(torch.Tensor, "retain_grad")
        else:
            setattr(torch.Tensor, "retain_grad", STATE.originals["retain_grad"])  # noqa: B010
    if torch.Tensor.__dict__.get("register_hook") is _register_hook:
        setattr(torch.Tensor, "register_hook", _TORCH_REGISTER)  # noqa: B010
    node_register = getattr(_HookMixin.__dict__.get("_register_hook"), "__func__", None) if _HookMixin else None
    if node_register is _register_node_hook:
        setattr(_HookMixin, "_register_hook", staticmethod(_TORCH_NODE_REGISTER))  # type: ignore[arg-type]  # noqa: B010
    if _CheckpointFrame is not None and _CheckpointFrame.__dict__.get("__init__") is _frame_init:
        setattr(_CheckpointFrame, "__init__", _TORCH_FRAME_INIT)  # noqa: B010
    for kept in (STATE.retained, STATE.hooked, STATE.node_hooks, STATE.frames, STATE.old_leaves):
        kept.clear()
    STATE.installed = False


class TorchRegistration:
    """A context manager: torch's own node-hook registration, for the lab's hooks (not the
    learner's: they must not make every later recording probe every node)."""

    def __enter__(self):
        if STATE.installed and _HookMixin is not None:
            setattr(_HookMixin, "_register_hook", staticmethod(_TORCH_NODE_REGISTER))  # type: ignore[arg-type]  # noqa: B010
        return self

    def __exit__(self, *exc):
        if STATE.installed and _HookMixin is not None:
            setattr(_HookMixin, "_register_hook", staticmethod(_register_node_hook))  # noqa: B010
        return False
