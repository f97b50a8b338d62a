"""What a run of the engine inside a recording would change of the learner's, found once per
recording, set aside before the run and put back after it, so that nothing of theirs changes.

A recording runs torch.autograd.grad(outputs, inputs=leaves): the engine then writes no leaf's
.grad and runs no post-accumulate-grad hook. What it still writes, and what learner code running
inside backward may write, is looked after here:

- the .grad of tensors that called retain_grad() (the engine writes them even in grad()), however
  they are held;
- the learner's own hooks: a hook that removes itself through its handle is put back (hooks.py
  wraps and restores the hook dicts themselves);
- module buffers (a checkpoint's recomputation, or a Function's backward, may move batch norm's
  running statistics): put back and named;
- a backward run inside the recording by learner code (a Function's backward that calls one): it
  runs with retain_graph=True, and the .grad it writes is put back when the recording ends;
- the random-number state.

retain_grad() tensors and the learner's hooks cannot be found from the graph (a node does not know
the tensors it made), so find() makes one pass over the objects the garbage collector tracks, once
per recording, never once per step. Nothing of torch is replaced, for the session or for the run:
the interception of a nested backward is a TorchFunctionMode, active only while the recording runs
the engine, and only when learner code can run inside it.

Set-aside and put-back run with Ctrl-C held (held_interrupts): an interrupt that arrives while the
lab's own code runs is raised once everything is back; one that arrives while learner code runs
(a hook that loops) is raised at once, and the put-back still runs, with interrupts held.

guest(graph) is the scoped helper (find, set aside, put back) for any run of the engine the lab
makes on the learner's tensors, %jacobian's included."""
from __future__ import annotations

import contextlib
import gc
import inspect
import signal
import threading
from itertools import compress
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

from ..graph import Graph, walk
from ..i18n import _
from .recorder import NESTED_LIMIT, NestedTooDeep

__all__ = ["Found", "NestedTooDeep", "SetAside", "find", "guest", "held_interrupts", "in_the_lab"]

# private in torch: without it every graph is searched for checkpointed values (a little slower)
_CheckpointFrame = getattr(torch.utils.checkpoint, "_CheckpointFrame", None)
# private in torch: without it selective activation checkpointing cannot be recognised, and a
# recording of it is refused whenever a checkpoint's recomputation is found
_CachedMode = getattr(torch.utils.checkpoint, "_CachedTorchDispatchMode", None)

_LAB = str(Path(__file__).resolve().parent.parent)


def subclasses(root: type) -> set[type]:
    """root and every class below it, once each."""
    out, stack = {root}, [root]
    while stack:
        kind: type
        for kind in type.__subclasses__(stack.pop()):
            if kind not in out:
                out.add(kind)
                stack.append(kind)
    return out


class Found:
    """What one pass over the kernel's objects found for a recording of graph:

    retained: every tensor of the kernel that retains its grad (a nested backward may write any);
    hooked: the graph's tensors with hooks of the learner's;
    modules: every module (their buffers are kept when learner code may run); unpacks: {node fn:
    how many saved values a learner's unpack hook unpacks when it runs}; checkpoint: whether a live
    non-reentrant checkpoint holds values of the graph (reading one runs its forward again);
    selective: whether one of them is a selective activation checkpoint (it allows one backward)."""

    __slots__ = ("checkpoint", "hooked", "modules", "retained", "selective", "unpacks")

    def __init__(self, retained, hooked, modules, unpacks, checkpoint, selective):
        self.retained, self.hooked, self.modules = retained, hooked, modules
        self.unpacks, self.checkpoint, self.selective = unpacks, checkpoint, selective


def find(graph: Graph) -> Found:
    """One pass over the objects the garbage collector tracks (filtered in C, by type)."""
    tensor_kinds = subclasses(torch._C.TensorBase)
    module_kinds = subclasses(torch.nn.Module)
    wanted = tensor_kinds | module_kinds
    if _CheckpointFrame is not None:
        wanted.add(_CheckpointFrame)
    objects = gc.get_objects()
    picked = list(compress(objects, map(wanted.__contains__, map(type, objects))))
    del objects
    fns = graph.fns
    leaves = {id(fn.variable) for fn in graph.accumulators()}
    retained, hooked, modules, frames = [], [], [], 0
    for o in picked:
        kind = type(o)
        if kind in tensor_kinds:
            if not o.requires_grad:
                continue
            if o.retains_grad:
                retained.append(o)
            if o._backward_hooks and (o.grad_fn in fns if o.grad_fn is not None else id(o) in leaves):
                hooked.append(o)
        elif kind in module_kinds:
            modules.append(o)
        else:
            frames += 1
    del picked
    checkpointed, unpacks = _saved_hooks(graph)
    checkpoint = (frames > 0 or _CheckpointFrame is None) and checkpointed
    return Found(retained, hooked, modules, unpacks, checkpoint, checkpoint and _selective(graph))


