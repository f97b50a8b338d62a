"""The myth check: run one step with its data passed as is, cloned, detached, or both, and measure
what each does to the graph and to the backward time. A copy (clone) stays in the graph; only
detach() cuts it, whether or not the memory is shared."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import LabInputError
from ..tensors import shares_storage
from . import measure as m

VARIANTS = {
    "as is": lambda t: t,
    "clone()": lambda t: t.clone(),
    "detach()": lambda t: t.detach(),
    "clone().detach()": lambda t: t.clone().detach(),
    "detach().clone()": lambda t: t.detach().clone(),
    ".data": lambda t: t.data,
}


@dataclass
class Row:
    variant: str
    requires_grad: bool  # the input the step received
    shares_storage: bool  # ... lives in the memory of the tensor it was made from
    nodes: int  # graph size at the first step
    last_nodes: int  # ... and at the last step
    forward_ms: float  # median over the timed steps
    backward_ms: float  # median over the timed steps
    last_backward_ms: float
    steps: int = 1  # steps run, warm-up included

    @property
    def growth(self) -> float:
        """Nodes added per step: 0 when the graph stays flat."""
        return 0.0 if self.steps < 2 else (self.last_nodes - self.nodes) / (self.steps - 1)


@dataclass
class Comparison:
    """One row per variant. Node counts and flags are deterministic; times vary between runs."""

    rows: list

    def row(self, variant: str) -> Row:
        for r in self.rows:
            if r.variant == variant:
                return r
        raise KeyError(variant)

    def ratio(self, slow: str, fast: str) -> float:
        """How many times slower slow's backward was than fast's (median over the timed steps)."""
        return self.row(slow).backward_ms / max(self.row(fast).backward_ms, 1e-6)

    @property
    def verdict(self) -> str:
        small = min(r.last_nodes for r in self.rows)
        cut = [r.variant for r in self.rows if r.last_nodes == small and r.growth == 0]
        copies = [r.variant for r in self.rows if not r.shares_storage and r.variant not in cut]
        words = f"Smallest graph ({small} nodes, flat): {', '.join(cut)}."
        if copies:
            words += f" A copy alone does not cut the graph: {', '.join(copies)} stays bigger."
        shared = [r.variant for r in self.rows if r.shares_storage and r.variant in cut]
        if shared:
            words += f" Sharing memory costs nothing: {', '.join(shared)} shares storage with the data."
        return words

    def __repr__(self) -> str:
        head = ["variant", "requires grad", "shares storage", "nodes", "growth/step", "forward", "backward"]
        body = [[r.variant, str(r.requires_grad), str(r.shares_storage), f"{r.nodes} -> {r.last_nodes}"
                 if r.last_nodes != r.nodes else str(r.nodes), f"{r.growth:g}", f"{r.forward_ms:.2f} ms",
                 f"{r.backward_ms:.2f} ms"] for r in self.rows]
        widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [head] + body]
        return "\n".join(lines + [self.verdict])


def _variant(spec):
    if isinstance(spec, str):
        if spec not in VARIANTS:
            raise LabInputError(f"unknown variant {spec!r}. Use one of {', '.join(map(repr, VARIANTS))}, "
                                "or a pair like ('x * 1', lambda t: t * 1)")
        return spec, VARIANTS[spec]
    if isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]):
        return str(spec[0]), spec[1]
    raise LabInputError(f"a variant is a name or a (name, function) pair, not {spec!r}. "
                        "Type: variants=('as is', 'detach()')")


def run_compare(step_fn, data, variants, steps: int, warmup: int) -> Comparison:
    if not isinstance(data, torch.Tensor):
        raise LabInputError(f"compare_inputs needs the data as a tensor, not {type(data).__name__}. "
                            "Type: compare_inputs(step, data)")
    if steps < 1 or warmup < 0:
        raise LabInputError("steps must be 1 or more and warmup 0 or more. Type: compare_inputs(step, data, steps=5)")
    specs = [_variant(v) for v in variants]
    return Comparison([_run_one(step_fn, data, name, fn, steps, warmup) for name, fn in specs])


def _run_one(step_fn, data, name, fn, steps, warmup) -> Row:
    carry, counts, forward, backward, flags = data, [], [], [], (False, False)
    clock = m.Clock(cuda=m.on_gpu(data))
    for i in range(warmup + steps):
        given = fn(carry)
        # flags of the last step: with a carried state, that is the input that carries history
        flags = (bool(given.requires_grad), shares_storage(given, carry))
        clock.start()
        out = step_fn(given)
        loss, carry = out if isinstance(out, tuple) else (out, data)
        fwd = clock.lap()
        if not isinstance(loss, torch.Tensor):
            raise LabInputError("the step must return the loss (a tensor with a grad_fn), or (loss, carry). "
                                "Type: compare_inputs(lambda d: model(d).pow(2).mean(), data)")
        nodes = m.reachable(loss.grad_fn)  # empty when nothing in the step requires grad
        counts.append(len(nodes))
        leaves = m.leaves_of(nodes)
        clock.start()
        if leaves:
            # a carried state links this graph to the previous steps' graphs: keep them walkable
            torch.autograd.grad(loss, leaves, retain_graph=carry is not data, allow_unused=True)
        bwd = clock.lap()
        if i >= warmup:
            forward.append(fwd)
            backward.append(bwd)
        del loss, nodes, leaves
    return Row(name, flags[0], flags[1], counts[0], counts[-1], m.median(forward), m.median(backward),
               backward[-1], steps=len(counts))
