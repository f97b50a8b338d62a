"""Exercises about where gradients flow and where they stop: a tensor that does not require grad,
detached branches, a GAN's discriminator step, and clone() against detach(). The expected answers
are read off what torch does when the setup code runs."""
from __future__ import annotations

from ...format import fmt
from ...i18n import N_, _
from ..choices import ChoiceForm, FlagsForm, NamesForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm
from ..registry import register
from ..run import has_grad, outcome, run, tensor_code
from .common import commented


@register("no_requires_grad", N_("Forgetting requires_grad=True"), place=80)
def no_requires_grad(seed=None) -> Exercise:
    setup = f"{tensor_code('x', [1.0, 2.0, 3.0], requires_grad=False)}\ny = x**2\nz = y.mean()\nz.backward()"
    with_flag = run(f"{tensor_code('x', [1.0, 2.0, 3.0])}\n(x**2).mean().backward()")["x"].grad
    options = {"a": _("x.grad becomes {value}, as with requires_grad=True").format(value=fmt(with_flag)),
               "b": _("backward() runs without complaint and x.grad stays None"),
               "c": _("z.backward() raises a RuntimeError (z does not require grad and has no grad_fn)"),
               "d": _("x.grad becomes zeros")}
    ns, err = outcome(setup)
    if ns is None:
        expected = "c" if str(err).startswith("element 0 of tensors does not require grad") else "?"
    else:
        g = ns["x"].grad
        expected = "b" if g is None else ("d" if not g.any() else "a")
    diagnosers = [
        Diagnoser(_("Without requires_grad=True autograd records nothing for x: no graph is built, so "
                    "there is nothing to compute a gradient from."), when=lambda v: v == "a"),
        Diagnoser(_("backward() does not pass silently here: look at z.grad_fn and z.requires_grad "
                    "before calling it."), when=lambda v: v == "b"),
        Diagnoser(_("PyTorch does not fill in zeros: a tensor that does not require grad takes no part "
                    "in backward() at all."), when=lambda v: v == "d"),
    ]
    form = ChoiceForm(options)
    hints = [_("Print z.requires_grad and z.grad_fn before calling backward()."),
             _("backward() starts from z's grad_fn. What if z has none?")]
    solution = _("({letter}) {option}.\nx was created without requires_grad=True, so no "
                 "operation on it was recorded: z.grad_fn is None and z.requires_grad is False. "
                 "backward() has no graph to run and says so: element 0 of tensors does not require "
                 "grad and does not have a grad_fn. Fix: torch.tensor(..., requires_grad=True).").format(
                     letter=expected, option=options[expected])
    return Exercise(
        intro=_("The mean-of-squares code, but x is created without requires_grad=True."),
        setup=setup, question=_("What happens?\n{options}").format(options=form.describe()),
        answer_form=_("one letter, a, b, c or d"), form=form, expected=expected, hints=hints,
        solution_text=solution, diagnosers=diagnosers, kind=_("what happens"),
        praise=_("No requires_grad, no graph: backward() has nothing to run."))


STOPS = """a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
g = torch.tensor(5.0, requires_grad=True)
c = torch.tensor(4.0)              # {c}
d = a * c
e = b.detach() * d
f = (b * g).detach()
loss = e + f + d + g.clone() * c
loss.backward()"""
STOPS_NOTES = {"c": N_("requires_grad is False")}
STOP_NAMES = ["a", "b", "c", "d", "e", "f", "g", "loss"]