def _saved_hooks(graph: Graph) -> tuple[bool, dict]:
    """One pass over what the graph's nodes saved: whether a value is held by a non-reentrant
    checkpoint, and {node fn: how many of its saved values an unpack hook of the learner's
    (torch.autograd.graph.saved_tensors_hooks) will unpack when the node runs}."""
    checkpointed, unpacks = False, {}
    for fn in graph.fns:
        count = 0
        for value in _saved(fn):
            hook = getattr(value, "unpack_hook", None)
            if hook is None:
                continue
            if getattr(hook, "__module__", "") == "torch.utils.checkpoint":
                checkpointed = True
            else:
                count += 1
        if count:
            unpacks[fn] = count
    return checkpointed, unpacks


def _selective(graph: Graph) -> bool:
    """Whether a checkpoint of the graph recomputes under selective activation checkpointing: its
    recompute function closes over the cached dispatch mode that lets one backward through."""
    from .hooks import closure_value
    from .recompute import packed_holders

    if _CachedMode is None:
        return True
    for holders in packed_holders(graph.nodes).values():
        for _key, frame in holders:
            recompute = getattr(frame, "recompute_fn", None)
            if recompute is not None and closure_value(recompute, _CachedMode) is not None:
                return True
    return False


_raw_by_type: dict[type, tuple[str, ...]] = {}


def _saved(fn) -> list:
    attrs = _raw_by_type.get(type(fn))
    if attrs is None:
        attrs = _raw_by_type[type(fn)] = tuple(a for a in dir(fn) if a.startswith("_raw_saved_"))
    out: list = []
    for attr in attrs:
        try:
            saved = getattr(fn, attr)
        except RuntimeError:  # freed by an earlier backward
            continue
        out.extend(saved if isinstance(saved, (tuple, list)) else (saved,))
    return out


def learner_code_may_run(graph: Graph, found: Found, node_hooks: bool) -> bool:
    """Whether Python code of the learner's can run inside the engine: hooks, a Function's
    backward, a checkpoint's forward, saved-tensor unpack hooks."""
    if found.hooked or node_hooks or found.checkpoint or found.unpacks:
        return True
    return any(issubclass(kind, torch.autograd.function.BackwardCFunction) for kind in graph.kinds)


class SetAside:
    """A context manager: on entry what a run may write is set aside, on exit put back, the same
    objects, so values, versions and identities are as before. buffers says whether to keep every
    module buffer (when learner code may run). put_back lists what had changed and was put back
    (the learner's names for it are the caller's to find).

    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x * 3
    >>> y.retain_grad()
    >>> z = y.sum()
    >>> from ..graph import snapshot
    >>> with SetAside(find(snapshot(z))):
    ...     torch.autograd.backward(z, inputs=[x], retain_graph=True)
    >>> y.grad is None
    True
    """

    def __init__(self, found: Found, buffers: bool = False):
        self.found, self.keep_buffers = found, buffers
        self.nested: list = []  # (tensor, its .grad before, a copy, its version) from nested runs
        self.put_back: list = []  # buffers that had changed

    def __enter__(self):
        self.retained_grads = [t.grad for t in self.found.retained]
        self.rng = rng_state()
        self.buffers = _kept_buffers(self.found.modules) if self.keep_buffers else []
        return self

    def __exit__(self, *exc):
        for t, g in zip(self.found.retained, self.retained_grads, strict=True):
            if t.grad is not g:
                t.grad = g
        for t, g, copy, version in reversed(self.nested):
            _restore_grad(t, g, copy, version)
        self.put_back = _put_back(self.buffers)
        set_rng_state(self.rng)
        return False


