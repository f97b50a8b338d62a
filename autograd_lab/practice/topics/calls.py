"""Exercises about how backward() is called: two leaves at once, a non-scalar output with an
explicit gradient, and two backward calls that accumulate."""
from __future__ import annotations

import torch

from ...format import fmt
from ...i18n import N_, _
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ..messages import SHARED
from ..registry import register
from ..run import grad, run, tensor_code, variant_values
from .common import on_x, x_grad, x_line

TYPED = N_("x.grad typed as 3 numbers, e.g. a list")

@register("weighted_mean_square", N_("Two leaves: a weighted mean of squares"), place=40)
def weighted_mean_square(seed=None) -> Exercise:
    w_line = tensor_code("w", variant_values(seed, [3.0, 1.0, 0.5], salt=1))
    line = x_line(seed)
    setup = f"{w_line}\n{line}\nz = (w * x**2).mean()\nz.backward()"
    ns = run(setup)
    gw, gx = ns["w"].grad.clone(), ns["x"].grad.clone()
    summed = run(f"{w_line}\n{line}\n(w * x**2).sum().backward()")
    form = PartsForm([("w.grad", TensorForm("w.grad", "w")), ("x.grad", TensorForm("x.grad", "x"))])
    diagnosers = [
        Diagnoser(_("You swapped the two: give w.grad first, then x.grad."), (gx, gw)),
        Diagnoser(_("For w.grad the 1/n of the mean is missing."), part=0, value=summed["w"].grad),
        Diagnoser(_("For x.grad the 1/n of the mean is missing."), part=1, value=summed["x"].grad),
        Diagnoser(_("For x.grad the weights are missing: each term w_i * x_i**2 keeps its w_i when "
                    "you differentiate with respect to x_i."), part=1, value=grad(f"{line}\n(x**2).mean().backward()")),
        Diagnoser(_("For x.grad the power rule brings the exponent down as a factor, d(x**p)/dx = p * x**(p-1); "
                    "that factor is missing."), part=1,
                  value=grad(f"{w_line}\n{line}\n(w * x**2 / 2).mean().backward()")),
        Diagnoser(_("For w.grad you gave the weights themselves; differentiate z with respect to w_i "
                    "(x is the constant then)."), part=0, value=ns["w"].detach()),
    ]
    hints = [_("z = (w_1 x_1**2 + ... + w_n x_n**2) / n. For w.grad treat x as constant; for x.grad treat w as "
               "constant."),
             _("dz/dw_i = x_i**2 / n, and dz/dx_i comes from the power rule with w_i as a constant factor."),
             _("dz/dx_i = 2 * w_i * x_i / n. Answer with the pair (w.grad, x.grad).")]
    solution = _("dz/dw_i = x_i**2 / n and dz/dx_i = 2 w_i x_i / n, n = 3.\n"
                 "w.grad = {w_grad}\nx.grad = {x_grad}\n\n{setup}\nex.check(({w_grad}, {x_grad}))").format(
                     w_grad=fmt(gw), x_grad=fmt(gx), setup=setup)
    return Exercise(
        seed=seed,
        intro=_("Both w and x require grad, so one backward() fills both .grad attributes."),
        setup=setup, question=_("Predict w.grad and x.grad after z.backward(), by hand."),
        answer_form=_("the pair (w.grad, x.grad), each typed as 3 numbers, or a dict {\"w\": [...], \"x\": [...]}"),
        form=form, expected=(gw, gx), hints=hints, solution_text=solution, diagnosers=diagnosers,
        kind=_("the pair of gradients"), praise=_("Each leaf gets the derivative with the other held constant."))


