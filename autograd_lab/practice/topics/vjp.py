"""Exercises for lesson 06: backward(v) of a non-scalar output is a vector-Jacobian product, the
Jacobian's shape and diagonal, and torch.autograd.grad (returns) against backward() (accumulates)."""
from __future__ import annotations

import torch

from ...format import fmt
from ...i18n import N_, _
from ..choices import ChoiceForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ..registry import register
from ..run import run, tensor_code, variant_values
from .common import on_x, tensor_pair, x_grad

@register("vjp_weights", N_("backward(v) with weights other than ones"), place=600)
def vjp_weights(seed=None) -> Exercise:
    s = on_x(seed, "y = x**2\ny.backward(torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64))")
    setup, x, expected = s.setup, s.value("x"), s.value("x.grad")
    v = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64)
    diagnosers = [
        Diagnoser(_("This is 2 * x, the gradient with all weights 1 (y.sum()). The weights v multiply "
                    "each element's derivative: x.grad[i] = v[i] * 2 * x[i]."), 2 * x),
        Diagnoser(_("These are the weights themselves; backward multiplies them by dy_i/dx_i = 2 x_i."), v),
        Diagnoser(_("This is v * x: the factor 2 of the power rule is missing."), v * x),
        Diagnoser(_("backward(v) does not add the entries up: x.grad has one entry per element of x "
                    "(this is v @ J summed once more)."), expected.sum()),
    ]
    hints = [_("y.backward(v) computes v @ J, where J is the Jacobian dy/dx."),
             _("y = x**2 element-wise, so J is diagonal with 2 * x on the diagonal."),
             _("v @ J for a diagonal J is v[i] * 2 * x[i], element by element.")]
    solution = _("J = diag(2 x) = diag({two_x}), so v @ J = v * 2x = {grad}.\n"
                 "backward(v) never builds J: PowBackward0 multiplies what arrives (v) by 2x.").format(
        two_x=fmt(2 * x), grad=fmt(expected))
    return x_grad(expected, name="vjp_weights", seed=seed,
                  intro=_("A non-scalar y, and backward() given one weight per element of y."), setup=setup,
                  hints=hints, solution_text=solution, diagnosers=diagnosers,
                  praise=_("backward(v) is v @ J: each weight scales its element's derivative."))


SHAPES = {"a": "(3,)", "b": "(3, 3)", "c": "(1, 3)", "d": "(9,)"}


@register("jacobian_shape", N_("The Jacobian's shape and its diagonal"), place=610)
def jacobian_shape(seed=None) -> Exercise:
    setup = f"{tensor_code('x', variant_values(seed, [0.0, 1.0, 2.0]))}\ny = x**3"
    ns = run(setup + "\nJ = torch.autograd.functional.jacobian(lambda t: t**3, x.detach())")
    J = ns["J"]
    shape = next(k for k, s in SHAPES.items() if s == str(tuple(J.shape)))
    diagonal = J.diagonal().clone()
    x = ns["x"].detach()
    form = PartsForm([("shape", ChoiceForm(SHAPES)), ("diagonal", TensorForm("J.diagonal()", "x"))])
    diagnosers = [
        Diagnoser(_("J has one row per element of y and one column per element of x: y and x have "
                    "3 elements each."), part=0, when=lambda v: v != shape),
        Diagnoser(_("The diagonal holds dy_i/dx_i = 3 x_i**2; this is y itself."), part=1, value=x ** 3),
        Diagnoser(_("The diagonal holds dy_i/dx_i = 3 x_i**2; the factor 3 is missing."), part=1, value=x ** 2),
        Diagnoser(_("The power rule lowers the power by one: 3 x_i**2, not 3 x_i."), part=1, value=3 * x),
    ]
    hints = [_("J[i, j] = dy_i/dx_j. How many i, how many j?"),
             _("y = x**3 is element-wise: y_i depends on x_i only, so only J[i, i] can be non-zero."),
             _("J[i, i] = 3 x_i**2.")]
    solution = _("J has shape {shape} (3 elements of y by 3 of x); it is diagonal because x**3 acts "
                 "element by element, and its diagonal is 3 x**2 = {diagonal}.").format(
        shape=SHAPES[shape], diagonal=fmt(diagonal))
    return Exercise(
        name="jacobian_shape", seed=seed, intro=_("y = x**3 for a vector x of 3 numbers."),
        setup=setup, question=_("What is the shape of the Jacobian dy/dx, and what is its diagonal?") + "\n"
                              + ChoiceForm(SHAPES).describe(),
        answer_form=_("a pair: the letter of the shape, then the diagonal as 3 numbers"),
        form=form, expected=(shape, diagonal), hints=hints, solution_text=solution,
        diagnosers=diagnosers, kind=_("the pair (shape, diagonal)"), example='ex.check(("a", [0.0, 0.0, 0.0]))',
        praise=_("Element-wise operations have diagonal Jacobians: J[i, i] = dy_i/dx_i."))


@register("grad_vs_backward", N_("torch.autograd.grad returns, backward() accumulates"), place=620)
def grad_vs_backward(seed=None) -> Exercise:
    s = on_x(seed, "z = (x**2).sum()\n(g,) = torch.autograd.grad(z, x, retain_graph=True)\n"
                   "z.backward(retain_graph=True)\nz.backward()")
    setup, g, xg = s.setup, s.value("g"), s.value("x.grad")
    diagnosers = [
        Diagnoser(_("torch.autograd.grad returns the gradient and writes nothing into x.grad: only the "
                    "two backward() calls add into it."), part=1, value=3 * g),
        Diagnoser(_("x.grad is not replaced by each backward(): the second call adds to the first."),
                  part=1, value=g),
        Diagnoser(_("g is one gradient of z, whatever backward() does later."), part=0, value=xg),
    ]
    hints = [_("dz/dx = 2x. torch.autograd.grad returns it; does it touch x.grad?"),
             _("Each backward() adds 2x into x.grad.")]
    solution = _("g = 2x = {g}: grad() returns it and writes nothing. The two backward() calls each "
                 "add 2x: x.grad = {x_grad}.").format(g=fmt(g), x_grad=fmt(xg))
    return tensor_pair(
        ("g", "x", g), ("x.grad", "x", xg), diagnosers, name="grad_vs_backward", seed=seed,
        intro=_("One torch.autograd.grad call and two backward() calls on the same z."), setup=setup,
        question=_("What are g and x.grad at the end?"), hints=hints, solution_text=solution,
        kind=_("the pair of tensors"),
        praise=_("grad() hands the gradient back; backward() accumulates it into the leaves' .grad."))