@register("where_backprop_stops", N_("Where backprop stops"), place=90)
def where_backprop_stops(seed=None) -> Exercise:
    setup = commented(STOPS, STOPS_NOTES)
    ns = run(setup)
    expected = frozenset(n for n in STOP_NAMES if has_grad(ns, n))
    leaves = {n for n in STOP_NAMES if ns[n].is_leaf}
    diagnosers = [
        Diagnoser(_("c was created without requires_grad=True: backward() computes gradients only for "
                    "tensors that require grad."), when=lambda v: "c" in v),
        Diagnoser(_("b reaches loss only through b.detach() and (b * g).detach(): detach() cuts the "
                    "graph, so no gradient flows back to b."), when=lambda v: "b" in v),
        Diagnoser(_("f was made by detach(): a new leaf that does not require grad, outside the graph."),
                  when=lambda v: "f" in v),
        Diagnoser(_("Results of operations (d, e, loss) are not leaves: backward() fills .grad only for "
                    "leaves, unless you call retain_grad() on the others."),
                  when=lambda v: bool(v - leaves)),
        Diagnoser(_("Something is missing: a leaf that requires grad gets a gradient when any path of "
                    "differentiable operations (clone() is one) leads from it to loss."),
                  when=lambda v: bool(v) and v < expected),
    ]
    solution = _("Receive a gradient: {names}.\n"
                 "a reaches loss through d = a * c (c not requiring grad does not stop a); g reaches it "
                 "through g.clone(), which is differentiable. b is only used through detach(); c does "
                 "not require grad; f is a detached leaf; d, e and loss are not leaves, so their .grad "
                 "stays None.").format(names=", ".join(sorted(expected)))
    return Exercise(
        intro=_("Gradient propagation stops at leaves, at tensors that do not require grad, and at detach()."),
        setup=setup, question=_("Which of {names} have a .grad that is not None after loss.backward()?").format(
            names=", ".join(STOP_NAMES)),
        answer_form=_("a set of names as strings (set() for none)"), form=NamesForm(STOP_NAMES),
        expected=expected, diagnosers=diagnosers, solution_text=solution, kind=_("the set of names"),
        hints=[_("Only leaves get .grad. Which of these are leaves, and which of those require grad?"),
               _("For each leaf that requires grad, follow its uses to loss: does any path avoid detach()?")],
        praise=_("Leaves that require grad and reach loss without a detach() get gradients; nothing else does."))


GAN = """torch.manual_seed(0)
G = torch.nn.Linear(2, 2)          # {generator}
D = torch.nn.Linear(2, 1)          # {discriminator}
noise = torch.randn(4, 2)
fake = G(noise)
d_loss = D(fake.detach()).mean()   # {step}
d_loss.backward()"""
GAN_NOTES = {"generator": N_("generator"), "discriminator": N_("discriminator"),
             "step": N_("the discriminator step")}
PARAMS = ["G.weight", "G.bias", "D.weight", "D.bias"]