@register("nonscalar_backward", N_("backward() on a non-scalar output"), place=60)
def nonscalar_backward(seed=None) -> Exercise:
    s = on_x(seed, "y = x**2 + 3 * x\ny.backward(torch.ones_like(y))",
             square="(x**2).sum().backward()", mean="(x**2 + 3 * x).mean().backward()")
    setup, x, y, expected = s.setup, s.value("x"), s.value("y"), s.value("x.grad")
    diagnosers = [
        Diagnoser(_("These are the values of y, not a gradient. x.grad holds dy_i/dx_i: how fast y_i changes "
                    "when x_i moves."), y),
        Diagnoser(_("All ones is the gradient you passed in, torch.ones_like(y): backward() multiplies "
                    "it by dy/dx on the way to x."), torch.ones_like(x)),
        Diagnoser(_("The 3 * x term has a derivative too."), s.other["square"]),
        Diagnoser(_("This is twice the gradient: did you run both y.backward(torch.ones_like(y)) and "
                    "y.sum().backward() on the same x? .grad added up both; each one alone gives the answer."),
                  grad(f"{setup}\n(x**2 + 3 * x).sum().backward()")),
        Diagnoser(_("backward() does not add the gradient up: torch.ones_like(y) weighs each y_i by 1 "
                    "and x.grad keeps one entry per element of x."), expected.sum()),
        Diagnoser(_("That would be the gradient of y.mean(); torch.ones_like(y) matches y.sum()."),
                  s.other["mean"]),
    ]
    hints = [_("y has 3 elements, so y.backward() alone fails (grad can be implicitly created only for "
               "scalar outputs). Passing torch.ones_like(y) is the same as calling y.sum().backward()."),
             _("So x.grad = d(y_1 + y_2 + y_3)/dx_i = dy_i/dx_i."),
             _("dy_i/dx_i = 2 * x_i + 3, one entry per element of x.")]
    solution = _("y.backward(torch.ones_like(y)) computes the gradient of sum_i 1 * y_i, the same as "
                 "y.sum().backward(): dy_i/dx_i = 2 x_i + 3.\nx.grad = {x_grad}\n\n{setup}\nx.grad").format(
                     x_grad=fmt(expected), setup=setup)
    return x_grad(expected, seed=seed,
                  intro=_("y has one entry per element of x, so backward() needs to be told how to weigh them."),
                  setup=setup, question=_("Predict x.grad, by hand. (y.sum().backward() on a fresh x gives the same.)"),
                  answer_form=_(TYPED), hints=hints, solution_text=solution, diagnosers=diagnosers,
                  praise=_("Passing torch.ones_like(y) is the same as backward() on y.sum()."))


@register("accumulate", N_("Two backward calls without zeroing"), place=70)
def accumulate(seed=None) -> Exercise:
    s = on_x(seed, "z = (x**2).mean()\nz.backward(retain_graph=True)\nz.backward()",
             once="(x**2).mean().backward()", summed="z = (x**2).sum()\nz.backward(retain_graph=True)\nz.backward()")
    setup, expected, once = s.setup, s.value("x.grad"), s.other["once"]
    diagnosers = [
        Diagnoser(_("This is the gradient of one backward() call. .grad is not replaced by the second "
                    "call: the new gradient is added to the old one."), once),
        Diagnoser(_("Nothing resets .grad between the calls; only x.grad = None or x.grad.zero_() would."),
                  torch.zeros_like(expected)),
        Diagnoser(SHARED("missing_mean"), s.other["summed"]),
        Diagnoser(_("Two backward() calls add the gradient twice, not three times."), once * 3),
        Diagnoser(_("This is twice the gradient of both calls together: each call adds the gradient once."), once * 4),
    ]
    hints = [_("retain_graph=True keeps the graph, so the second z.backward() works. What does it do to x.grad?"),
             _(".grad accumulates: each backward() adds its gradient to what is already there."),
             _("x.grad = 2 * (2 * x_i / n): the gradient of the mean of squares, twice.")]
    solution = _("Each call adds dz/dx_i = 2 x_i / 3, so after two calls x.grad = {twice}.\n"
                 "One call alone gives {once}. In a training loop, clear .grad each step "
                 "(optimizer.zero_grad()).\n\n{setup}\nx.grad").format(twice=fmt(expected), once=fmt(once), setup=setup)
    return x_grad(expected, seed=seed,
                  intro=_("The graph is kept with retain_graph=True and backward() runs twice; .grad is never "
                          "cleared."),
                  setup=setup, question=_("Predict x.grad after both calls, by hand."), answer_form=_(TYPED),
                  hints=hints, solution_text=solution, diagnosers=diagnosers,
                  praise=_("Gradients accumulate in .grad; that is why training loops zero them each step."))
