"""Where a non-reentrant checkpoint ran its forward again during a recorded backward.

torch.utils.checkpoint(fn, ..., use_reentrant=False) keeps none of fn's activations: while fn runs,
a saved-tensor hook packs every value a node saves as an empty holder. The first time the backward
unpacks one of those holders, the hook runs fn's forward again and fills them all; this adds no
node to the graph. So the step that recomputed a checkpoint is the first one, in the engine's order,
whose node saved a holder of that checkpoint: a node unpacks what it saved when it runs.

(A learner's own autograd.Function inside a checkpoint unpacks only when its backward reads
ctx.saved_tensors; one that saved values and never reads them would be marked without running the
forward. Every built-in node unpacks what it saved when it runs.)

The holders are read as packed (SavedTensor.data), never unpacked: unpacking would run the forward
once more. After a backward that freed the graph (--apply) the holders are gone, and nothing is
marked."""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch.utils.checkpoint

from ..i18n import _
from ..names import name_in
from .hooks import closure_value

# private in torch: without them the stepper cannot tell where a checkpoint ran its forward again,
# and says nothing of it (the recording itself does not need them)
_CheckpointFrame = getattr(torch.utils.checkpoint, "_CheckpointFrame", None)
_Holder = getattr(torch.utils.checkpoint, "_Holder", None)

_attrs_by_type: dict[type, tuple[str, ...]] = {}
_found: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Recompute:
    index: int  # the step (0-based, engine order) whose node unpacked the checkpoint's first value
    number: int  # which checkpoint, counted in forward order from 1
    count: int  # how many checkpoints the graph has
    function: str | None  # the name of the function the checkpoint wraps, when it has one

    @property
    def which(self) -> str:
        if self.count > 1:
            if self.function:
                return _("checkpoint {number} of {count} of {function}").format(
                    number=self.number, count=self.count, function=self.function)
            return _("checkpoint {number} of {count}").format(number=self.number, count=self.count)
        if self.function:
            return _("the checkpoint of {function}").format(function=self.function)
        return _("the checkpoint")


def recomputations(trace: Any) -> dict[int, Recompute]:
    """{step index: Recompute} for each non-reentrant checkpoint of a recorded backward, computed
    once per trace. After --apply nothing is marked unless the recording kept packed_holders(graph.nodes)
as trace.checkpoint_holders before its run.

    >>> import torch
    >>> from torch.utils.checkpoint import checkpoint
    >>> from autograd_lab import trace
    >>> x = torch.ones(2, requires_grad=True)
    >>> t = trace(checkpoint(torch.sin, x, use_reentrant=False).sum(), names={})
    >>> [(t.steps[i].name, r.which) for i, r in recomputations(t).items()]
    [('SinBackward0', 'the checkpoint of sin')]
    """
    try:
        return _found[trace]
    except (KeyError, TypeError):
        pass
    # a recording that freed the graph (--apply) may have kept the holders it read before the run
    kept = getattr(trace, "checkpoint_holders", None)
    found = first_unpacks([step.node for step in trace.steps], getattr(trace, "names", None), kept) if (
        kept is not None or _frames_alive(trace)) else {}
    with contextlib.suppress(TypeError):  # an object that cannot be weakly referenced: computed again
        _found[trace] = found
    return found


def _frames_alive(trace: Any) -> bool:
    """Whether a checkpoint may hold values of the trace (else its nodes need no scan: some 10 ms per
    thousand nodes). Told by the trace (its recording looked); anything else is searched."""
    told = getattr(trace, "checkpointed", None)
    return True if told is None else bool(told)


def packed_holders(nodes: Sequence) -> dict[Any, list[tuple[Any, Any]]]:
    """{node.fn: [(checkpoint key, frame), ...]} for the nodes that saved a checkpoint's holder. To
    be read before a backward that frees the graph (backward() releases the holders)."""
    out: dict[Any, list[tuple[Any, Any]]] = {}
    for node in nodes:
        for saved in _raw_saved(node.fn):
            hook = saved.unpack_hook
            if hook is None:  # no saved-tensor hook packed it (most nodes): cheaper than reading .data
                continue
            try:
                packed = saved.data
            except RuntimeError:  # released by a backward: nothing can be told
                continue
            if _Holder is not None and isinstance(packed, _Holder):
                out.setdefault(node.fn, []).append(_frame(hook))
    return out


def first_unpacks(nodes: Sequence, names: Mapping | None = None,
                  holders: dict[Any, list[tuple[Any, Any]]] | None = None) -> dict[int, Recompute]:
    """For nodes in the engine's order: {position: Recompute} of the first node holding each
    checkpoint's values. names (the learner's) name a checkpointed module; holders, read before a
    backward freed the graph, stand in for what the nodes hold now."""
    if holders is None:
        holders = packed_holders(nodes)
    first: dict[Any, int] = {}
    seqs: dict[Any, int] = {}
    frames: dict[Any, Any] = {}
    for position, node in enumerate(nodes):
        for key, frame in holders.get(node.fn, ()):
            first.setdefault(key, position)
            seqs[key] = min(seqs.get(key, node.seq), node.seq)
            frames[key] = frame
    in_forward = sorted(first, key=lambda k: seqs[k])
    return {first[key]: Recompute(first[key], in_forward.index(key) + 1, len(first), _function_name(frames[key], names))
            for key in first}


def _raw_saved(fn: Any) -> list:
    """The node's SavedTensor objects, packed as they are (lists of them flattened)."""
    attrs = _attrs_by_type.get(type(fn))
    if attrs is None:
        attrs = _attrs_by_type[type(fn)] = tuple(a for a in dir(fn) if a.startswith("_raw_saved_"))
    out: list = []
    for attr in attrs:
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed
            continue
        if isinstance(value, (list, tuple)):
            out.extend(v for v in value if v is not None)
        elif value is not None:
            out.append(value)
    return out


def _frame(hook: Any) -> tuple[Any, Any]:
    """(a key that is the same for every holder of one checkpoint, its frame or None): the
    checkpoint's unpack hook is one function per checkpoint, closing over its frame."""
    frame = closure_value(hook, _CheckpointFrame) if _CheckpointFrame is not None else None
    return (frame, frame) if frame is not None else (hook, None)


def _function_name(frame: Any, names: Mapping | None) -> str | None:
    """The name of the function a checkpoint wraps (its recompute function closes over it)."""
    recompute: Any = getattr(frame, "recompute_fn", None)
    code = getattr(recompute, "__code__", None)
    if code is None or not recompute.__closure__:
        return None
    cells = dict(zip(code.co_freevars, recompute.__closure__, strict=True))
    try:
        fn = cells["fn"].cell_contents
    except (KeyError, ValueError):
        return None
    name = name_in(names, fn) or getattr(fn, "__name__", None) or type(fn).__name__
    return None if name == "<lambda>" else name
