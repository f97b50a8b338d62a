"""The recording's post-hook on each node: what arrived at the node and what it sent on, appended in
the order the engine ran them. This runs once per node of the learner's graph, so it does as little
as it can: values are kept as the engine gave them (references), big ones as summaries so that the
memory a recording holds stays bounded, and copies only where the learner's hooks may edit a value
later (a hook that edits a gradient in place must not rewrite what earlier steps showed). Every
value a step shows comes from this one run: there is no second run to read a value later."""
from __future__ import annotations

import sys
import threading
from typing import Any

import torch

from ..graph import ACCUMULATOR
from ..tensors import KEEP_WHOLE, Summary, keep

#: how many backward runs learner code may start inside one recording, one inside another
NESTED_LIMIT = 8


class NestedTooDeep(RecursionError):
    """More than NESTED_LIMIT backward runs started inside one another during a recording."""


_current_node = torch._C._current_autograd_node  # the node the engine is running, from a hook
_current_task = torch._C._current_graph_task_id  # which backward run that is


class Recorder:
    """order: (node fn, grad_outputs, grad_inputs) per step, in the engine's order. copying: set
    before the run when the learner has hooks on the graph. hook: the one post-hook registered on
    every node of graph; it asks the engine which node is running (torch._C._current_autograd_node)
    only when it needs the node, so that registering costs no closure per node. captured(fn): the
    hook placed on a leaf, when the recording runs torch.autograd.grad(inputs=leaves): the engine
    then captures the leaf's gradient where its accumulator would run (and does not run it), and
    the step is appended there.

    Only the recording's own run is kept: the first step seen on the recording's thread fixes the
    run (torch._C._current_graph_task_id); another thread's backward over the same nodes, or a
    backward that learner code starts inside this one, leaves no step.

    >>> import torch
    >>> from ..graph import snapshot
    >>> x = torch.ones(2, requires_grad=True)
    >>> z = (x * 2).sum()
    >>> g = snapshot(z)
    >>> r = Recorder(g)
    >>> handles = [n.fn.register_hook(r.hook) for n in g.nodes]
    >>> torch.autograd.backward(z)
    >>> [g.node_of(fn).name for fn, _, _ in r.order]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """

    def __init__(self, graph, graph_outputs=()):
        self.order: list = []
        self.copying = [False, False]  # [the learner has hooks on the graph, the run writes .grad]
        # A big gradient sent on to a node with no other sender arrives there as the same tensor:
        # its summary is made once. Held only until that node runs (the engine holds it till then).
        sent: dict = {}
        append, copying, node_of, running = self.order.append, self.copying, graph.node_of, _current_node
        ours = _own_run(all(o.device.type == "cpu" for o in graph_outputs))

        def hook(grad_inputs, grad_outputs):
            if not ours():
                return
            fn = running()
            if type(fn) is ACCUMULATOR and copying[1]:
                # the learner's own backward: the accumulator may take this very tensor as .grad, which
                # their next backward adds to in place; a leaf's gradient is the answer: kept whole
                grad_outputs = copies(grad_outputs, None)
            elif copying[0]:  # a later hook of the learner's may edit a value in place: copies
                if type(fn) is ACCUMULATOR:  # a leaf's gradient is the answer itself: kept whole
                    grad_outputs = copies(grad_outputs, None)
                else:
                    grad_outputs, grad_inputs = copies(grad_outputs), copies(grad_inputs)
            else:
                for g in grad_outputs + grad_inputs:  # the size check inline: most nodes have none
                    if g is not None and g.numel() > KEEP_WHOLE:
                        if type(fn) is not ACCUMULATOR:  # a leaf's gradient is the answer: kept whole
                            node = node_of(fn)
                            grad_outputs = _arrived(node, grad_outputs, sent)
                            grad_inputs = _sent_on(node, grad_inputs, sent)
                        break
            append((fn, grad_outputs, grad_inputs))
        self.hook = hook

        # the learner's own hooks on an accumulator (fn: (pre-hooks, post-hooks)), which a run that
        # captures the leaves' gradients does not run: the capture runs them as the engine would
        self.accumulator_hooks: dict = {}
        self.captured = _capturing(ours, append, copying, self.accumulator_hooks)


def _capturing(ours, append, copying, yours: dict):
    """captured(fn): the hook on fn's leaf that records the gradient the run captures there, after
    running the learner's hooks on the accumulator fn as the engine would run them (pre-hooks, whose
    result is what the accumulator adds, then post-hooks, given no gradient sent on)."""
    def captured(fn):
        def leaf_hook(grad):
            if not ours():
                return
            outs = (grad.detach().clone() if copying[0] else grad,)
            pres, posts = yours.get(fn, ({}, {}))
            for pre in list(pres.values()):
                changed = pre(outs)
                if changed is not None:
                    outs = tuple(changed)
            for post in list(posts.values()):
                post((), outs)
            append((fn, outs, ()))
        return leaf_hook
    return captured


