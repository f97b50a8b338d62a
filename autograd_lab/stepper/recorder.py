"""The recording's post-hook on each node: what arrived at the node and what it sent on, appended in
the order the engine ran them. This runs once per node of the learner's graph, so it does as little
as it can: values are kept as the engine gave them (references), big ones as summaries so that the
memory a recording holds stays bounded, and copies only where the learner's hooks may edit a value
later (a hook that edits a gradient in place must not rewrite what earlier steps showed)."""
from __future__ import annotations

import torch

from ..tensors import KEEP_WHOLE, Summary, keep


class Recorder:
    """order: (node, grad_outputs, grad_inputs) per step, in the engine's order. copying: set before
    the run when the learner has hooks on the graph.

    >>> r = Recorder()
    >>> callable(r.hook(type("N", (), {"is_accumulator": True})()))
    True
    """

    def __init__(self):
        self.order: list = []
        self.copying = [False]
        # A big gradient sent on to a node with no other sender arrives there as the same tensor:
        # its summary is made once. Held only until that node runs (the engine holds it till then).
        self._sent: dict = {}

    def hook(self, node):
        append, copying, sent = self.order.append, self.copying, self._sent
        # A leaf's gradient is the answer itself: kept whole, whatever its size.
        if node.is_accumulator:
            def on_leaf(grad_inputs, grad_outputs):
                if copying[0]:
                    grad_outputs = copies(grad_outputs, None)
                append((node, grad_outputs, grad_inputs))
            return on_leaf

        def on_node(grad_inputs, grad_outputs):
            if copying[0]:
                grad_outputs, grad_inputs = copies(grad_outputs), copies(grad_inputs)
            else:
                for g in grad_outputs + grad_inputs:  # the size check inline: most nodes have none
                    if g is not None and g.numel() > KEEP_WHOLE:
                        grad_outputs = _arrived(node, grad_outputs, sent)
                        grad_inputs = _sent_on(node, grad_inputs, sent)
                        break
            append((node, grad_outputs, grad_inputs))
        return on_node


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
