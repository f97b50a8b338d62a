"""A code task on detach(): the straight-through trick. Write f(x) whose value is round(x) (or
floor, or sign) but whose gradient is that of the identity, using only detach(). The check runs the
function on seeded random inputs of several shapes and looks at its values and at the gradient
torch.autograd.grad computes through it."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...words import words_of
from ..checking import WrongForm
from ..code_task import CodeExercise, CodeForm, call
from ..exercise import Diagnoser
from ..registry import register
from .common import stated

OPS = {"round": torch.round, "floor": torch.floor, "sign": torch.sign}
SHAPES = [(4,), (2, 3), (3, 1, 2)]
W = words_of(__name__)


@dataclass(frozen=True)
class Behaviour:
    """What the function did on every input: are its values op(x), and what gradient reached x
    (right: all ones; zeros; none: no path from x; no_graph: the result does not require grad;
    other)."""

    values: bool
    grad: str

    def describe(self) -> str:
        said = W["behaviour"]("values_right") if self.values else W["behaviour"]("values_wrong")
        # the table [gradients] says each of the probe's names: "right", "zeros", "none", "no_graph", "other"
        return said.format(gradient=W["gradients"](self.grad))


def samples(seed) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
    return [torch.rand(s, generator=gen, dtype=torch.float64) * 6 - 3 for s in SHAPES]


def probe(op, inputs):
    def run(fn) -> Behaviour:
        values, grads = True, []
        for sample in inputs:
            x = sample.clone().requires_grad_()
            out = call(fn, x, what="Your function")
            if isinstance(out, RuntimeError):
                raise WrongForm(W["probe"]("raised").format(
                    message=str(out).splitlines()[0]))
            if not isinstance(out, torch.Tensor):
                raise WrongForm(W["probe"]("returned").format(
                    type=type(out).__name__))
            values = values and tuple(out.shape) == tuple(sample.shape) and bool(
                torch.allclose(out.detach().double(), op(sample), rtol=0, atol=1e-12))
            if not out.requires_grad:
                grads.append("no_graph")
                continue
            (g,) = torch.autograd.grad(out.sum(), x, allow_unused=True)
            if g is None:
                grads.append("none")
            elif torch.allclose(g, torch.ones_like(g)):
                grads.append("right")
            elif not g.any():
                grads.append("zeros")
            else:
                grads.append("other")
        return Behaviour(values, next((g for g in grads if g != "right"), "right"))
    return run


@register("straight_through", W["straight_through"]["title"], lesson=2)
def straight_through(seed=None) -> CodeExercise:
    t = W["straight_through"]
    d = t["diagnoses"]
    names = list(OPS)
    name = "round" if seed is None else names[int(seed) % len(names)]
    op = OPS[name]
    form = CodeForm(probe(op, samples(seed)), "ex.check(straight_through)", "straight_through(x)")
    right = f"x + (torch.{name}(x) - x).detach()"
    diagnosers = [
        Diagnoser(d("op_gradient").format(op=name), when=lambda b: b.values and b.grad == "zeros", key="op_gradient"),
        Diagnoser(d("all_detached"), when=lambda b: b.grad == "no_graph", key="all_detached"),
        Diagnoser(d("values_changed").format(op=name), when=lambda b: not b.values and b.grad == "right",
                  key="values_changed"),
        Diagnoser(d("no_path"), when=lambda b: b.grad == "none", key="no_path"),
    ]
    return CodeExercise(
        seed=seed, setup="def straight_through(x):\n    # " + t("setup_comment").format(op=name) + "\n    return ____",
        form=form, expected=Behaviour(True, "right"), solution_text=t("solution").format(right=right, op=name),
        diagnosers=diagnosers, example="ex.check(straight_through)", refuse_data=True,
        **stated(t, intro=t("intro").format(op=name), question=t("question").format(op=name),
                 hints=[hint.format(op=name) for hint in t.all("hints")] + [f"c = (torch.{name}(x) - x).detach()"],
                 praise=t("praise").format(op=name)))
