"""Record one real backward(): every node the engine ran, in the order it ran them, with the
gradients that arrived and the gradients it sent on, accumulators included.

The recording runs the engine for real (torch.autograd.backward with retain_graph=True) with one
post-hook per node, and gives back everything it touched: each leaf's .grad is set aside before the
run and put back after it, so the learner's tensors, their versions and their graph are as before."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import torch

from ..errors import LabInputError
from ..graph import FREED, Graph, Node, freed_message, snapshot
from ..names import caller_names, learner_items, name_in
from ..tensors import KEEP_WHOLE, keep


class TraceError(LabInputError):
    """Bad input to trace(): the message says what is wrong and what to write instead."""


@dataclass(eq=False)
class Step:
    index: int  # 0-based position in the engine's order
    node: Node
    grad_outputs: tuple  # gradients arriving at the node (tensor, Summary or None)
    grad_inputs: tuple  # what it sends on, aligned with node.next (empty for an accumulator)
    grad_before: object = None  # accumulator only: the leaf's .grad before this backward
    grad_after: object = None  # accumulator only: what backward() would leave in .grad

    trace: "Trace | None" = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def ready(self) -> tuple:
        """The nodes that were ready to run when this one was picked (itself included)."""
        return self.trace.ready_sets()[self.index]

    @property
    def leaf(self) -> torch.Tensor | None:
        return self.node.leaf

    def __repr__(self) -> str:
        return f"Step({self.index + 1}, {self.node.title})"


@dataclass(eq=False)
class Trace:
    """The recording of one backward. trace.steps in engine order; trace.grad(leaf) per leaf."""

    output: torch.Tensor = field(repr=False)
    gradient: torch.Tensor | None = field(repr=False)
    graph: Graph = field(repr=False)
    steps: list[Step]
    names: Mapping = field(default_factory=dict, repr=False)
    _ready: list | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def grad(self, t: torch.Tensor):
        """The gradient backward() would accumulate into the leaf t (None if t is not reached)."""
        for step in self.steps:
            if step.node.leaf is t:
                return step.grad_outputs[0]
        return None

    def ready_sets(self) -> list[tuple]:
        """Before each step, the nodes that were ready: the engine's bookkeeping replayed, once."""
        if self._ready is None:
            self._ready = _replay_ready(self.graph, self.steps)
        return self._ready

    def apply(self, retain_graph: bool = False) -> None:
        """Accumulate into .grad for real, as output.backward(gradient) does."""
        torch.autograd.backward(self.output, self.gradient, retain_graph=retain_graph)

    def __repr__(self) -> str:
        names = ", ".join(s.node.title for s in self.steps[:6])
        more = ", ..." if len(self.steps) > 6 else ""
        return f"<Trace: {len(self.steps)} steps: {names}{more}>"


def trace(output, gradient=None, names: Mapping | None = None) -> Trace:
    """Run output.backward(gradient) once for real and record every step the engine took.

    names maps the learner's variable names to values (default: the caller's variables); it labels
    the nodes and protects the .grad of non-leaf tensors that retain_grad().

    >>> x = torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)
    >>> t = trace((x ** 2).mean())
    >>> [s.name for s in t.steps]
    ['MeanBackward0', 'PowBackward0', 'AccumulateGrad']
    >>> t.grad(x)
    tensor([0.6667, 1.3333, 2.0000], dtype=torch.float64)
    >>> x.grad is None
    True
    """
    if names is None:
        names = caller_names()
    what = name_in(names, output) or "the output"
    gradient = check_input(output, gradient, what)
    # A freed graph is found by the engine itself when it reaches the first freed node.
    return _record(output, gradient, snapshot(output, names), names, what)


