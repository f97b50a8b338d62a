"""Exercises about where gradients flow and where they stop: a tensor that does not require grad,
detached branches, a GAN's discriminator step, and clone() against detach(). The expected answers
are read off what torch does when the setup code runs."""
from __future__ import annotations

from ...format import fmt
from ...words import words_of
from ..choices import ChoiceForm, FlagsForm, NamesForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm
from ..registry import register
from ..run import has_grad, outcome, run, tensor_code
from .common import commented, stated

W = words_of(__name__)


@register("no_requires_grad", W["no_requires_grad"]["title"], lesson=4)
def no_requires_grad(seed=None) -> Exercise:
    t = W["no_requires_grad"]
    d, o = t["diagnoses"], t["options"]
    setup = f"{tensor_code('x', [1.0, 2.0, 3.0], requires_grad=False)}\ny = x**2\nz = y.mean()\nz.backward()"
    with_flag = run(f"{tensor_code('x', [1.0, 2.0, 3.0])}\n(x**2).mean().backward()")["x"].grad
    options = {"a": o("a").format(value=fmt(with_flag)), "b": o("b"), "c": o("c"), "d": o("d")}
    ns, err = outcome(setup)
    if ns is None:
        expected = "c" if str(err).startswith("element 0 of tensors does not require grad") else "?"
    else:
        g = ns["x"].grad
        expected = "b" if g is None else ("d" if not g.any() else "a")
    diagnosers = [
        Diagnoser(d("nothing_recorded"), when=lambda v: v == "a"),
        Diagnoser(d("silent"), when=lambda v: v == "b"),
        Diagnoser(d("zeros"), when=lambda v: v == "d"),
    ]
    form = ChoiceForm(options)
    solution = t("solution").format(letter=expected, option=options[expected])
    return Exercise(setup=setup, form=form, expected=expected, solution_text=solution, diagnosers=diagnosers,
                    **stated(t, question=t("question").format(options=form.describe())))


STOPS = """a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
g = torch.tensor(5.0, requires_grad=True)
c = torch.tensor(4.0)              # {c}
d = a * c
e = b.detach() * d
f = (b * g).detach()
loss = e + f + d + g.clone() * c
loss.backward()"""
STOP_NAMES = ["a", "b", "c", "d", "e", "f", "g", "loss"]


@register("where_backprop_stops", W["where_backprop_stops"]["title"], lesson=4)
def where_backprop_stops(seed=None) -> Exercise:
    t = W["where_backprop_stops"]
    d = t["diagnoses"]
    setup = commented(STOPS, {"c": t["notes"]["c"]})
    ns = run(setup)
    expected = frozenset(n for n in STOP_NAMES if has_grad(ns, n))
    leaves = {n for n in STOP_NAMES if ns[n].is_leaf}
    diagnosers = [
        Diagnoser(d("c_no_grad"), when=lambda v: "c" in v),
        Diagnoser(d("b_detached"), when=lambda v: "b" in v),
        Diagnoser(d("f_detached"), when=lambda v: "f" in v),
        Diagnoser(d("not_leaves"), when=lambda v: bool(v - leaves)),
        Diagnoser(d("missing"), when=lambda v: bool(v) and v < expected),
    ]
    return Exercise(
        setup=setup, form=NamesForm(STOP_NAMES), expected=expected, diagnosers=diagnosers,
        solution_text=t("solution").format(names=", ".join(sorted(expected))),
        **stated(t, question=t("question").format(names=", ".join(STOP_NAMES))))


GAN = """torch.manual_seed(0)
G = torch.nn.Linear(2, 2)          # {generator}
D = torch.nn.Linear(2, 1)          # {discriminator}
noise = torch.randn(4, 2)
fake = G(noise)
d_loss = D(fake.detach()).mean()   # {step}
d_loss.backward()"""
PARAMS = ["G.weight", "G.bias", "D.weight", "D.bias"]


@register("gan_detach", W["gan_detach"]["title"], lesson=2)
def gan_detach(seed=None) -> Exercise:
    t = W["gan_detach"]
    d, notes = t["diagnoses"], t["notes"]
    setup = commented(GAN, {"generator": notes["generator"], "discriminator": notes["discriminator"],
                            "step": notes["step"]})
    with_detach, without = run(setup), run(setup.replace("fake.detach()", "fake"))
    expected = (frozenset(p for p in PARAMS if has_grad(with_detach, p)),
                frozenset(p for p in PARAMS if has_grad(without, p)))
    names = NamesForm(PARAMS, aliases={"G": PARAMS[:2], "D": PARAMS[2:]})
    form = PartsForm([("with fake.detach()", names), ("with D(fake)", names)])
    in_g = lambda v: any(p.startswith("G.") for p in v)  # noqa: E731
    no_d = lambda v: not v >= {"D.weight", "D.bias"}  # noqa: E731
    diagnosers = [
        Diagnoser(d("swapped"), (expected[1], expected[0])),
        Diagnoser(d("g_with_detach"), part=0, when=in_g),
        Diagnoser(d("no_g_without"), part=1, when=lambda v: not in_g(v)),
        Diagnoser(d("d_params"), part=0, when=no_d),
        Diagnoser(d("d_params"), part=1, when=no_d),
    ]
    solution = t("solution").format(with_detach=", ".join(sorted(expected[0])),
                                    without=", ".join(sorted(expected[1])))
    return Exercise(
        setup=setup, form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        example='ex.check(({"..."}, {"..."}))',
        **stated(t, answer_form=t("answer_form").format(params=", ".join(PARAMS))))


CLONE = """a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.clone()        # {first}
c = a.detach()       # {second}"""


@register("detach_vs_clone", W["detach_vs_clone"]["title"], lesson=3)
def detach_vs_clone(seed=None) -> Exercise:
    t = W["detach_vs_clone"]
    d = t["diagnoses"]
    setup = commented(CLONE, {"first": t["notes"]["first"], "second": t["notes"]["second"]})
    through_clone = has_grad(run(setup + "\n(b * 3).sum().backward()"), "a")
    ns, _err = outcome(setup + "\n(c * 3).sum().backward()")
    through_detach = ns is not None and has_grad(ns, "a")
    expected = (through_clone, through_detach)
    diagnosers = [
        Diagnoser(d("both_wrong"), (not through_clone, not through_detach)),
        Diagnoser(d("clone"), when=lambda v: v[0] != through_clone),
        Diagnoser(d("detach"), when=lambda v: v[1] != through_detach),
    ]
    word = {True: t("yes"), False: t("no")}
    solution = t("solution").format(clone=word[through_clone], detach=word[through_detach])
    return Exercise(
        setup=setup, example="ex.check((..., ...))", form=FlagsForm(["clone", "detach"]), expected=expected,
        diagnosers=diagnosers, solution_text=solution, **stated(t))

