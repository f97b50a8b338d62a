"""Exercises about how backward() is called: two leaves at once, a non-scalar output with an
explicit gradient, and two backward calls that accumulate."""
from __future__ import annotations

import torch

from ...format import fmt
from ...words import words_of
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ..messages import SHARED
from ..registry import register
from ..run import grad, run, tensor_code, variant_values
from .common import on_x, stated, x_grad, x_line

W = words_of(__name__)


def typed_x_grad(name: str, seed, expected: torch.Tensor, setup: str, diagnosers: list[Diagnoser],
                 **solution: str) -> Exercise:
    """The exercise `name` of this module, which predicts x.grad typed as 3 numbers: its statement read
    off its table (intro, question, hints, praise), its solution filled with the setup and `solution`."""
    t = W[name]
    return x_grad(expected, seed=seed, setup=setup, solution_text=t("solution").format(setup=setup, **solution),
                  diagnosers=diagnosers, **stated(t, answer_form=W["typed_x_grad"]("answer_form")))


@register("weighted_mean_square", W["weighted_mean_square"]["title"], lesson=4)
def weighted_mean_square(seed=None) -> Exercise:
    t = W["weighted_mean_square"]
    d = t["diagnoses"]
    w_line = tensor_code("w", variant_values(seed, [3.0, 1.0, 0.5], salt=1))
    line = x_line(seed)
    setup = f"{w_line}\n{line}\nz = (w * x**2).mean()\nz.backward()"
    ns = run(setup)
    gw, gx = ns["w"].grad.clone(), ns["x"].grad.clone()
    summed = run(f"{w_line}\n{line}\n(w * x**2).sum().backward()")
    form = PartsForm([("w.grad", TensorForm("w.grad", "w")), ("x.grad", TensorForm("x.grad", "x"))])
    diagnosers = [
        Diagnoser(d("swapped"), (gx, gw)),
        Diagnoser(d("w_missing_mean"), part=0, value=summed["w"].grad),
        Diagnoser(d("x_missing_mean"), part=1, value=summed["x"].grad),
        Diagnoser(d("x_no_weights"), part=1, value=grad(f"{line}\n(x**2).mean().backward()")),
        Diagnoser(d("x_no_factor"), part=1, value=grad(f"{w_line}\n{line}\n(w * x**2 / 2).mean().backward()")),
        Diagnoser(d("w_weights"), part=0, value=ns["w"].detach()),
    ]
    solution = t("solution").format(w_grad=fmt(gw), x_grad=fmt(gx), setup=setup)
    return Exercise(seed=seed, setup=setup, form=form, expected=(gw, gx), solution_text=solution,
                    diagnosers=diagnosers, **stated(t))


@register("nonscalar_backward", W["nonscalar_backward"]["title"], lesson=4)
def nonscalar_backward(seed=None) -> Exercise:
    d = W["nonscalar_backward"]["diagnoses"]
    s = on_x(seed, "y = x**2 + 3 * x\ny.backward(torch.ones_like(y))",
             square="(x**2).sum().backward()", mean="(x**2 + 3 * x).mean().backward()")
    setup, x, y, expected = s.setup, s.value("x"), s.value("y"), s.value("x.grad")
    diagnosers = [
        Diagnoser(d("y_values"), y),
        Diagnoser(d("ones_passed"), torch.ones_like(x)),
        Diagnoser(d("no_linear_term"), s.other["square"]),
        Diagnoser(d("doubled"), grad(f"{setup}\n(x**2 + 3 * x).sum().backward()")),
        Diagnoser(d("summed"), expected.sum()),
        Diagnoser(d("mean"), s.other["mean"]),
    ]
    return typed_x_grad("nonscalar_backward", seed, expected, setup, diagnosers, x_grad=fmt(expected))


@register("accumulate", W["accumulate"]["title"], lesson=4)
def accumulate(seed=None) -> Exercise:
    d = W["accumulate"]["diagnoses"]
    s = on_x(seed, "z = (x**2).mean()\nz.backward(retain_graph=True)\nz.backward()",
             once="(x**2).mean().backward()", summed="z = (x**2).sum()\nz.backward(retain_graph=True)\nz.backward()")
    setup, expected, once = s.setup, s.value("x.grad"), s.other["once"]
    diagnosers = [
        Diagnoser(d("one_call"), once),
        Diagnoser(d("zeros"), torch.zeros_like(expected)),
        Diagnoser(SHARED("missing_mean"), s.other["summed"]),
        Diagnoser(d("three_times"), once * 3),
        Diagnoser(d("four_times"), once * 4),
    ]
    return typed_x_grad("accumulate", seed, expected, setup, diagnosers, twice=fmt(expected), once=fmt(once))