def check_input(output, gradient, what: str = "the output"):
    """Refuse what backward() would refuse, with a message that teaches; returns the gradient."""
    if not isinstance(output, torch.Tensor):
        raise TraceError(
            f"{what} is a {type(output).__name__}, not a tensor. Pass the tensor you would call "
            f".backward() on, e.g. z = (x ** 2).mean(), then %backward z.")
    if output.grad_fn is None:
        if output.requires_grad:
            raise TraceError(
                f"{what} is a leaf tensor (you created it, with requires_grad=True): backward() on "
                f"it only sets {what}.grad, there is no graph to step through. Step through a result "
                f"computed from it, e.g. %backward ({what} ** 2).sum()")
        raise TraceError(
            f"{what} has no grad_fn, so autograd recorded no graph for it. Either none of its "
            f"inputs has requires_grad=True, or it was computed under torch.no_grad(), or it comes "
            f"from .detach(). Create the input with requires_grad=True, e.g. "
            f"x = torch.tensor([1., 2., 3.], requires_grad=True), and compute {what} again.")
    if gradient is None:
        if output.numel() != 1:
            raise TraceError(
                f"{what} has shape {tuple(output.shape)}, and backward() can only start by itself "
                f"from a single number. Reduce it first: %backward {what}.sum() (or .mean()), or "
                f"give the starting gradient: %backward {what} --gradient torch.ones_like({what})")
        return None
    if not isinstance(gradient, torch.Tensor):
        try:
            gradient = torch.as_tensor(gradient, dtype=output.dtype, device=output.device)
        except (TypeError, ValueError, RuntimeError):
            raise TraceError(
                f"the gradient must be a tensor shaped like {what}, got {type(gradient).__name__}. "
                f"Try gradient=torch.ones_like({what}).") from None
    if gradient.shape != output.shape:
        raise TraceError(
            f"the gradient has shape {tuple(gradient.shape)} but {what} has shape "
            f"{tuple(output.shape)}: they must match, one number per element of {what}. "
            f"Try gradient=torch.ones_like({what}).")
    return gradient


def _record(output, gradient, graph: Graph, names: Mapping, what: str) -> Trace:
    leaves = [n.leaf for n in graph.leaves()]
    # Set aside every .grad the run would write, and put each back afterwards: the same objects,
    # so neither their values nor their versions change.
    kept_leaf_grads = [leaf.grad for leaf in leaves]
    retained = list(_retained_in(names, graph))
    kept_retained = [t.grad for t in retained]
    order: list = []
    append = order.append

    def recorder(node):
        # A leaf's gradient is the answer itself: kept whole, whatever its size. Others are summarised
        # as they pass when big, so the memory a recording holds stays bounded (checked inline: this
        # runs once per node of the learner's graph).
        if node.is_accumulator:
            def hook(grad_inputs, grad_outputs):
                append((node, grad_outputs, grad_inputs))
        else:
            def hook(grad_inputs, grad_outputs):
                for g in grad_outputs + grad_inputs:
                    if g is not None and g.numel() > KEEP_WHOLE:
                        grad_outputs, grad_inputs = _small(grad_outputs), _small(grad_inputs)
                        break
                append((node, grad_outputs, grad_inputs))
        return hook

    handles = []
    try:
        for leaf in leaves:
            leaf.grad = None
        for node in graph.nodes:
            handles.append(node.fn.register_hook(recorder(node)))
        torch.autograd.backward(output, gradient, retain_graph=True)
    except RuntimeError as err:
        if FREED in str(err):
            raise TraceError(freed_message(what)) from None
        raise
    finally:
        for handle in handles:
            handle.remove()
        for leaf, g in zip(leaves, kept_leaf_grads):
            leaf.grad = g
        for t, g in zip(retained, kept_retained):
            t.grad = g

    steps = [Step(i, node, g_out, g_in) for i, (node, g_out, g_in) in enumerate(order)]
    grad_before = {node: g for node, g in zip(graph.leaves(), kept_leaf_grads)}
    for step in steps:
        if step.node.is_accumulator:
            before = grad_before.get(step.node)
            step.grad_before = keep(before)
            incoming = step.grad_outputs[0]
            if before is None or not isinstance(incoming, torch.Tensor):
                step.grad_after = incoming
            else:
                step.grad_after = keep(before.detach() + incoming)
    result = Trace(output, gradient, graph, steps, names)
    for step in steps:
        step.trace = result
    return result


def _small(grads: tuple) -> tuple:
    """The gradients as kept in a step: references, except big ones, which become summaries."""
    return tuple(keep(g) for g in grads)


def _retained_in(names: Mapping, graph: Graph):
    seen = set()
    for _, value in learner_items(names):
        if (isinstance(value, torch.Tensor) and value.grad_fn is not None and value.retains_grad
                and graph.node_of(value.grad_fn) is not None and id(value) not in seen):
            seen.add(id(value))
            yield value


def _replay_ready(graph: Graph, steps: list[Step]) -> list[tuple]:
    """Replay the engine's bookkeeping: before each step, which nodes had all their gradients."""
    waiting = graph.dependencies()
    ready = {graph.root}
    out = []
    for step in steps:
        out.append(tuple(sorted(ready, key=lambda n: -n.seq)))
        ready.discard(step.node)
        for child, _ in step.node.next:
            if child is None:
                continue
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.add(child)
    return out
