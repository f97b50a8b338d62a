"""Lesson 05's exercises on history carried across training steps: which variable of a training
loop carries the graph of every earlier step, and which fixes cut it (read off runs: the graph
reachable from each variable, counted with graph.walk, after a few steps and after twice as many);
and a code task, fix this training step, checked by running the learner's step: the graph no
longer grows with the step number, and the weights still end where the training takes them."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...graph import walk
from ...saved import FREED
from ...format import listed
from ...words import words_of
from ..checking import WrongForm
from ..choices import NamesForm
from ..code_task import CodeExercise, CodeForm, call
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm
from ..registry import register
from ..run import run
from .common import stated

W = words_of(__name__)

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
    notes = W["loop_comments"]
    comments = {"log": notes("log"), "mean": notes("mean")}
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


@register("carried_history", W["carried_history"]["title"], lesson=5)
def carried_history(seed=None) -> Exercise:
    t = W["carried_history"]
    d = t["diagnoses"]
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
        Diagnoser(d("fresh_each_step"), part=0, when=lambda v: bool(v & {"out", "loss"}), key="fresh_each_step"),
        Diagnoser(d("safe_named").format(other=other, spelled=spelled), part=0, when=lambda v: other in v,
                  key="safe_named"),
        Diagnoser(d("leaf_named"), part=0, when=lambda v: "w" in v, key="leaf_named"),
        Diagnoser(d("none_named"), part=0, when=lambda v: not v, key="none_named"),
        Diagnoser(d("clone_fix"), part=1, when=lambda v: "b" in v, key="clone_fix"),
        Diagnoser(d("retain_graph_fix"), part=1, when=lambda v: "c" in v, key="retain_graph_fix"),
        Diagnoser(d("detach_missed"), part=1, when=lambda v: "a" in fixes and "a" not in v, key="detach_missed"),
        Diagnoser(d("no_grad_missed"), part=1, when=lambda v: "d" in fixes and "d" not in v, key="no_grad_missed"),
    ]
    setup = loop_code(data_seed, 6, carrier, safe)
    described = "\n".join(f"  ({f}) {code}" for f, code in options.items())
    sizes = [nodes(run(loop_code(data_seed, k, carrier, safe))[carrier]) for k in (1, 2, 3)]
    solution = t("solution").format(carriers=listed(sorted(carriers)), one=sizes[0], two=sizes[1],
                                    three=sizes[2], fixes=listed(sorted(fixes)))
    return Exercise(
        seed=seed, setup=setup, form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        example='ex.check(({"..."}, {"..."}))',
        **stated(t, question=t("question").format(candidates=listed(CANDIDATES)) + "\n" + described,
                 answer_form=t("answer_form").format(letters=listed(options))))


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
    that graph, and whether w ends where the training takes it; retained: whether a backward kept
    its graph (retain_graph=True left in), which a fixed step does not need but which is no error."""

    error: str
    grows: bool
    clone: bool
    trains: bool
    sizes: tuple = field(default=(), compare=False)
    retained: bool = field(default=False, compare=False)

    def describe(self) -> str:
        t = W["training"]
        if self.error == "freed":
            return t("freed")
        if self.error == "no_grad":
            return t("no_grad")
        if self.error:
            return t("error")
        if self.sizes:
            sized = t("sizes_trains") if self.trains else t("sizes_off")
            return sized.format(sizes=listed(self.sizes))
        if not self.grows:
            return t("steady_trains") if self.trains else t("steady_off")
        return t("grows_trains") if self.trains else t("grows_off")


def kept(state) -> bool:
    """Whether the graph behind a state still holds the values it saved: a backward through it ran
    with retain_graph=True (after a plain backward they are freed)."""
    if not isinstance(state, torch.Tensor) or state.grad_fn is None:
        return False
    for count, (fn, _slot) in enumerate(walk(state)):
        if count > 50:
            break
        for attr in (a for a in dir(fn) if a.startswith("_saved_")):
            try:
                getattr(fn, attr)
            except RuntimeError:
                return False
            return True
    return False


def asks_retain(fn) -> bool:
    """Whether a function's code passes retain_graph=True (read off its compiled code, never run)."""
    code = getattr(fn, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        if any(isinstance(k, tuple) and "retain_graph" in k for k in c.co_consts) and True in c.co_consts:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


def train(fn, seed: int) -> tuple[Training, torch.Tensor | None]:
    """Run a step function STEPS times on fresh weights and data (private random state): what it did,
    and where w ended (None when a step failed)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        w = torch.randn(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        h = torch.zeros(3)
        sizes: list[int] = []
        retained = False
        for x in torch.randn(STEPS, 3):
            out = call(fn, w, opt, x, h, what=W["training"]("your_step"))
            if isinstance(out, RuntimeError):
                text = str(out)
                kind = ("freed" if text.startswith(FREED) else
                        "no_grad" if "does not require grad" in text else "error")
                return Training(kind, False, False, False, tuple(sizes)), None
            if not isinstance(out, torch.Tensor):
                raise WrongForm(W["training"]("returned").format(kind=type(out).__name__))
            h = out
            retained = retained or kept(h)
            sizes.append(nodes(h))
        clone = any(fn_.name() == "CloneBackward0" for fn_, _slot in walk(h))
        retained = retained or asks_retain(fn)
        return Training("", sizes[-1] > sizes[1], clone, True, tuple(sizes), retained), w.detach().clone()


@register("fix_training_step", W["fix_training_step"]["title"], lesson=5)
def fix_training_step(seed=None) -> CodeExercise:
    t = W["fix_training_step"]
    d = t["diagnoses"]
    data_seed = 0 if seed is None else int(seed)
    target = train(reference_step, data_seed)[1]
    assert target is not None

    def probe(fn) -> Training:
        found, w = train(fn, data_seed)
        if w is None:
            return found
        return Training(found.error, found.grows, found.clone,
                        bool(torch.allclose(w, target, rtol=1e-5, atol=1e-7)), found.sizes, found.retained)

    diagnosers = [
        Diagnoser(d("freed_graph"), when=lambda b: b.error == "freed", key="freed_graph"),
        Diagnoser(d("clone_not_detach"), when=lambda b: b.grows and b.clone, key="clone_not_detach"),
        Diagnoser(d("still_grows"), when=lambda b: b.grows and not b.clone, key="still_grows"),
        Diagnoser(d("cut_too_much"), when=lambda b: b.error == "no_grad", key="cut_too_much"),
        Diagnoser(d("changed_training"), when=lambda b: not b.error and not b.grows and not b.trains,
                  key="changed_training"),
    ]
    solution = (FIXED.format(flows=t("flows_comment"), needed=t("needed_comment")) + "\n\n" + t("solution"))
    return CodeExercise(
        seed=seed, setup=BUGGY.format(seed=data_seed, steps=STEPS, state=t("state_comment"), added=t("added_comment")),
        form=CodeForm(probe, "ex.check(fixed_step)", "fixed_step(w, opt, x, h)"),
        expected=Training("", False, False, True), diagnosers=diagnosers, solution_text=solution,
        example="ex.check(fixed_step)", refuse_data=True,
        remark=lambda b: t["remarks"]("retain_graph") if getattr(b, "retained", False) else "",
        **stated(t, question=t("question").format(steps=STEPS)))
