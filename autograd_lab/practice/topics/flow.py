"""Exercises about where gradients flow and where they stop: a tensor that does not require grad,
detached branches, a GAN's discriminator step, and clone() against detach(). The expected answers
are read off what torch does when the setup code runs."""
from __future__ import annotations

from ...format import fmt
from ..choices import ChoiceForm, FlagsForm, NamesForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm
from ..registry import register
from ..run import has_grad, outcome, run, tensor_code


@register("no_requires_grad", "Forgetting requires_grad=True", place=80)
def no_requires_grad(seed=None) -> Exercise:
    setup = f"{tensor_code('x', [1.0, 2.0, 3.0], requires_grad=False)}\ny = x**2\nz = y.mean()\nz.backward()"
    with_flag = run(f"{tensor_code('x', [1.0, 2.0, 3.0])}\n(x**2).mean().backward()")["x"].grad
    options = {"a": f"x.grad becomes {fmt(with_flag)}, as with requires_grad=True",
               "b": "backward() runs without complaint and x.grad stays None",
               "c": "z.backward() raises a RuntimeError (z does not require grad and has no grad_fn)",
               "d": "x.grad becomes zeros"}
    ns, err = outcome(setup)
    if ns is None:
        expected = "c" if str(err).startswith("element 0 of tensors does not require grad") else "?"
    else:
        g = ns["x"].grad
        expected = "b" if g is None else ("d" if not g.any() else "a")
    diagnosers = [
        Diagnoser("Without requires_grad=True autograd records nothing for x: no graph is built, so "
                  "there is nothing to compute a gradient from.", when=lambda v: v == "a"),
        Diagnoser("backward() does not pass silently here: look at z.grad_fn and z.requires_grad "
                  "before calling it.", when=lambda v: v == "b"),
        Diagnoser("PyTorch does not fill in zeros: a tensor that does not require grad takes no part "
                  "in backward() at all.", when=lambda v: v == "d"),
    ]
    form = ChoiceForm(options)
    hints = ["Print z.requires_grad and z.grad_fn before calling backward().",
             "backward() starts from z's grad_fn. What if z has none?"]
    solution = (f"({expected}) {options[expected]}.\nx was created without requires_grad=True, so no "
                "operation on it was recorded: z.grad_fn is None and z.requires_grad is False. "
                "backward() has no graph to run and says so: element 0 of tensors does not require "
                "grad and does not have a grad_fn. Fix: torch.tensor(..., requires_grad=True).")
    return Exercise(
        intro="The mean-of-squares code, but x is created without requires_grad=True.",
        setup=setup, question="What happens?\n" + form.describe(),
        answer_form="one letter, a, b, c or d", form=form, expected=expected, hints=hints,
        solution_text=solution, diagnosers=diagnosers, kind="what happens",
        praise="No requires_grad, no graph: backward() has nothing to run.")


STOPS = """a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
g = torch.tensor(5.0, requires_grad=True)
c = torch.tensor(4.0)              # requires_grad is False
d = a * c
e = b.detach() * d
f = (b * g).detach()
loss = e + f + d + g.clone() * c
loss.backward()"""
STOP_NAMES = ["a", "b", "c", "d", "e", "f", "g", "loss"]


@register("where_backprop_stops", "Where backprop stops", place=90)
def where_backprop_stops(seed=None) -> Exercise:
    ns = run(STOPS)
    expected = frozenset(n for n in STOP_NAMES if has_grad(ns, n))
    leaves = {n for n in STOP_NAMES if ns[n].is_leaf}
    diagnosers = [
        Diagnoser("c was created without requires_grad=True: backward() computes gradients only for "
                  "tensors that require grad.", when=lambda v: "c" in v),
        Diagnoser("b reaches loss only through b.detach() and (b * g).detach(): detach() cuts the "
                  "graph, so no gradient flows back to b.", when=lambda v: "b" in v),
        Diagnoser("f was made by detach(): a new leaf that does not require grad, outside the graph.",
                  when=lambda v: "f" in v),
        Diagnoser("Results of operations (d, e, loss) are not leaves: backward() fills .grad only for "
                  "leaves, unless you call retain_grad() on the others.",
                  when=lambda v: bool(v - leaves)),
        Diagnoser("Something is missing: a leaf that requires grad gets a gradient when any path of "
                  "differentiable operations (clone() is one) leads from it to loss.",
                  when=lambda v: bool(v) and v < expected),
    ]
    solution = (f"Receive a gradient: {', '.join(sorted(expected))}.\n"
                "a reaches loss through d = a * c (c not requiring grad does not stop a); g reaches it "
                "through g.clone(), which is differentiable. b is only used through detach(); c does "
                "not require grad; f is a detached leaf; d, e and loss are not leaves, so their .grad "
                "stays None.")
    return Exercise(
        intro="Gradient propagation stops at leaves, at tensors that do not require grad, and at detach().",
        setup=STOPS, question=f"Which of {', '.join(STOP_NAMES)} have a .grad that is not None after loss.backward()?",
        answer_form="a set of names as strings (set() for none)", form=NamesForm(STOP_NAMES),
        expected=expected, diagnosers=diagnosers, solution_text=solution, kind="the set of names",
        hints=["Only leaves get .grad. Which of these are leaves, and which of those require grad?",
               "For each leaf that requires grad, follow its uses to loss: does any path avoid detach()?"],
        praise="Leaves that require grad and reach loss without a detach() get gradients; nothing else does.")


