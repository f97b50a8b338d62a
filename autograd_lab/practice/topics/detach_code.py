"""A code task on detach(): the straight-through trick. Write f(x) whose value is round(x) (or
floor, or sign) but whose gradient is that of the identity, using only detach(). The check runs the
function on seeded random inputs of several shapes and looks at its values and at the gradient
torch.autograd.grad computes through it."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...i18n import N_, _
from ..checking import WrongForm
from ..code_task import CodeExercise, CodeForm, call
from ..exercise import Diagnoser
from ..registry import register

OPS = {"round": torch.round, "floor": torch.floor, "sign": torch.sign}
SHAPES = [(4,), (2, 3), (3, 1, 2)]
#: the gradient that reached x, said in Behaviour.describe()
GRADS = {"right": N_("all ones"), "zeros": N_("all zeros"), "none": N_("None (no path from x)"),
         "no_graph": N_("missing (the result does not require grad)"), "other": N_("not all ones")}


@dataclass(frozen=True)
class Behaviour:
    """What the function did on every input: are its values op(x), and what gradient reached x
    (right: all ones; zeros; none: no path from x; no_graph: the result does not require grad;
    other)."""

    values: bool
    grad: str

    def describe(self) -> str:
        said = (_("its values are right, and the gradient that reaches x is {gradient}") if self.values else
                _("its values are not the ones asked for, and the gradient that reaches x is {gradient}"))
        return said.format(gradient=_(GRADS[self.grad]))


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
                raise WrongForm(_("Your function raised RuntimeError: {message}").format(
                    message=str(out).splitlines()[0]))
            if not isinstance(out, torch.Tensor):
                raise WrongForm(_("Your function returned {type}; return a tensor of x's shape.").format(
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


@register("straight_through", N_("Only detach(): a value from round, a gradient from the identity"), place=105)
def straight_through(seed=None) -> CodeExercise:
    names = list(OPS)
    name = "round" if seed is None else names[int(seed) % len(names)]
    op = OPS[name]
    form = CodeForm(probe(op, samples(seed)), "ex.check(straight_through)", "straight_through(x)")
    right = f"x + (torch.{name}(x) - x).detach()"
    diagnosers = [
        Diagnoser(_("Your values are {op}(x), but x.grad is all zeros: {op}'s own derivative is zero "
                    "wherever it is defined. Keep a path from x whose value you cancel with a detached "
                    "correction.").format(op=name), when=lambda b: b.values and b.grad == "zeros", key="op_gradient"),
        Diagnoser(_("The result does not require grad: everything that depends on x was detached. Detach "
                    "only the correction, not the path from x."), when=lambda b: b.grad == "no_graph",
                  key="all_detached"),
        Diagnoser(_("The gradient is right, but the values are not {op}(x): detach() changes no value, "
                    "it only hides a term from backward. The value must still be {op}(x).").format(op=name),
                  when=lambda b: not b.values and b.grad == "right", key="values_changed"),
        Diagnoser(_("x gets no gradient at all: no recorded path leads from x to your result."),
                  when=lambda b: b.grad == "none", key="no_path"),
    ]
    solution = _("def straight_through(x):\n    return {right}\n\nex.check(straight_through)\n\n"
                 "The value is x + {op}(x) - x = {op}(x). For backward the detached part is a constant, "
                 "so the result is x plus a constant: its gradient is 1 everywhere. This is the "
                 "straight-through estimator, used to train through rounding (quantisation).").format(
                     right=right, op=name)
    return CodeExercise(
        seed=seed, intro=_("torch.{op} has a zero (or no) gradient, which stops training. The "
                           "straight-through trick keeps its value but lets the gradient through.").format(op=name),
        setup="def straight_through(x):\n    # " + _("value: torch.{op}(x); gradient: that of x itself").format(op=name)
              + "\n    return ____",
        question=_("Write straight_through(x) so that its value is torch.{op}(x) and x.grad after "
                   "straight_through(x).sum().backward() is all ones, using only detach() (no custom Function, "
                   "no hooks). The check runs it on random x of several shapes.").format(op=name),
        answer_form=_("your function straight_through(x)"), form=form, expected=Behaviour(True, "right"),
        hints=[_("detach() makes a term a constant for backward without changing its value."),
               _("x + c has gradient 1. Choose c, detached, so that x + c equals torch.{op}(x).").format(op=name),
               f"c = (torch.{name}(x) - x).detach()"],
        solution_text=solution, diagnosers=diagnosers, example="ex.check(straight_through)",
        kind=_("what your code does"),
        praise=_("Value from torch.{op}, gradient from the identity: the straight-through estimator.").format(op=name))
