"""Lesson 05's exercises on history carried across training steps: which variable of a training
loop carries the graph of every earlier step, and which fixes cut it (read off runs: the graph
reachable from each variable, counted with graph.walk, after a few steps and after twice as many);
and a code task, fix this training step, checked by running the learner's step: the graph no
longer grows with the step number, and the weights still end where the training takes them."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...graph import FREED, walk
from ...i18n import N_, _
from ..checking import WrongForm
from ..choices import NamesForm
from ..code_task import CodeExercise, CodeForm, call
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm
from ..registry import register
from ..run import run

LOOP = """torch.manual_seed({seed})
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
total, avg = torch.zeros(()), torch.zeros(3)
for x in torch.randn({steps}, 3):
    opt.zero_grad()
    out = torch.tanh(x * w)
    loss = out.pow(2).mean()
    {backward}
    opt.step()
    {total}
    {avg}"""
CANDIDATES = ["w", "out", "loss", "total", "avg"]
# the lines of the log and of the running mean; {log} and {mean} are their comments
SAFE = {"total": ["total = total + loss.item()       # {log}",
                  "total = total + loss.detach()     # {log}"],
        "avg": ["avg = 0.9 * avg + 0.1 * out.detach()   # {mean}"]}
CARRY = {"total": "total = total + loss                # {log}",
         "avg": "avg = 0.9 * avg + 0.1 * out        # {mean}"}
LOG = N_("for the log")
RUNNING_MEAN = N_("a running mean of the activations")
FIXES = {
    "total": {"a": ("total = total + loss.detach()", {}), "b": ("total = total + loss.clone()", {}),
              "c": ("loss.backward(retain_graph=True)", {"backward": True}),
              "d": ("with torch.no_grad(): total = total + loss", {})},
    "avg": {"a": ("avg = 0.9 * avg + 0.1 * out.detach()", {}), "b": ("avg = 0.9 * avg + 0.1 * out.clone()", {}),
            "c": ("loss.backward(retain_graph=True)", {"backward": True}),
            "d": ("with torch.no_grad(): avg = 0.9 * avg + 0.1 * out", {})},
}


def nodes(value) -> int:
    """How many backward nodes are reachable from a tensor (0 for anything without a graph)."""
    return sum(1 for _ in walk(value)) if isinstance(value, torch.Tensor) else 0


def loop_code(seed: int, steps: int, carrier: str, safe: int, fix: str | None = None) -> str:
    comments = {"log": _(LOG), "mean": _(RUNNING_MEAN)}
    lines = {"total": (CARRY["total"] if carrier == "total" else SAFE["total"][safe]).format(**comments),
             "avg": (CARRY["avg"] if carrier == "avg" else SAFE["avg"][0]).format(**comments),
             "backward": "loss.backward()"}
    if fix is not None:
        code, where = FIXES[carrier][fix]
        lines["backward" if where else carrier] = code
    return LOOP.format(seed=seed, steps=steps, **lines)


def growing(code_of) -> set[str]:
    """The variables whose graph is bigger after six steps than after three."""
    short, long = run(code_of(3)), run(code_of(6))
    return {n for n in CANDIDATES if nodes(long[n]) > nodes(short[n])}


@register("carried_history", N_("Which variable carries history across training steps"), place=500)
def carried_history(seed=None) -> Exercise:
    if seed is None:
        carrier, safe, data_seed = "total", 0, 0
    else:
        carrier, safe, data_seed = ("total", "avg")[int(seed) % 2], (int(seed) // 2) % 2, int(seed) % 1000
    carriers = growing(lambda k: loop_code(data_seed, k, carrier, safe))
    fixes = frozenset(f for f in "abcd" if not growing(lambda k, f=f: loop_code(data_seed, k, carrier, safe, f)))
    expected = (frozenset(carriers), fixes)
    options = {f: code for f, (code, _where) in FIXES[carrier].items()}
    other = "avg" if carrier == "total" else "total"
    spelled = ".item()" if other == "total" and safe == 0 else ".detach()"
    form = PartsForm([("carries history", NamesForm(CANDIDATES)), ("fixes", NamesForm(list(options)))])
    diagnosers = [
        Diagnoser(_("out and loss are made anew at every step from w and this step's x: their graph is this "
                    "step's only, and the next step replaces them."), part=0,
                  when=lambda v: bool(v & {"out", "loss"}), key="fresh_each_step"),
        Diagnoser(_("{other} is updated from a value without history ({spelled}): it carries numbers, not a "
                    "graph.").format(other=other, spelled=spelled), part=0, when=lambda v: other in v,
                  key="safe_named"),
        Diagnoser(_("w is a leaf: its graph is a single AccumulateGrad node, whatever the step."), part=0,
                  when=lambda v: "w" in v, key="leaf_named"),
        Diagnoser(_("Something does carry history: look for a variable computed from its own previous value "
                    "and from a tensor that has a graph."), part=0, when=lambda v: not v, key="none_named"),
        Diagnoser(_("clone() is recorded in the graph (CloneBackward0): the copy keeps the history it was made "
                    "from."), part=1, when=lambda v: "b" in v, key="clone_fix"),
        Diagnoser(_("retain_graph=True keeps a graph's saved values for another backward; it cuts nothing."),
                  part=1, when=lambda v: "c" in v, key="retain_graph_fix"),
        Diagnoser(_("detach() cuts it: the value is kept, the history is not."), part=1,
                  when=lambda v: "a" in fixes and "a" not in v, key="detach_missed"),
        Diagnoser(_("torch.no_grad() cuts it too: an operation under no_grad is not recorded."), part=1,
                  when=lambda v: "d" in fixes and "d" not in v, key="no_grad_missed"),
    ]
    setup = loop_code(data_seed, 6, carrier, safe)
    described = "\n".join(f"  ({f}) {code}" for f, code in options.items())
    sizes = [nodes(run(loop_code(data_seed, k, carrier, safe))[carrier]) for k in (1, 2, 3)]
    solution = _("{carriers} carries history: it is computed from its previous value and from "
                 "a tensor with a graph, so its graph holds every step so far ({one}, {two}, "
                 "{three} nodes after 1, 2, 3 steps: walk it with autograd_lab.graph.walk, or see "
                 "%%backward_profile's table). Fixes that cut it: {fixes}. "
                 "detach() and no_grad keep the value and drop the history; clone() stays in the graph, and "
                 "retain_graph=True cuts nothing.").format(
        carriers=_(", ").join(sorted(carriers)), one=sizes[0], two=sizes[1], three=sizes[2],
        fixes=_(", ").join(sorted(fixes)))
    return Exercise(
        seed=seed, intro=_("A training loop that also keeps a log of the loss and a running mean of the "
                           "activations."), setup=setup,
        question=_("Which of {candidates} carries the graph of earlier steps into the next one? And "
                   "which of these changes (each alone) stop it?").format(candidates=_(", ").join(CANDIDATES))
        + "\n" + described,
        answer_form=_("a pair: the set of variable names, then the set of letters among {letters}").format(
            letters=_(", ").join(options)),
        form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        kind=_("the pair (variables, fixes)"), example='ex.check(({"..."}, {"..."}))',
        hints=[_("A graph grows across steps when a variable is computed from its own previous value and from "
                 "a tensor that has a graph."),
               _("Which fixes keep the value but record nothing? clone() and retain_graph do record.")],
        praise=_("A value computed from itself and a graph collects every step's history; detach() or no_grad "
                 "cut it."))


BUGGY = """def step(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h)            # {state}
    loss = (h - 0.5).pow(2).mean()
    loss.backward(retain_graph=True)     # {added}
    opt.step()
    return h