@register("gan_detach", N_("detach() in a GAN's discriminator step"), place=100)
def gan_detach(seed=None) -> Exercise:
    setup = commented(GAN, GAN_NOTES)
    with_detach, without = run(setup), run(setup.replace("fake.detach()", "fake"))
    expected = (frozenset(p for p in PARAMS if has_grad(with_detach, p)),
                frozenset(p for p in PARAMS if has_grad(without, p)))
    names = NamesForm(PARAMS, aliases={"G": PARAMS[:2], "D": PARAMS[2:]})
    form = PartsForm([("with fake.detach()", names), ("with D(fake)", names)])
    in_g = lambda v: any(p.startswith("G.") for p in v)  # noqa: E731
    diagnosers = [
        Diagnoser(_("You swapped the two cases: first with fake.detach(), then with D(fake)."),
                  (expected[1], expected[0])),
        Diagnoser(_("With fake.detach() D sees a tensor outside the graph: the discriminator step cannot "
                    "reach the generator's parameters. That is why GAN code detaches fake there."),
                  part=0, when=in_g),
        Diagnoser(_("Without detach(), fake is still connected to what made it: follow d_loss back "
                    "through D(fake) to fake = G(noise)."), part=1, when=lambda v: not in_g(v)),
        Diagnoser(_("Look at D's own parameters: are they used to compute d_loss?"), part=0,
                  when=lambda v: not v >= {"D.weight", "D.bias"}),
        Diagnoser(_("Look at D's own parameters: are they used to compute d_loss?"), part=1,
                  when=lambda v: not v >= {"D.weight", "D.bias"}),
    ]
    solution = _("With fake.detach(): {with_detach}.\n"
                 "With D(fake): {without}.\n"
                 "detach() cuts the graph between G and D, so the discriminator step leaves the "
                 "generator's .grad alone (and needs no backward through G). The generator step later "
                 "uses D(fake) without detach, so that its gradient flows back into G.").format(
                     with_detach=", ".join(sorted(expected[0])), without=", ".join(sorted(expected[1])))
    return Exercise(
        intro=_("A tiny generator G and discriminator D. The discriminator step uses fake.detach()."),
        setup=setup, question=_("Which parameters have a .grad after d_loss.backward(): as written, and "
                                "with D(fake) instead of D(fake.detach())?"),
        answer_form=_("a pair of sets of names among {params} (\"G\" or \"D\" stands for both "
                      "of its parameters): (with detach, without)").format(params=", ".join(PARAMS)),
        form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        kind=_("the pair of sets of parameters"), example='ex.check(({"..."}, {"..."}))',
        hints=[_("Follow d_loss back: which parameters were used to compute it, through differentiable "
                 "operations?"),
               _("fake.detach() is a tensor outside the graph: nothing before it gets a gradient through it.")],
        praise=_("detach() keeps the discriminator step's gradients out of the generator."))


CLONE = """a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.clone()        # {first}
c = a.detach()       # {second}"""
CLONE_NOTES = {"first": N_("question 1: does a gradient reach a through b?"),
               "second": N_("question 2: does a gradient reach a through c?")}


@register("detach_vs_clone", N_("detach() versus clone()"), place=110)
def detach_vs_clone(seed=None) -> Exercise:
    setup = commented(CLONE, CLONE_NOTES)
    through_clone = has_grad(run(setup + "\n(b * 3).sum().backward()"), "a")
    ns, _err = outcome(setup + "\n(c * 3).sum().backward()")
    through_detach = ns is not None and has_grad(ns, "a")
    expected = (through_clone, through_detach)
    diagnosers = [
        Diagnoser(_("Both are the other way round."), (not through_clone, not through_detach)),
        Diagnoser(_("clone() is recorded in the graph (its grad_fn is CloneBackward0) and passes the "
                    "gradient straight through to a."), when=lambda v: v[0] != through_clone),
        Diagnoser(_("detach() returns a tensor that shares a's storage but has no grad_fn and does not "
                    "require grad: the graph stops there."), when=lambda v: v[1] != through_detach),
    ]
    word = {True: _("yes"), False: _("no")}
    solution = _("Through clone(): {clone}. Through detach(): {detach}.\n"
                 "clone() copies the data into new storage but stays in the graph; detach() shares the "
                 "storage but leaves the graph ((c * 3).sum().backward() even fails: nothing requires "
                 "grad). For an independent copy outside the graph use a.detach().clone().").format(
                     clone=word[through_clone], detach=word[through_detach])
    return Exercise(
        intro=_("clone() copies, detach() shares storage. Which of them lets a gradient through?"),
        setup=setup, question=_("Does a gradient reach a through b = a.clone()? Through c = a.detach()?"),
        answer_form=_("two yes/no answers in the order (clone, detach): True/False or \"yes\"/\"no\""),
        example="ex.check((..., ...))",
        form=FlagsForm(["clone", "detach"]), expected=expected, diagnosers=diagnosers,
        solution_text=solution, kind=_("the pair of yes/no answers"),
        hints=[_("Look at b.grad_fn and c.grad_fn."),
               _("A tensor with no grad_fn that does not require grad is outside the graph.")],
        praise=_("clone() stays in the graph; detach() leaves it."))