GAN = """torch.manual_seed(0)
G = torch.nn.Linear(2, 2)          # generator
D = torch.nn.Linear(2, 1)          # discriminator
noise = torch.randn(4, 2)
fake = G(noise)
d_loss = D(fake.detach()).mean()   # the discriminator step
d_loss.backward()"""
PARAMS = ["G.weight", "G.bias", "D.weight", "D.bias"]


@register("gan_detach", "detach() in a GAN's discriminator step", place=100)
def gan_detach(seed=None) -> Exercise:
    with_detach, without = run(GAN), run(GAN.replace("fake.detach()", "fake"))
    expected = (frozenset(p for p in PARAMS if has_grad(with_detach, p)),
                frozenset(p for p in PARAMS if has_grad(without, p)))
    names = NamesForm(PARAMS, aliases={"G": PARAMS[:2], "D": PARAMS[2:]})
    form = PartsForm([("with fake.detach()", names), ("with D(fake)", names)])
    in_g = lambda v: any(p.startswith("G.") for p in v)  # noqa: E731
    diagnosers = [
        Diagnoser("You swapped the two cases: first with fake.detach(), then with D(fake).",
                  (expected[1], expected[0])),
        Diagnoser("With fake.detach() D sees a tensor outside the graph: the discriminator step cannot "
                  "reach the generator's parameters. That is why GAN code detaches fake there.",
                  part=0, when=in_g),
        Diagnoser("Without detach(), fake is still connected to what made it: follow d_loss back "
                  "through D(fake) to fake = G(noise).", part=1, when=lambda v: not in_g(v)),
        Diagnoser("Look at D's own parameters: are they used to compute d_loss?", part=0,
                  when=lambda v: not v >= {"D.weight", "D.bias"}),
        Diagnoser("Look at D's own parameters: are they used to compute d_loss?", part=1,
                  when=lambda v: not v >= {"D.weight", "D.bias"}),
    ]
    solution = (f"With fake.detach(): {', '.join(sorted(expected[0]))}.\n"
                f"With D(fake): {', '.join(sorted(expected[1]))}.\n"
                "detach() cuts the graph between G and D, so the discriminator step leaves the "
                "generator's .grad alone (and needs no backward through G). The generator step later "
                "uses D(fake) without detach, so that its gradient flows back into G.")
    return Exercise(
        intro="A tiny generator G and discriminator D. The discriminator step uses fake.detach().",
        setup=GAN, question="Which parameters have a .grad after d_loss.backward(): as written, and "
                            "with D(fake) instead of D(fake.detach())?",
        answer_form=f"a pair of sets of names among {', '.join(PARAMS)} (\"G\" or \"D\" stands for both "
                    "of its parameters): (with detach, without)",
        form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        kind="the pair of sets of parameters", example='ex.check(({"..."}, {"..."}))',
        hints=["Follow d_loss back: which parameters were used to compute it, through differentiable operations?",
               "fake.detach() is a tensor outside the graph: nothing before it gets a gradient through it."],
        praise="detach() keeps the discriminator step's gradients out of the generator.")


CLONE = """a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.clone()        # question 1: does a gradient reach a through b?
c = a.detach()       # question 2: does a gradient reach a through c?"""


@register("detach_vs_clone", "detach() versus clone()", place=110)
def detach_vs_clone(seed=None) -> Exercise:
    through_clone = has_grad(run(CLONE + "\n(b * 3).sum().backward()"), "a")
    ns, _ = outcome(CLONE + "\n(c * 3).sum().backward()")
    through_detach = ns is not None and has_grad(ns, "a")
    expected = (through_clone, through_detach)
    diagnosers = [
        Diagnoser("Both are the other way round.", (not through_clone, not through_detach)),
        Diagnoser("clone() is recorded in the graph (its grad_fn is CloneBackward0) and passes the "
                  "gradient straight through to a.", when=lambda v: v[0] != through_clone),
        Diagnoser("detach() returns a tensor that shares a's storage but has no grad_fn and does not "
                  "require grad: the graph stops there.", when=lambda v: v[1] != through_detach),
    ]
    word = {True: "yes", False: "no"}
    solution = (f"Through clone(): {word[through_clone]}. Through detach(): {word[through_detach]}.\n"
                "clone() copies the data into new storage but stays in the graph; detach() shares the "
                "storage but leaves the graph ((c * 3).sum().backward() even fails: nothing requires "
                "grad). For an independent copy outside the graph use a.detach().clone().")
    return Exercise(
        intro="clone() copies, detach() shares storage. Which of them lets a gradient through?",
        setup=CLONE, question="Does a gradient reach a through b = a.clone()? Through c = a.detach()?",
        answer_form="two yes/no answers in the order (clone, detach): True/False or \"yes\"/\"no\"",
        example="ex.check((..., ...))",
        form=FlagsForm(["clone", "detach"]), expected=expected, diagnosers=diagnosers,
        solution_text=solution, kind="the pair of yes/no answers",
        hints=["Look at b.grad_fn and c.grad_fn.",
               "A tensor with no grad_fn that does not require grad is outside the graph."],
        praise="clone() stays in the graph; detach() leaves it.")

