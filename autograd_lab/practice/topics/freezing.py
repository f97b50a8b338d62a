"""Exercises for lesson 07: which parameters get .grad when a layer is frozen, which ways of
running a model record a graph (eval() does not stop it), and which no-graph tensor can later be
used in autograd. Every expected answer is what torch does when the code runs. The sentences are
in freezing.toml."""
from __future__ import annotations

from ...format import listed
from ...words import words_of
from ..choices import NamesForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import has_grad, outcome, run
from .common import flags, stated

W = words_of(__name__)
FROZEN = """torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
model[0].requires_grad_(False)      # {freeze}
x = torch.randn(4, 2)
loss = model(x).pow(2).mean()
loss.backward()"""
PARAMS = ["model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"]


@register("frozen_grads", W["frozen_grads"]["title"], lesson=7)
def frozen_grads(seed=None) -> Exercise:
    t = W["frozen_grads"]
    d = t["diagnoses"]
    setup = FROZEN.format(freeze=t("freeze"))
    ns = run(setup)
    expected = frozenset(p for p in PARAMS if has_grad(ns, p))
    form = NamesForm(PARAMS, aliases={"model.0": PARAMS[:2], "model.2": PARAMS[2:]})
    diagnosers = [
        Diagnoser(d("frozen_included"), when=lambda v: bool(v & {"model.0.weight", "model.0.bias"})),
        Diagnoser(d("later_missing"), when=lambda v: not v >= {"model.2.weight", "model.2.bias"}),
    ]
    return Exercise(
        name="frozen_grads", setup=setup, form=form, expected=expected, diagnosers=diagnosers,
        solution_text=t("solution"),
        **stated(t, question=t("question").format(params=listed(PARAMS))))


MODES = {
    "no_grad": "with torch.no_grad():\n    out = model(x)",
    "inference_mode": "with torch.inference_mode():\n    out = model(x)",
    "eval": "model.eval()\nout = model(x)",
    "detach": "out = model(x).detach()",
}
MODEL = "torch.manual_seed(0)\nmodel = torch.nn.Linear(2, 1)\nx = torch.randn(3, 2)"


@register("which_mode_records", W["which_mode_records"]["title"], lesson=7)
def which_mode_records(seed=None) -> Exercise:
    t = W["which_mode_records"]
    d = t["diagnoses"]
    setup = MODEL + "\n\n" + "\n\n".join(f"# {k}\n{code}" for k, code in MODES.items())
    return flags(
        MODES, lambda code: bool(run(f"{MODEL}\n{code}")["out"].requires_grad), "eval",
        (d("eval"), d("other_modes")), ("out.requires_grad", t("solution")),
        asks=(t["asks"]("eval"), t["asks"]("other_modes")),
        name="which_mode_records", setup=setup,
        **stated(t, question=t("question").format(order=listed(MODES))))


TARGET = """torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
x, x2 = torch.randn(3, 2), torch.randn(3, 2)
{make}
loss = (model(x) * target).mean()   # {saves}
loss.backward()"""
MAKES = {
    "no_grad": "with torch.no_grad():\n    target = model(x2)",
    "inference_mode": "with torch.inference_mode():\n    target = model(x2)",
    "detach": "target = model(x2).detach()",
}


@register("target_without_graph", W["target_without_graph"]["title"], lesson=7)
def target_without_graph(seed=None) -> Exercise:
    t = W["target_without_graph"]
    d = t["diagnoses"]
    saves = t("saves")
    setup = TARGET.format(saves=saves, make="# " + t("made_in") + "\n"
                          + "\n".join(f"#   {k}: {code.splitlines()[-1].strip()}" for k, code in MAKES.items()))
    return flags(
        MAKES, lambda code: outcome(TARGET.format(make=code, saves=saves))[1] is None, "inference_mode",
        (d("inference_mode"), d("other_ways")), (t("solution_label"), t("solution")),
        name="target_without_graph", setup=setup,
        **stated(t, question=t("question").format(ways=listed(MAKES))))
