"""Exercises for lesson 08: a hook that changes a gradient, retain_grad() beside a hook, and using
hooks to find the layer whose gradient explodes. Every expected answer is what torch does."""
from __future__ import annotations

from ...format import fmt
from ...i18n import N_, _
from ..choices import ChoiceForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import run
from .common import on_x, tensor_pair, x_grad

@register("hook_doubles", N_("A hook that doubles a gradient"), place=800)
def hook_doubles(seed=None) -> Exercise:
    k = 3 if seed is None else (4, 5, 7)[int(seed) % 3]  # the factor: the gradient does not depend on x
    s = on_x(seed, f"y = x * {k}\ny.register_hook(lambda g: g * 2)\ny.sum().backward()",
             plain=f"(x * {k}).sum().backward()")
    setup, expected, plain = s.setup, s.value("x.grad"), s.other["plain"]
    diagnosers = [
        Diagnoser(_("This is the gradient without the hook. A hook that returns a tensor replaces the "
                    "gradient flowing through y, and everything before y sees the new one."), plain),
        Diagnoser(_("The hook doubles what arrives at y (ones), and MulBackward0 then multiplies by {k}.").format(k=k),
                  plain * 4),
        Diagnoser(_("This is what arrives at y after the hook; x.grad is that times dy/dx = {k}.").format(k=k),
                  plain * 2 / k),
    ]
    hints = [_("Without the hook, x.grad = {k} for each element.").format(k=k),
             _("The hook runs when y's gradient is ready, before it goes on to x, and its return value "
               "replaces it.")]
    solution = _("y.sum() sends ones to y; the hook makes them twos; MulBackward0 multiplies by {k}: "
                 "x.grad = {grad} (without the hook {plain}).").format(k=k, grad=fmt(expected), plain=fmt(plain))
    return x_grad(expected, name="hook_doubles", seed=seed,
                  intro=_("A tensor hook on y that returns a new gradient."),
                  setup=setup, hints=hints, solution_text=solution, diagnosers=diagnosers,
                  praise=_("A hook's return value replaces the gradient for everything upstream."))


@register("retain_grad_and_hook", N_("retain_grad() and a hook on the same tensor"), place=810)
def retain_grad_and_hook(seed=None) -> Exercise:
    s = on_x(seed, "h = x * 2\nh.retain_grad()\nh.register_hook(lambda g: g + 1)\nz = (h**2).sum()\nz.backward()")
    setup, hg, xg, raw = s.setup, s.value("h.grad"), s.value("x.grad"), 2 * s.value("h")
    diagnosers = [
        Diagnoser(_("h.grad is what h's gradient became after every hook: retain_grad() stores it last, "
                    "whenever it was called."), part=0, value=raw),
        Diagnoser(_("x.grad is h's (hooked) gradient times dh/dx = 2."), part=1, value=2 * raw),
        Diagnoser(_("x.grad is h's gradient times dh/dx = 2."), part=1, value=hg),
    ]
    hints = [_("dz/dh = 2h. Which value does h.grad keep: before or after the hook adds 1?"),
             _("retain_grad() keeps the gradient after every other hook on the tensor has run.")]
    solution = _("dz/dh = 2h = {raw}; the hook adds 1; h.grad keeps the result, {h_grad} (retain_grad "
                 "stores it after the other hooks, even though it was called first). x.grad = 2 * h.grad = "
                 "{x_grad}.").format(raw=fmt(raw), h_grad=fmt(hg), x_grad=fmt(xg))
    return tensor_pair(
        ("h.grad", "h", hg), ("x.grad", "x", xg), diagnosers, name="retain_grad_and_hook", seed=seed,
        intro=_("h keeps its gradient (retain_grad) and has a hook that adds 1."), setup=setup,
        question=_("What are h.grad and x.grad?"), hints=hints, solution_text=solution,
        kind=_("the pair of gradients"),
        praise=_("retain_grad() stores the gradient after every other hook of the tensor."))


EXPLODE_CODE = """torch.manual_seed(0)
net = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(4)])
bad = int(torch.randint(0, 4, (1,)))   # {bad}
with torch.no_grad():
    net[bad].weight.mul_(50)
x = torch.randn(8, 4, requires_grad=True)   # {back}
loss = net(x).pow(2).mean()"""
BAD = N_("one layer was initialised badly: which one is your job")
BACK = N_("so that net[0] sends a gradient back too")
EXPLODE = EXPLODE_CODE.format(bad=BAD, back=BACK)  # the setup with its English comments
FIND = """
ratios = {}
for i, layer in enumerate(net):
    layer.register_full_backward_hook(
        lambda m, g_in, g_out, i=i: ratios.__setitem__(i, (g_in[0].norm() / g_out[0].norm()).item()))
loss = net(x).pow(2).mean()
loss.backward()"""
LETTERS = "abcd"


@register("exploding_layer", N_("A hook finds the layer whose gradient explodes"), place=820)
def exploding_layer(seed=None) -> Exercise:
    setup = EXPLODE_CODE.format(bad=_(BAD), back=_(BACK))
    ns = run(setup + FIND)
    ratios, net = ns["ratios"], ns["net"]
    options = {LETTERS[i]: f"net[{i}]" for i in range(4)}
    expected = LETTERS[max(ratios, key=lambda i: ratios[i])]
    weight_norms = {i: float(layer.weight.grad.norm()) for i, layer in enumerate(net)}
    biggest_weight_grad = LETTERS[max(weight_norms, key=lambda i: weight_norms[i])]
    diagnosers = [
        Diagnoser(_("That layer has the biggest weight gradient, but it is not where the gradient grows: "
                    "a weight's gradient is (its input) times (the gradient at its output), so one bad "
                    "layer inflates the weight gradients of its neighbours. Compare, for each layer, the "
                    "norm of the gradient it sends back (grad_input) with the one it received (grad_output)."),
                  when=lambda v: v == biggest_weight_grad != expected),
    ]
    shown = ", ".join(f"net[{i}]: {ratios[i]:.2f}" for i in sorted(ratios))
    at = LETTERS.index(expected)
    solution = _("A full backward hook on each layer sees grad_output (what arrives) and grad_input (what it "
                 "sends back). Their norm ratio per layer: {ratios}. The gradient grows at net[{at}] "
                 "({letter}).").format(ratios=shown, at=at, letter=expected) + f"\n{FIND.strip()}\nprint(ratios)"
    return Exercise(
        name="exploding_layer", intro=_("Four layers; one of them has weights 50 times too big."),
        setup=setup, question=_("Use a hook to find the layer at which the gradient flowing back grows the most "
                                "(the norm of what it sends back over the norm of what it received).") + "\n"
                              + ChoiceForm(options).describe(),
        answer_form=_("the letter of the layer"), form=ChoiceForm(options),
        expected=expected, diagnosers=diagnosers, solution_text=solution, kind=_("the layer"),
        hints=[_("layer.register_full_backward_hook(fn) calls fn(module, grad_input, grad_output) during "
                 "backward()."),
               _("In the hook, compare grad_input[0].norm() with grad_output[0].norm(); register it on every layer "
                 "before a fresh forward and backward.")],
        praise=_("A hook per layer shows where a gradient blows up without changing anything."))
