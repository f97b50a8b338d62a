"""Exercises for lesson 06: backward(v) of a non-scalar output is a vector-Jacobian product, the
Jacobian's shape and diagonal, and torch.autograd.grad (returns) against backward() (accumulates)."""
from __future__ import annotations

import torch

from ...format import fmt
from ...words import words_of
from ..choices import ChoiceForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ...i18n import N_
from ..registry import register
from ..run import run, tensor_code, variant_values
from .common import on_x, stated, tensor_pair, x_grad

W = words_of(__name__)


@register("vjp_weights", W["vjp_weights"]["title"], lesson=6)
def vjp_weights(seed=None) -> Exercise:
    t = W["vjp_weights"]
    d = t["diagnoses"]
    s = on_x(seed, "y = x**2\ny.backward(torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64))")
    setup, x, expected = s.setup, s.value("x"), s.value("x.grad")
    v = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64)
    diagnosers = [
        Diagnoser(d("all_ones"), 2 * x, ask=t["asks"]("all_ones")),
        Diagnoser(d("weights_only"), v, ask=t["asks"]("weights_only")),
        Diagnoser(d("no_factor"), v * x),
        Diagnoser(d("summed"), expected.sum()),
    ]
    solution = t("solution").format(two_x=fmt(2 * x), grad=fmt(expected))
    return x_grad(expected, name="vjp_weights", seed=seed, setup=setup, solution_text=solution,
                  diagnosers=diagnosers, **stated(t))


SHAPES = {"a": "(3,)", "b": "(3, 3)", "c": "(1, 3)", "d": "(9,)"}


@register("jacobian_shape", W["jacobian_shape"]["title"], lesson=6)
def jacobian_shape(seed=None) -> Exercise:
    t = W["jacobian_shape"]
    d = t["diagnoses"]
    setup = f"{tensor_code('x', variant_values(seed, [0.0, 1.0, 2.0]))}\ny = x**3"
    ns = run(setup + "\nJ = torch.autograd.functional.jacobian(lambda t: t**3, x.detach())")
    J = ns["J"]
    shape = next(k for k, s in SHAPES.items() if s == str(tuple(J.shape)))
    diagonal = J.diagonal().clone()
    x = ns["x"].detach()
    # Translators: what J.diagonal() is, in "...: J's diagonal has one entry per element of x"
    diagonal_noun = N_("J's diagonal")
    form = PartsForm([("shape", ChoiceForm(SHAPES)), ("diagonal", TensorForm("J.diagonal()", "x", noun=diagonal_noun))])
    diagnosers = [
        Diagnoser(d("shape"), part=0, when=lambda v: v != shape),
        Diagnoser(d("y_itself"), part=1, value=x ** 3, ask=t["asks"]("y_itself")),
        Diagnoser(d("no_factor"), part=1, value=x ** 2, ask=t["asks"]("no_factor")),
        Diagnoser(d("power_not_lowered"), part=1, value=3 * x, ask=t["asks"]("power_not_lowered")),
    ]
    solution = t("solution").format(shape=SHAPES[shape], diagonal=fmt(diagonal))
    return Exercise(
        name="jacobian_shape", seed=seed, setup=setup, form=form, expected=(shape, diagonal),
        solution_text=solution, diagnosers=diagnosers, example='ex.check(("a", [0.0, 0.0, 0.0]))',
        **stated(t, question=t("question") + "\n" + ChoiceForm(SHAPES).describe()))


@register("grad_vs_backward", W["grad_vs_backward"]["title"], lesson=6)
def grad_vs_backward(seed=None) -> Exercise:
    t = W["grad_vs_backward"]
    d = t["diagnoses"]
    s = on_x(seed, "z = (x**2).sum()\n(g,) = torch.autograd.grad(z, x, retain_graph=True)\n"
                   "z.backward(retain_graph=True)\nz.backward()")
    setup, g, xg = s.setup, s.value("g"), s.value("x.grad")
    diagnosers = [
        Diagnoser(d("grad_writes"), part=1, value=3 * g),
        Diagnoser(d("replaced"), part=1, value=g),
        Diagnoser(d("g_accumulates"), part=0, value=xg),
    ]
    solution = t("solution").format(g=fmt(g), x_grad=fmt(xg))
    return tensor_pair(("g", "x", g), ("x.grad", "x", xg), diagnosers, name="grad_vs_backward", seed=seed,
                       setup=setup, solution_text=solution, **stated(t))
