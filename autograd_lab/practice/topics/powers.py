"""The x**p family: the gradient of (x**p).mean() or (x**p).sum(), for fixed, learner-specific
random and symbolic x. Every expected answer and every known wrong answer is computed by torch
from code the learner could run."""
from __future__ import annotations

import torch

from ...format import fmt
from ..exercise import Diagnoser, Exercise
from ..forms import FunctionForm, TensorForm
from ..messages import (DOUBLED, DZ_DY, DZ_DY_SUM, EXTRA_MEAN, MISSING_MEAN, N_MINUS_1, NO_FACTOR, TWO_OVER_N,
                        WRONG_POWER, X_VALUE, Y_VALUE, Z_VALUE)
from ..registry import register
from ..run import grad, learner_seed, random_values, run, tensor_code, variant_values

def _mistakes(values, power, reduce) -> list[tuple[str, str, torch.Tensor]]:
    """(key, message, value) of each known mistake, computed by torch for this x."""
    x_line = tensor_code("x", values)
    ns = run(f"{x_line}\ny = x**{power}\nz = y.{reduce}()\nz.backward()")
    n = len(values)
    other = "sum" if reduce == "mean" else "mean"
    found = [
        ("missing_mean" if reduce == "mean" else "extra_mean", MISSING_MEAN if reduce == "mean" else EXTRA_MEAN,
         grad(f"{x_line}\n(x**{power}).{other}().backward()")),
        ("no_factor", NO_FACTOR, grad(f"{x_line}\n(x**{power} / {power}).{reduce}().backward()")),
        ("y_value", Y_VALUE, ns["y"].detach()),
        ("z_value", Z_VALUE, ns["z"].detach()),
        ("x_value", X_VALUE, ns["x"].detach()),
        ("doubled", DOUBLED,
         grad(f"{x_line}\nz = (x**{power}).{reduce}()\nz.backward(retain_graph=True)\nz.backward()")),
        ("dz_dy", DZ_DY if reduce == "mean" else DZ_DY_SUM,
         _dz_dy(values, power, reduce)),
    ]
    if reduce == "mean":
        found.append(("n_minus_1", N_MINUS_1, grad(f"{x_line}\n(x**{power}).sum().backward()") / (n - 1)))
    if power != 2:
        found.append(("wrong_power", WRONG_POWER, grad(f"{x_line}\n(x**2).{reduce}().backward()")))
    return found


def _dz_dy(values, power, reduce) -> torch.Tensor:
    """What the reduction sends on to y: torch.autograd.grad of z with respect to y."""
    ns = run(f"{tensor_code('x', values)}\ny = x**{power}\nz = y.{reduce}()\ng = torch.autograd.grad(z, y)[0]")
    return ns["g"].detach()


def _variant(values: list[float]) -> list[float]:
    """Other inputs of another size, on which a coincidence of these numbers comes apart."""
    return [v + 0.5 for v in values] + [1.25]


def _family(values, power, reduce, seed=None, intro=None) -> Exercise:
    x_line = tensor_code("x", values)
    setup = f"{x_line}\ny = x**{power}\nz = y.{reduce}()\nz.backward()"
    ns = run(setup)
    x, expected = ns["x"].detach(), ns["x"].grad.detach().clone()
    n = len(values)
    there = {key: value for key, _, value in _mistakes(_variant(values), power, reduce)}
    diagnosers = [Diagnoser(message, value, key=key, variant=there[key])
                  for key, message, value in _mistakes(values, power, reduce)]
    per = " / n" if reduce == "mean" else ""
    rule = f"{power} * x_i" + (f"**{power - 1}" if power > 2 else "")
    whole = (f"z = (x_1**{power} + ... + x_n**{power}){per}" if reduce == "mean"
             else f"z = x_1**{power} + ... + x_n**{power}")
    hints = [
        f"Write z out: {whole}. Differentiate it with respect to one element x_i.",
        f"Only the term x_i**{power} contains x_i; the power rule gives its derivative."
        + (" Then the mean divides everything by n." if reduce == "mean" else ""),
        f"dz/dx_i = {rule}{per}. Apply it to each element of x (here n = {n}).",
    ]
    solution = (f"{whole}, so dz/dx_i = {rule}{per}.\n"
                f"With x = {fmt(x)} (n = {n}): x.grad = {fmt(expected)}\n\n"
                f"{setup}\nx.grad   # tensor({fmt(expected)}, dtype=torch.float64)\n\n"
                "requires_grad=True makes x a leaf that collects a gradient, and backward() "
                "starts from the scalar z.")
    return Exercise(
        seed=seed,
        intro=intro or f"x is a leaf that requires grad; z is the {reduce} of x**{power}.",
        setup=setup, question="Predict x.grad after z.backward(): work it out by hand and type it, then confirm "
                              "with autograd (ex.confirm()).",
        answer_form=f"x.grad typed as {n} numbers (a list, or text), entry i being dz/dx_i",
        form=TensorForm("x.grad"), expected=expected, hints=hints, solution_text=solution,
        diagnosers=diagnosers, praise=f"dz/dx_i = {rule}{per}: autograd agrees with the hand computation.")


