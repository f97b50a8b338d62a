"""The steps of a recording, made from what the recorder appended when they are first asked for
(a recording of a 10,000-node graph would otherwise make 10,000 objects no one might read)."""
from __future__ import annotations

import weakref

import torch

from ..graph import Graph, Node
from ..tensors import keep


class Step:
    """One node the engine ran. A plain class with slots: a walk of a big graph makes thousands.
    trace is the Trace it belongs to, held weakly: a trace holds its steps, and a step holding its
    trace back would make a cycle that keeps the learner's graph alive until the collector runs."""

    __slots__ = ("_trace", "grad_after", "grad_before", "grad_inputs", "grad_outputs", "index", "node")

    def __init__(self, index: int, node: Node, grad_outputs: tuple, grad_inputs: tuple, trace):
        self.index = index  # 0-based position in the engine's order
        self.node = node
        self.grad_outputs = grad_outputs  # the gradients arriving at the node (tensor, Summary or None)
        self.grad_inputs = grad_inputs  # what the node sends on, aligned with node.next (none for an accumulator)
        self.grad_before: object = None  # accumulator only: the leaf's .grad before this backward
        self.grad_after: object = None  # accumulator only: what backward() would leave in .grad
        self._trace = weakref.ref(trace) if trace is not None else None

    @property
    def trace(self):
        """The Trace this step belongs to (None once it is gone)."""
        return self._trace() if self._trace is not None else None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def ready(self) -> tuple:
        """The nodes that were ready to run when this one was picked (itself included)."""
        trace = self.trace
        return trace.ready_at(self.index) if trace is not None else ()

    @property
    def leaf(self) -> torch.Tensor | None:
        return self.node.leaf

    def __repr__(self) -> str:
        return f"Step({self.index + 1}, {self.node.title})"


def accumulated(graph: Graph, order: list, kept_leaf_grads: list) -> dict:
    """For each accumulator whose leaf held a .grad: what it held and what backward() would leave."""
    held = {fn: g for fn, g in zip(graph.accumulators(), kept_leaf_grads, strict=True) if g is not None}
    if not held:
        return {}
    out = {}
    for fn, g_out, _g_in in order:
        before = held.get(fn)
        if before is not None:
            incoming = g_out[0]
            after = keep(before.detach() + incoming) if isinstance(incoming, torch.Tensor) else incoming
            out[fn] = (keep(before), after)
    return out


def steps_of(result) -> list[Step]:
    """The steps in the engine's order; an accumulator's step also says what .grad held before
    and what backward() would leave there."""
    by_fn, accumulated = result.graph._by_fn, result.accumulated
    steps = [Step(i, by_fn[fn], g_out, g_in, result) for i, (fn, g_out, g_in) in enumerate(result.order or ())]
    for step in steps:
        if step.node.is_accumulator:
            step.grad_before, step.grad_after = accumulated.get(step.node.fn, (None, step.grad_outputs[0]))
    result.order = None
    return steps
