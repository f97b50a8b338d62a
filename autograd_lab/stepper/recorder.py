"""The recording's post-hook on each node: what arrived at the node and what it sent on, appended in
the order the engine ran them. This runs once per node of the learner's graph, so it does as little
as it can: values are kept as the engine gave them (references), big ones as summaries so that the
memory a recording holds stays bounded, and copies only where the learner's hooks may edit a value
later (a hook that edits a gradient in place must not rewrite what earlier steps showed). Every
value a step shows comes from this one run: there is no second run to read a value later."""
from __future__ import annotations

from operator import methodcaller

import torch

from ..graph import ACCUMULATOR
from ..tensors import KEEP_WHOLE, Summary, keep
from .registry import STATE, TorchRegistration

_current_node = torch._C._current_autograd_node  # the node the engine is running, from a hook
_sequence_nr = methodcaller("_sequence_nr")


class Recorder:
    """order: (node fn, grad_outputs, grad_inputs) per step, in the engine's order. copying: set
    before the run when the learner has hooks on the graph. hook: the one post-hook registered on
    every node of graph; it asks the engine which node is running (torch._C._current_autograd_node)
    only when it needs the node, so that registering costs no closure per node.

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

    def __init__(self, graph):
        self.order: list = []
        self.copying = [False]
        # A big gradient sent on to a node with no other sender arrives there as the same tensor:
        # its summary is made once. Held only until that node runs (the engine holds it till then).
        sent: dict = {}
        append, copying, node_of, running = self.order.append, self.copying, graph.node_of, _current_node

        def hook(grad_inputs, grad_outputs):
            fn = running()
            if copying[0]:  # a later hook of the learner's may edit a value in place: copies
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


def hook_every_node(graph, recording: Recorder, handles: list, probe_all: bool) -> list:
    """Hook every node with the recorder (handles collected for removal); return the nodes' hook
    dicts that also hold the learner's hooks, as (node, dict, the lab's own key or None)."""
    node_dicts = []
    old_leaves, made_before = STATE.old_leaves, STATE.before_seq
    fns, hook, first = list(graph.fns), recording.hook, len(handles)
    with TorchRegistration():  # the lab's own hooks stay out of the registry
        for fn in fns:  # appended one by one: a failure midway still removes what was added
            handles.append(fn.register_hook(hook))
        # a node hook of the learner's can be only where one was registered since the registry was
        # installed (probe_all), or on a node made before it (unseen): a leaf of old_leaves, or a
        # node with a smaller sequence number (an accumulator's is the largest there is)
        if probe_all:
            probed = fns
        else:
            old = {id(fn) for fn in graph.accumulators() if fn.variable in old_leaves} if old_leaves else set()
            probed = [] if not old and min(map(_sequence_nr, fns)) >= made_before else [
                fn for fn in fns if id(fn) in old or fn._sequence_nr() < made_before]
        handle_of = dict(zip(fns, handles[first:], strict=True)) if probed else {}
        for fn in probed:
            node, handle = graph.node_of(fn), handle_of[fn]
            posts = handle.hooks_dict_ref()
            if len(posts) > 1:
                node_dicts.append((node, posts, handle.id))
            probe = fn.register_prehook(_noop)
            pres = probe.hooks_dict_ref()
            probe.remove()
            if pres:
                node_dicts.append((node, pres, None))
    return node_dicts