@register("mean_square", "The gradient of a mean of squares", place=10)
def mean_square(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 2, "mean", seed=seed,
                   intro="The classic first autograd exercise: y = x**2 element by element, z = y.mean().")


@register("sum_square", "The gradient of a sum of squares", place=20)
def sum_square(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 2, "sum", seed=seed)


@register("mean_cube", "The gradient of a mean of cubes", place=30)
def mean_cube(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 3, "mean", seed=seed)


@register("mean_square_random", "A mean of squares with your own x", place=50)
def mean_square_random(seed=None) -> Exercise:
    seed = learner_seed() if seed is None else int(seed)
    return _family(random_values(seed, 5), 2, "mean", seed=seed,
                   intro="Your x is drawn for you (from your login, or seed=), so your neighbour's "
                         "answer is not yours. z = (x**2).mean().")


@register("symbolic_mean_square", "The gradient of a mean of squares, as a formula", place=120)
def symbolic_mean_square(seed=None) -> Exercise:
    n = 3
    gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
    samples = (torch.rand(4, n, generator=gen, dtype=torch.float64) * 6 - 3)
    variant = (torch.rand(4, n + 1, generator=gen, dtype=torch.float64) * 6 - 3)

    def each(code: str, inputs: torch.Tensor = samples) -> torch.Tensor:
        rows = []
        for row in inputs:
            rows.append(grad(f"x = torch.tensor({row.tolist()!r}, dtype=torch.double, requires_grad=True)\n{code}"))
        return torch.stack(rows)

    def mistake(key: str, message: str, code=None, of=None) -> Diagnoser:
        """A known mistake, computed on the samples and on the variant of another size."""
        here = each(code) if code else of(samples)
        there = each(code, variant) if code else of(variant)
        return Diagnoser(message, here, key=key, variant=there)

    setup = (f"x = torch.randn({n}, dtype=torch.double, requires_grad=True)\n"
             "z = (x**2).mean()\nz.backward()")
    expected = each("(x**2).mean().backward()")
    diagnosers = [
        mistake("missing_mean", MISSING_MEAN, "(x**2).sum().backward()"),
        mistake("no_factor", NO_FACTOR, "(x**2 / 2).mean().backward()"),
        mistake("y_value", "This is the function y = x**2 itself, not its gradient: differentiate the mean "
                "with respect to one x_i.", of=lambda s: s**2),
        mistake("x_value", X_VALUE, of=lambda s: s.clone()),
        mistake("n_minus_1", N_MINUS_1, of=lambda s: 2 * s / (s.shape[-1] - 1)),
        mistake("dz_dy", DZ_DY, of=lambda s: torch.ones_like(s) / s.shape[-1]),
        mistake("two_over_n", TWO_OVER_N, of=lambda s: 2 * torch.ones_like(s) / s.shape[-1]),
        mistake("doubled", DOUBLED, "z = (x**2).mean()\nz.backward(retain_graph=True)\nz.backward()"),
    ]
    hints = ["The gradient of (x**2).mean() depends on x: find dz/dx_i by hand, as a formula in x_i.",
             "z = (x_1**2 + ... + x_n**2) / n; only one term holds x_i.",
             "Write the formula with x for one element and n (or the number) for the count, e.g. "
             "a string such as \"x / n\", or lambda x: x / x.numel() - with the right constant."]
    solution = ('dz/dx_i = 2 * x_i / n with n = 3. Both forms are accepted:\n\n'
                '    ex.check(lambda x: 2 * x / 3)\n    ex.check("2*x/n")\n\n'
                "The check compares your function with torch's gradient on "
                f"{samples.shape[0]} random inputs.")
    return Exercise(
        intro=f"x has {n} elements and any values; z = (x**2).mean().",
        setup=setup, question="Give dz/dx as a function of x.",
        answer_form=f"a function of x: lambda x: ... returning values of x's shape ({n},), "
                    "or a formula string in x (one element) and n",
        form=FunctionForm(samples, "dz/dx", variant=variant), expected=expected, hints=hints,
        solution_text=solution, diagnosers=diagnosers, kind="the gradient of (x**2).mean()",
        praise="For every input x, dz/dx_i = 2 x_i / n.")