def _own_run(cpu_only: bool = True):
    """A function telling whether the node running now belongs to the recording's own run: the first
    step seen on the recording's thread fixes the run; a run started inside it on that thread (a
    learner's hook calling backward on its own graph) is counted, and bounded, as it would not end."""
    task: list[int | None] = [None]
    owner, ident = threading.get_ident(), threading.get_ident

    def ours() -> bool:
        now = _current_task()
        if now == task[0]:
            return True
        if task[0] is None and (ident() == owner or not cpu_only):
            task[0] = now  # (a GPU node runs on the engine's device thread)
            return True
        if ident() == owner and _runs_on_the_stack() > NESTED_LIMIT:
            raise NestedTooDeep(NESTED_LIMIT)
        return False
    return ours


_RUN_CODE = getattr(getattr(torch.autograd.graph, "_engine_run_backward", None), "__code__", None)


def _runs_on_the_stack() -> int:
    """How many backward runs are under way one inside another on this thread, by the frames of
    torch's Python entry to the engine (0 when torch has no such function: nothing is bounded)."""
    if _RUN_CODE is None:
        return 0
    count, frame = 0, sys._getframe(1)
    frame_or_none: Any = frame
    while frame_or_none is not None:
        frame = frame_or_none
        if frame.f_code is _RUN_CODE:
            count += 1
        frame_or_none = frame.f_back
    return count


def _arrived(node, grads: tuple, sent: dict) -> tuple:
    out = []
    for k, g in enumerate(grads):
        if isinstance(g, torch.Tensor) and g.numel() > KEEP_WHOLE:
            was = sent.pop((node, k), None)
            out.append(was[1] if was is not None and was[0] is g else Summary.of(g))
        else:
            out.append(g)
    return tuple(out)


def _sent_on(node, grads: tuple, sent: dict) -> tuple:
    out = []
    edges = node.next
    for j, g in enumerate(grads):
        if isinstance(g, torch.Tensor) and g.numel() > KEEP_WHOLE:
            summary = Summary.of(g)
            child, nr = edges[j] if j < len(edges) else (None, 0)
            if child is not None and not child.is_accumulator and len(child.consumers) == 1:
                sent[(child, nr)] = (g, summary)
            out.append(summary)
        else:
            out.append(g)
    return tuple(out)


def copies(grads: tuple, limit: int | None = KEEP_WHOLE) -> tuple:
    """Copies of what passes, as they are now (big ones as summaries, already a copy)."""
    return tuple(g.detach().clone() if isinstance(g, torch.Tensor) and (limit is None or g.numel() <= limit)
                 else keep(g, limit) for g in grads)


def _noop(*args):
    return None


def hook_every_node(graph, recording: Recorder, handles: list, capture: bool, beside: bool = True) -> list:
    """Hook every node with the recorder (handles collected for removal), but not the accumulators
    when capture (the run captures the leaves' gradients instead of running them); return the
    nodes' hook dicts that also hold the learner's hooks, as (node, dict, the lab's own key or
    None). A node's pre-hooks are seen only by registering one: each node is probed once. beside:
    the run stands for a backward() that would run the accumulators (False for the learner's own
    grad() call, which runs none), so the learner's hooks on them are run by the capture."""
    node_dicts: list = []
    for fn in graph.fns:  # appended one by one: a failure midway still removes what was added
        if capture and type(fn) is ACCUMULATOR:
            if beside:  # a recording beside the learner's backward(), which would run them
                _learner_accumulator_hooks(graph, fn, recording, node_dicts)
            continue
        handle = fn.register_hook(recording.hook)
        handles.append(handle)
        posts = handle.hooks_dict_ref()
        if len(posts) > 1:
            node_dicts.append((graph.node_of(fn), posts, handle.id))
        probe = fn.register_prehook(_noop)
        pres = probe.hooks_dict_ref()
        probe.remove()
        if pres:
            node_dicts.append((graph.node_of(fn), pres, None))
    return node_dicts


def _learner_accumulator_hooks(graph, fn, recording: Recorder, node_dicts: list) -> None:
    """The learner's node hooks on an accumulator that the run will not run (it captures the leaf's
    gradient instead): kept for the capture to run, and listed with the other nodes' hook dicts, so
    that they are wrapped and told as theirs. Seen only by registering a hook of each kind (each
    removed at once)."""
    probe = fn.register_prehook(_noop)
    pres = probe.hooks_dict_ref()
    probe.remove()
    probe = fn.register_hook(_noop)
    posts = probe.hooks_dict_ref()
    probe.remove()
    if pres or posts:
        recording.accumulator_hooks[fn] = (pres, posts)
        node = graph.node_of(fn)
        node_dicts.extend((node, hooks, None) for hooks in (pres, posts) if hooks)


def capture_leaves(graph, recording: Recorder, handles: list, leaves: list) -> None:
    """A hook on each of those leaves of graph, after the learner's own: it sees the gradient the
    engine captures."""
    wanted = {id(t) for t in leaves}
    for fn in graph.accumulators():
        leaf = fn.variable
        if id(leaf) not in wanted:
            continue
        had = leaf._backward_hooks
        handles.append(_LeafHandle(leaf, leaf.register_hook(recording.captured(fn)), had is None))


class _LeafHandle:
    """The capture hook on a leaf, removed as it came: a leaf that had no hooks has none after."""

    __slots__ = ("handle", "leaf", "none_before")

    def __init__(self, leaf, handle, none_before: bool):
        self.leaf, self.handle, self.none_before = leaf, handle, none_before

    def remove(self) -> None:
        self.handle.remove()
        if self.none_before and not self.leaf._backward_hooks:
            self.leaf._backward_hooks = None
