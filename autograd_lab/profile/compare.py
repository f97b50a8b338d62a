"""The myth check: run one step with its data passed as is, cloned, detached, or both, and measure
what each does to the graph and to the backward time. A copy (clone) stays in the graph; only
detach() cuts it, whether or not the memory is shared."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import LabInputError
from ..explain.wording import sentences
from ..format import quote
from .run import given
from ..i18n import _
from ..names import label
from ..storage.copies import copies
from ..tensors import shares_storage
from . import measure as m

AS_IS = "as is"


def variants_for(data: torch.Tensor) -> dict:
    """The ways the data can be passed: as is, or as one of the storage lab's tensor copies
    (detach(), clone(), clone().detach(), detach().clone(), .data, a view, torch.tensor(a)).

    >>> list(variants_for(torch.ones(2)))[:4]
    ['as is', 'detach()', 'clone()', 'clone().detach()']
    """
    found = {AS_IS: lambda t: t}
    found.update((c.key, c.take) for c in copies(data) if not c.numpy)
    return found


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
    grad_elements: int = 0  # gradient elements the backward computes for leaves, at the last step

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
        # The work a backward does is the gradients it computes: a data tensor that requires grad
        # gets a dense gradient as big as itself at every step, whatever the node count.
        least = min(r.grad_elements for r in self.rows)
        cut = [r.variant for r in self.rows if r.grad_elements == least and r.growth == 0]
        said = [_("Least backward work ({elements} gradient elements per step, graph flat): {variants}.").format(
            elements=f"{least:,}", variants=_variants(cut))]
        heavy = [r for r in self.rows if r.grad_elements > least]
        if heavy:
            worst = max(heavy, key=lambda r: r.grad_elements)
            said.append(_("{variant} computes {elements} gradient elements per step: the data's own gradient is "
                          "computed and written at every step.").format(
                              variant=label(worst.variant), elements=f"{worst.grad_elements:,}"))
        copied = [r.variant for r in self.rows if not r.shares_storage and r.variant not in cut]
        if copied:
            said.append(_("A copy alone does not cut the graph: {variants} still does more.").format(
                variants=_variants(copied)))
        shared = [r.variant for r in self.rows if r.shares_storage and r.variant in cut]
        if shared:
            said.append(_("Sharing memory costs nothing: {variants} shares storage with the data.").format(
                variants=_variants(shared)))
        return sentences(said)

    def __repr__(self) -> str:
        return f"Comparison({', '.join(r.variant for r in self.rows)}): {self.verdict}"


def _variants(names) -> str:
    """Variants named in a verdict: each shortened when long, the whole list bounded."""
    return quote(", ".join(label(n) for n in names))


def _variant(spec, known: dict):
    if isinstance(spec, str):
        if spec not in known:
            raise LabInputError(_("unknown variant {given}. Use one of {known}, or a pair like "
                                  "('x * 1', lambda t: t * 1)").format(
                                      given=given(spec), known=", ".join(map(repr, known))))
        return spec, known[spec]
    if isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]):
        return str(spec[0]), spec[1]
    raise LabInputError(_("a variant is a name or a (name, function) pair, not {given}. "
                          "Type: variants=('as is', 'detach()')").format(given=given(spec)))


def run_compare(step_fn, data, variants, steps: int, warmup: int) -> Comparison:
    if not isinstance(data, torch.Tensor):
        raise LabInputError(_("compare_inputs needs the data as a tensor, not {type}. "
                              "Type: compare_inputs(step, data)").format(type=label(type(data).__name__)))
    if steps < 1 or warmup < 0:
        raise LabInputError(_("steps must be 1 or more and warmup 0 or more. "
                              "Type: compare_inputs(step, data, steps=5)"))
    known = variants_for(data)
    specs = [_variant(v, known) for v in variants]
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
            raise LabInputError(_("the step must return the loss (a tensor with a grad_fn), or (loss, carry). "
                                  "Type: compare_inputs(lambda d: model(d).pow(2).mean(), data)"))
        nodes = m.reachable(loss)  # empty when nothing in the step requires grad
        counts.append(len(nodes))
        leaves = m.leaves_of(nodes)
        elements = sum(leaf.numel() for leaf in leaves)
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
               backward[-1], steps=len(counts), grad_elements=elements)