def rng_state() -> tuple:
    """The random state a run may advance: the CPU generator's, and every CUDA device's once CUDA is
    in use (asking before would start CUDA)."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda


def set_rng_state(state: tuple) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


def _restore_grad(t, g, copy, version) -> None:
    if t.grad is not g:
        t.grad = g
    if g is not None and g._version != version:
        with torch.no_grad():
            g.copy_(copy)
        torch._C._autograd._unsafe_set_version_counter((g,), (version,))


def _kept_buffers(modules) -> list:
    """Every module buffer with the module that holds it, a copy of its value and its version."""
    out, seen = [], set()
    for m in modules:
        for name, b in m.named_buffers(recurse=False):
            if b is None or isinstance(b, torch.nn.parameter.UninitializedBuffer):  # a lazy module's, no value yet
                continue
            if id(b) not in seen and b.device.type != "meta":
                seen.add(id(b))
                out.append((m, name, b, b.detach().clone(), b._version))
    return out


def _put_back(buffers: list) -> list:
    """Put back every buffer that changed, in place or by a new tensor under its name (the same
    object back in the module); return (module, buffer name) of those."""
    changed = []
    with torch.no_grad():
        for m, name, b, value, version in buffers:
            moved = m._buffers.get(name) is not b  # reassigned (self.count = self.count + 1), not edited
            if moved:
                m._buffers[name] = b
            edited = b._version != version or not torch.equal(b, value)
            if edited:
                b.copy_(value)
                torch._C._autograd._unsafe_set_version_counter((b,), (version,))
            if moved or edited:
                changed.append((m, name))
    return changed


class NestedBackward(TorchFunctionMode):
    """While the recording runs the engine: a backward that learner code starts inside it (a
    Function's backward that calls one) runs with retain_graph=True, and what it writes into
    .grad is noted in aside.nested, to be put back when the recording ends. More than
    NESTED_LIMIT of them one inside another (a hook calling backward on its own graph) is
    stopped with RecursionError."""

    _RUNS = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})

    def __init__(self, aside: SetAside):
        super().__init__()
        self.aside, self.depth, self.count = aside, 0, 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in self._RUNS:
            return func(*args, **kwargs)
        self.count += 1
        if self.depth >= NESTED_LIMIT:
            raise NestedTooDeep(NESTED_LIMIT)
        bound = inspect.signature(func).bind(*args, **kwargs)
        bound.arguments["retain_graph"] = True
        if func is not torch.autograd.grad:
            self._note_leaves(bound)
        self.depth += 1
        try:
            return func(*bound.args, **bound.kwargs)
        finally:
            self.depth -= 1

    def _note_leaves(self, bound) -> None:
        outputs = bound.arguments.get("self", bound.arguments.get("tensors"))
        inputs = bound.arguments.get("inputs")
        if inputs is not None:
            leaves = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        else:
            outs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
            leaves = [fn.variable for out in outs if getattr(out, "grad_fn", None) is not None
                      for fn, _edges in walk(out.grad_fn) if hasattr(fn, "variable")]
            leaves += [out for out in outs if isinstance(out, torch.Tensor) and out.grad_fn is None]
        for t in leaves:
            g = t.grad
            self.aside.nested.append((t, g, None if g is None else g.detach().clone(),
                                      None if g is None else g._version))


_TORCH = str(Path(torch.__file__).resolve().parent)
_STDLIB = str(Path(contextlib.__file__).resolve().parent)
_SITE = str(Path(_STDLIB) / "site-packages")


class _Held:
    def __init__(self):
        self.pending = False

    def handler(self, signum, frame):
        """Ctrl-C: held while the lab's own code runs, else raised."""
        if in_the_lab(frame):
            self.pending = True
            return
        raise KeyboardInterrupt


def in_the_lab(frame) -> bool:
    """Whether the innermost frame from frame outward that is neither torch's nor the standard
    library's (contextlib's, say) is the lab's: the lab's own code is running, not the learner's."""
    while frame is not None:
        where = frame.f_code.co_filename
        if where.startswith(_LAB):
            return True
        if not (where.startswith(_TORCH) or (where.startswith(_STDLIB) and not where.startswith(_SITE))):
            return False
        frame = frame.f_back
    return False


@contextlib.contextmanager
def held_interrupts():
    """Ctrl-C held while the lab's own code runs (raised when the block ends, once everything is
    back), raised at once while learner code runs (a hook that loops can be stopped). Only on the
    main thread, the only one Python delivers signals to."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    if signal.getsignal(signal.SIGINT) is None:  # a handler not installed from Python: left as it is
        yield None
        return
    held = _Held()
    before = signal.signal(signal.SIGINT, held.handler)
    try:
        yield held
    except BaseException as err:
        signal.signal(signal.SIGINT, before)
        if held.pending and not isinstance(err, KeyboardInterrupt):
            raise KeyboardInterrupt from err  # the Ctrl-C held meanwhile is not lost
        raise
    signal.signal(signal.SIGINT, before)
    if held.pending:
        raise KeyboardInterrupt


@contextlib.contextmanager
def guest(graph: Graph, buffers: bool = True, nested: bool = True):
    """Find, set aside, put back: for a run of the engine on the learner's graph that must change
    nothing of theirs. Yields the SetAside (its put_back lists the buffers that were restored).
    nested: a backward that learner code starts inside is caught too (only for runs made below
    torch.autograd.grad, as trace.py makes them: a grad() call inside the block is itself caught).

    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> y.retain_grad()
    >>> from ..graph import snapshot
    >>> with guest(snapshot(y.sum()), nested=False):
    ...     _ = torch.autograd.grad(y.sum(), x)
    >>> y.grad is None
    True
    """
    with held_interrupts():
        found = find(graph)
        with SetAside(found, buffers=buffers) as aside, \
                NestedBackward(aside) if nested else contextlib.nullcontext():
            yield aside


def refused_selective(what: str) -> str:
    return _("{what} goes through a selective activation checkpoint, which lets exactly one backward through: "
             "a recording beside yours would use it up. Record your own backward instead: put your cell "
             "under %%record (or the block under `with autograd_lab.record() as rec:`). Nothing of yours "
             "was changed.").format(what=what)
