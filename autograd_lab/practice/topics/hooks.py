"""Exercises for lesson 08: a hook that changes a gradient, retain_grad() beside a hook, and using
hooks to find the layer whose gradient explodes. Every expected answer is what torch does."""
from __future__ import annotations

from ...format import fmt
from ...words import words_of
from ..choices import ChoiceForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import run
from .common import on_x, stated, tensor_pair, x_grad

W = words_of(__name__)


@register("hook_doubles", W["hook_doubles"]["title"], lesson=8)
def hook_doubles(seed=None) -> Exercise:
    t = W["hook_doubles"]
    d = t["diagnoses"]
    k = 3 if seed is None else (4, 5, 7)[int(seed) % 3]  # the factor: the gradient does not depend on x
    s = on_x(seed, f"y = x * {k}\ny.register_hook(lambda g: g * 2)\ny.sum().backward()",
             plain=f"(x * {k}).sum().backward()")
    setup, expected, plain = s.setup, s.value("x.grad"), s.other["plain"]
    diagnosers = [
        Diagnoser(d("without_hook"), plain),
        Diagnoser(d("doubled_twice").format(k=k), plain * 4),
        Diagnoser(d("at_y").format(k=k), plain * 2 / k, ask=t["asks"]("at_y")),
    ]
    first, then = t.all("hints")
    solution = t("solution").format(k=k, grad=fmt(expected), plain=fmt(plain))
    return x_grad(expected, name="hook_doubles", seed=seed, setup=setup, solution_text=solution,
                  diagnosers=diagnosers, **stated(t, hints=[first.format(k=k), then]))


@register("retain_grad_and_hook", W["retain_grad_and_hook"]["title"], lesson=8)
def retain_grad_and_hook(seed=None) -> Exercise:
    t = W["retain_grad_and_hook"]
    d = t["diagnoses"]
    s = on_x(seed, "h = x * 2\nh.retain_grad()\nh.register_hook(lambda g: g + 1)\nz = (h**2).sum()\nz.backward()")
    setup, hg, xg, raw = s.setup, s.value("h.grad"), s.value("x.grad"), 2 * s.value("h")
    diagnosers = [
        Diagnoser(d("before_hook"), part=0, value=raw),
        Diagnoser(d("x_unhooked"), part=1, value=2 * raw),
        Diagnoser(d("x_without_factor"), part=1, value=hg),
    ]
    solution = t("solution").format(raw=fmt(raw), h_grad=fmt(hg), x_grad=fmt(xg))
    return tensor_pair(("h.grad", "h", hg), ("x.grad", "x", xg), diagnosers, name="retain_grad_and_hook", seed=seed,
                       setup=setup, solution_text=solution, **stated(t))


EXPLODE_CODE = """torch.manual_seed(0)
net = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(4)])
with torch.no_grad():   # {bad}
    net[int(torch.randint(0, 4, (1,)))].weight.mul_(50)
x = torch.randn(8, 4, requires_grad=True)   # {back}
loss = net(x).pow(2).mean()"""
EXPLODE = EXPLODE_CODE.format(bad=W["exploding_layer"]["bad_comment"],  # the setup with its English comments
                              back=W["exploding_layer"]["back_comment"])
FIND = """
ratios = {}
for i, layer in enumerate(net):
    layer.register_full_backward_hook(
        lambda m, g_in, g_out, i=i: ratios.__setitem__(i, (g_in[0].norm() / g_out[0].norm()).item()))
loss = net(x).pow(2).mean()
loss.backward()"""
LETTERS = "abcd"


@register("exploding_layer", W["exploding_layer"]["title"], lesson=8)
def exploding_layer(seed=None) -> Exercise:
    t = W["exploding_layer"]
    setup = EXPLODE_CODE.format(bad=t("bad_comment"), back=t("back_comment"))
    ns = run(setup + FIND)
    ratios, net = ns["ratios"], ns["net"]
    options = {LETTERS[i]: f"net[{i}]" for i in range(4)}
    expected = LETTERS[max(ratios, key=lambda i: ratios[i])]
    weight_norms = {i: float(layer.weight.grad.norm()) for i, layer in enumerate(net)}
    biggest_weight_grad = LETTERS[max(weight_norms, key=lambda i: weight_norms[i])]
    diagnosers = [
        Diagnoser(t["diagnoses"]("biggest_weight_grad"), when=lambda v: v == biggest_weight_grad != expected),
    ]
    shown = ", ".join(f"net[{i}]: {ratios[i]:.2f}" for i in sorted(ratios))
    at = LETTERS.index(expected)
    solution = (t("solution").format(ratios=shown, at=at, letter=expected)
                + f"\n{FIND.strip()}\nprint(ratios)")
    return Exercise(
        name="exploding_layer", setup=setup, form=ChoiceForm(options), expected=expected, diagnosers=diagnosers,
        solution_text=solution, **stated(t, question=t("question") + "\n" + ChoiceForm(options).describe()))