torch.manual_seed({seed})
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
h = torch.zeros(3)
for x in torch.randn({steps}, 3):
    h = step(w, opt, x, h)"""
STEPS = 8
STATE = N_("the state carried to the next step")
ADDED = N_("added after 'Trying to backward through the graph a second time'")


FIXED = """def fixed_step(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h.detach())   # {flows}
    loss = (h - 0.5).pow(2).mean()
    loss.backward()                      # {needed}
    opt.step()
    return h

ex.check(fixed_step)"""


def reference_step(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h.detach())
    loss = (h - 0.5).pow(2).mean()
    loss.backward()
    opt.step()
    return h


@dataclass(frozen=True)
class Training:
    """What the learner's step did over the steps: the error it raised (a short kind, or ""), whether
    the graph reachable from the returned state grew with the step number, whether a clone() sits in
    that graph, and whether w ends where the training takes it."""

    error: str
    grows: bool
    clone: bool
    trains: bool
    sizes: tuple = field(default=(), compare=False)

    def describe(self) -> str:
        if self.error == "freed":
            return _("a step fails (freed)")
        if self.error == "no_grad":
            return _("a step fails (no grad)")
        if self.error:
            return _("a step fails (error)")
        # Translators: the separator between the items of a list ("4, 7, 10", "a, d")
        sizes = _(", ").join(map(str, self.sizes))
        if self.trains:
            if self.sizes:
                return _("the state's graph has {sizes} nodes after each step; w ends where the training "
                         "takes it").format(sizes=sizes)
            if not self.grows:
                return _("the state's graph keeps one size from step to step; w ends where the training takes it")
            return _("the state's graph grows with every step; w ends where the training takes it")
        if self.sizes:
            return _("the state's graph has {sizes} nodes after each step; w does not end where the training "
                     "takes it").format(sizes=sizes)
        if not self.grows:
            return _("the state's graph keeps one size from step to step; w does not end where the training "
                     "takes it")
        return _("the state's graph grows with every step; w does not end where the training takes it")


def train(fn, seed: int) -> tuple[Training, torch.Tensor | None]:
    """Run a step function STEPS times on fresh weights and data (private random state): what it did,
    and where w ended (None when a step failed)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        w = torch.randn(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        h = torch.zeros(3)
        sizes: list[int] = []
        for x in torch.randn(STEPS, 3):
            # Translators: the subject of "{what} raised ValueError: ..."
            out = call(fn, w, opt, x, h, what=_("Your step"))
            if isinstance(out, RuntimeError):
                text = str(out)
                kind = ("freed" if text.startswith(FREED) else
                        "no_grad" if "does not require grad" in text else "error")
                return Training(kind, False, False, False, tuple(sizes)), None
            if not isinstance(out, torch.Tensor):
                raise WrongForm(_("Your step returned {kind}; return the state h for the next step.").format(
                    kind=type(out).__name__))
            h = out
            sizes.append(nodes(h))
        clone = any(fn_.name() == "CloneBackward0" for fn_, _slot in walk(h))
        return Training("", sizes[-1] > sizes[1], clone, True, tuple(sizes)), w.detach().clone()


@register("fix_training_step", N_("Fix a training step whose graph grows with every step"), place=510)
def fix_training_step(seed=None) -> CodeExercise:
    data_seed = 0 if seed is None else int(seed)
    target = train(reference_step, data_seed)[1]
    assert target is not None

    def probe(fn) -> Training:
        found, w = train(fn, data_seed)
        if w is None:
            return found
        return Training(found.error, found.grows, found.clone,
                        bool(torch.allclose(w, target, rtol=1e-5, atol=1e-7)), found.sizes)

    diagnosers = [
        Diagnoser(_("The second step fails: h still carries the first step's graph, which that step's backward "
                    "freed. Without retain_graph you must also cut h's history: h.detach() before using it."),
                  when=lambda b: b.error == "freed", key="freed_graph"),
        Diagnoser(_("clone() copies the values but stays in the graph (CloneBackward0): h.clone() keeps the "
                    "history of every step."), when=lambda b: b.grows and b.clone, key="clone_not_detach"),
        Diagnoser(_("The graph still grows with the step number: h carries the history of every earlier step, "
                    "and each backward walks all of it. retain_graph=True only keeps that history alive; cut it "
                    "with h.detach()."), when=lambda b: b.grows and not b.clone, key="still_grows"),
        Diagnoser(_("You cut too much: the loss no longer depends on w through recorded operations (element 0 "
                    "of tensors does not require grad). Detach the carried state h, not this step's computation."),
                  when=lambda b: b.error == "no_grad", key="cut_too_much"),
        Diagnoser(_("The graph no longer grows, but w does not end where the training should take it: keep the "
                    "step as it was (the state still flows in, h = torch.tanh(x * w + h)) and cut only the "
                    "history of the h that comes in."), when=lambda b: not b.error and not b.grows and not b.trains,
                  key="changed_training"),
    ]
    solution = (FIXED.format(flows=_("the value flows in, its history does not"),
                             needed=_("no retain_graph needed any more"))
                + "\n\n" + _("Returning h.detach() works as well. The graph of each step now has the same size, "
                               "so backward takes the same time at every step (truncated backpropagation through "
                               "time)."))
    return CodeExercise(
        seed=seed, intro=_("A recurrent training step: the state h flows from one step to the next. Someone met "
                           "'Trying to backward through the graph a second time' and added retain_graph=True; now "
                           "every step is slower than the one before."),
        setup=BUGGY.format(seed=data_seed, steps=STEPS, state=_(STATE), added=_(ADDED)),
        question=_("Write fixed_step(w, opt, x, h), the same step with its history cut: the state's value still "
                   "flows into the next step, but the graph no longer grows with the step number. The check runs "
                   "your step {steps} times on fresh weights, counts the nodes of the graph behind the state it "
                   "returns (autograd_lab.graph.walk), and compares where w ends with the intended training.").format(
            steps=STEPS),
        answer_form=_("your function fixed_step(w, opt, x, h) that returns the new state h"),
        form=CodeForm(probe, "ex.check(fixed_step)", "fixed_step(w, opt, x, h)"),
        expected=Training("", False, False, True), diagnosers=diagnosers, solution_text=solution,
        example="ex.check(fixed_step)",
        hints=[_("Which tensor comes into the step with the graph of the earlier steps attached?"),
               _("Keep its value, drop its history: the tool is detach(), on the h that comes in."),
               _("h = torch.tanh(x * w + h.detach()), and loss.backward() without retain_graph.")],
        praise=_("Same value, no history: every step's graph has the same size, and backward no longer slows "
                 "down."))
