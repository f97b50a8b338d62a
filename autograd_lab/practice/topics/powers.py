"""The x**p family: the gradient of (x**p).mean() or (x**p).sum(), for fixed, learner-specific
random and symbolic x. Every expected answer and every known wrong answer is computed by torch
from code the learner could run."""
from __future__ import annotations

import torch

from ...format import fmt
from ...words import words_of
from ..exercise import Diagnoser, Exercise
from ..forms import FunctionForm, TensorForm
from ..messages import SHARED, shared_ask
from ..registry import register
from ..run import grad, learner_seed, random_values, run, tensor_code, variant_values
from .common import stated

W = words_of(__name__)


def _mistakes(values, power, reduce) -> list[tuple[str, str, torch.Tensor]]:
    """(key, message, value) of each known mistake, computed by torch for this x."""
    x_line = tensor_code("x", values)
    ns = run(f"{x_line}\ny = x**{power}\nz = y.{reduce}()\nz.backward()")
    n = len(values)
    mean = reduce == "mean"
    other = "sum" if mean else "mean"
    found = {
        "missing_mean" if mean else "extra_mean": grad(f"{x_line}\n(x**{power}).{other}().backward()"),
        "no_factor": grad(f"{x_line}\n(x**{power} / {power}).{reduce}().backward()"),
        "y_value": ns["y"].detach(),
        "z_value": ns["z"].detach(),
        "x_value": ns["x"].detach(),
        "doubled": grad(f"{x_line}\nz = (x**{power}).{reduce}()\nz.backward(retain_graph=True)\nz.backward()"),
        "dz_dy": _dz_dy(values, power, reduce),
    }
    if mean:
        found["n_minus_1"] = grad(f"{x_line}\n(x**{power}).sum().backward()") / (n - 1)
    if power != 2:
        found["wrong_power"] = grad(f"{x_line}\n(x**2).{reduce}().backward()")
    message = {"dz_dy": "dz_dy" if mean else "dz_dy_sum"}  # the sum's dz/dy is said otherwise
    return [(key, SHARED(message.get(key, key)), value) for key, value in found.items()]


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
    there = {key: value for key, _message, value in _mistakes(_variant(values), power, reduce)}
    diagnosers = [Diagnoser(message, value, key=key, variant=there[key],
                            ask=shared_ask("dz_dy_sum" if key == "dz_dy" and reduce == "sum" else key))
                  for key, message, value in _mistakes(values, power, reduce)]
    per = " / n" if reduce == "mean" else ""
    rule = f"{power} * x_i" + (f"**{power - 1}" if power > 2 else "")
    whole = (f"z = (x_1**{power} + ... + x_n**{power}){per}" if reduce == "mean"
             else f"z = x_1**{power} + ... + x_n**{power}")
    t = W["family"]
    only = t("hint_only_mean") if reduce == "mean" else t("hint_only_sum")
    hints = [
        t("hint_whole").format(whole=whole),
        only.format(power=power),
        t("hint_rule").format(rule=rule + per, n=n),
    ]
    solution = t("solution").format(whole=whole, rule=rule + per, x=fmt(x), n=n, x_grad=fmt(expected), setup=setup)
    of = t("intro_mean") if reduce == "mean" else t("intro_sum")
    return Exercise(
        seed=seed, setup=setup, form=TensorForm("x.grad"), expected=expected, solution_text=solution,
        diagnosers=diagnosers, **stated(t, intro=intro or of.format(power=power), hints=hints,
                                        answer_form=t("answer_form").format(n=n),
                                        praise=t("praise").format(rule=rule + per)))


@register("mean_square", W["mean_square"]["title"], lesson=1)
def mean_square(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 2, "mean", seed=seed,
                   intro=W["mean_square"]("intro"))


@register("sum_square", W["sum_square"]["title"], lesson=4)
def sum_square(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 2, "sum", seed=seed)


@register("mean_cube", W["mean_cube"]["title"], lesson=4)
def mean_cube(seed=None) -> Exercise:
    return _family(variant_values(seed, [1.0, 2.0, 3.0]), 3, "mean", seed=seed)


@register("mean_square_random", W["mean_square_random"]["title"], lesson=4)
def mean_square_random(seed=None) -> Exercise:
    seed = learner_seed() if seed is None else int(seed)
    return _family(random_values(seed, 5), 2, "mean", seed=seed,
                   intro=W["mean_square_random"]("intro"))


@register("symbolic_mean_square", W["symbolic_mean_square"]["title"], lesson=4)
def symbolic_mean_square(seed=None) -> Exercise:
    t = W["symbolic_mean_square"]
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
        return Diagnoser(message, here, key=key, variant=there, ask=shared_ask(key))

    setup = (f"x = torch.randn({n}, dtype=torch.double, requires_grad=True)\n"
             "z = (x**2).mean()\nz.backward()")
    expected = each("(x**2).mean().backward()")
    diagnosers = [
        mistake("missing_mean", SHARED("missing_mean"), "(x**2).sum().backward()"),
        mistake("no_factor", SHARED("no_factor"), "(x**2 / 2).mean().backward()"),
        mistake("y_value", t["diagnoses"]("y_value"), of=lambda s: s**2),
        mistake("x_value", SHARED("x_value"), of=lambda s: s.clone()),
        mistake("n_minus_1", SHARED("n_minus_1"), of=lambda s: 2 * s / (s.shape[-1] - 1)),
        mistake("dz_dy", SHARED("dz_dy"), of=lambda s: torch.ones_like(s) / s.shape[-1]),
        mistake("two_over_n", SHARED("two_over_n"), of=lambda s: 2 * torch.ones_like(s) / s.shape[-1]),
        mistake("doubled", SHARED("doubled"), "z = (x**2).mean()\nz.backward(retain_graph=True)\nz.backward()"),
    ]
    solution = t("solution").format(count=samples.shape[0])
    return Exercise(
        setup=setup, form=FunctionForm(samples, "dz/dx", variant=variant), expected=expected,
        solution_text=solution, diagnosers=diagnosers,
        **stated(t, intro=t("intro").format(n=n), answer_form=t("answer_form").format(n=n)))
