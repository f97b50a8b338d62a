"""Exercises for lesson 07: which parameters get .grad when a layer is frozen, which ways of
running a model record a graph (eval() does not stop it), and which no-graph tensor can later be
used in autograd. Every expected answer is what torch does when the code runs."""
from __future__ import annotations

from ...i18n import N_, _
from ..choices import NamesForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import has_grad, outcome, run
from .common import flags

FROZEN = """torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
model[0].requires_grad_(False)      # {freeze}
x = torch.randn(4, 2)
loss = model(x).pow(2).mean()
loss.backward()"""
FREEZE = N_("freeze the first layer")
PARAMS = ["model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"]


@register("frozen_grads", N_("Which parameters get .grad when a layer is frozen"), place=700)
def frozen_grads(seed=None) -> Exercise:
    setup = FROZEN.format(freeze=_(FREEZE))
    ns = run(setup)
    expected = frozenset(p for p in PARAMS if has_grad(ns, p))
    form = NamesForm(PARAMS, aliases={"model.0": PARAMS[:2], "model.2": PARAMS[2:]})
    diagnosers = [
        Diagnoser(_("model.0's parameters have requires_grad=False: autograd records no node for them, "
                    "so backward() never reaches them and their .grad stays None."),
                  when=lambda v: bool(v & {"model.0.weight", "model.0.bias"})),
        Diagnoser(_("Freezing the first layer does not stop the gradient from reaching the layers after "
                    "it: model.2 still requires grad and is used to compute loss."),
                  when=lambda v: not v >= {"model.2.weight", "model.2.bias"}),
    ]
    solution = _("Receive a gradient: model.2.weight, model.2.bias.\n"
                 "requires_grad_(False) on model[0] makes its output a tensor without a graph (x does not "
                 "require grad either), so the graph of loss starts at model[2]: %graph loss shows a stop "
                 "where model[0]'s output enters, and model.0's .grad stays None. An optimizer over all "
                 "parameters skips those whose .grad is None.")
    return Exercise(
        name="frozen_grads", intro=_("Fine-tuning the last layer: the first one is frozen."),
        setup=setup, question=_("Which of {params} have a .grad that is not None afterwards?").format(
            params=_(", ").join(PARAMS)),
        answer_form=_("a set of names as strings (\"model.0\" or \"model.2\" stands for both of its parameters)"),
        form=form, expected=expected, diagnosers=diagnosers, solution_text=solution,
        kind=_("the set of parameters"),
        hints=[_("A parameter with requires_grad=False gets no AccumulateGrad node."),
               _("Follow loss back: which layers' parameters were used, and which of them require grad?")],
        praise=_("Frozen parameters get no node and no .grad; the rest of the network trains as usual."))


MODES = {
    "no_grad": "with torch.no_grad():\n    out = model(x)",
    "inference_mode": "with torch.inference_mode():\n    out = model(x)",
    "eval": "model.eval()\nout = model(x)",
    "detach": "out = model(x).detach()",
}
MODEL = "torch.manual_seed(0)\nmodel = torch.nn.Linear(2, 1)\nx = torch.randn(3, 2)"


@register("which_mode_records", N_("Which ways of running a model record a graph"), place=710)
def which_mode_records(seed=None) -> Exercise:
    setup = MODEL + "\n\n" + "\n\n".join(f"# {k}\n{code}" for k, code in MODES.items())
    return flags(
        MODES, lambda code: bool(run(f"{MODEL}\n{code}")["out"].requires_grad), "eval",
        (_("model.eval() only switches layers such as dropout and batch norm to their evaluation behaviour: "
           "autograd still records the forward pass."),
         _("Under no_grad and inference_mode nothing is recorded, and detach() returns a tensor outside the "
           "graph: none of the three requires grad.")),
        ("out.requires_grad", _("Only the grad modes (no_grad, inference_mode) and detach() give a tensor without "
                                "a graph. eval() changes what dropout and batch norm do, not whether autograd "
                                "records: for evaluation use model.eval() together with torch.no_grad() or "
                                "torch.inference_mode().")),
        name="which_mode_records", intro=_("Four ways to run the same layer, each on a fresh model."),
        setup=setup, question=_("In each case, does out require grad (does it carry a graph)? "
                                "Answer in the order {order}.").format(order=_(", ").join(MODES)),
        hints=[_("Which of the four changes autograd's recording, and which changes only the layers' behaviour?"),
               _("model.eval() sets model.training = False; it does not touch requires_grad.")],
        praise=_("eval() is about dropout and batch norm; no_grad, inference_mode and detach() are about the "
                 "graph."))


TARGET = """torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
x, x2 = torch.randn(3, 2), torch.randn(3, 2)
{make}
loss = (model(x) * target).mean()   # {saves}
loss.backward()"""
SAVES = N_("multiplication saves target for backward")
MAKES = {
    "no_grad": "with torch.no_grad():\n    target = model(x2)",
    "inference_mode": "with torch.inference_mode():\n    target = model(x2)",
    "detach": "target = model(x2).detach()",
}


@register("target_without_graph", N_("A target made without a graph, then used in a loss"), place=720)
def target_without_graph(seed=None) -> Exercise:
    saves = _(SAVES)
    setup = TARGET.format(saves=saves, make="# " + _("target is made in one of three ways:") + "\n"
                          + "\n".join(f"#   {k}: {code.splitlines()[-1].strip()}" for k, code in MAKES.items()))
    return flags(
        MAKES, lambda code: outcome(TARGET.format(make=code, saves=saves))[1] is None, "inference_mode",
        (_("A tensor made under torch.inference_mode() is an inference tensor: autograd refuses to save it for "
           "backward (\"Inference tensors cannot be saved for backward\"), and the multiplication needs to save "
           "target."),
         _("A tensor made under no_grad, or by detach(), is an ordinary tensor that does not require grad: it can "
           "be used, and saved, in a later graph.")),
        # Translators: the label of the solution's answers, "Works: no_grad: yes, inference_mode: no, ..."
        (_("Works"), _("no_grad and detach() give normal tensors without a graph. inference_mode gives inference "
                       "tensors, faster to make but barred from autograd later: a node may not save one. Use "
                       "inference_mode only for values that never meet autograd again.")),
        name="target_without_graph",
        intro=_("A target computed by the model itself, without a graph, used in a loss."),
        setup=setup, question=_("Does loss.backward() run without an error when target is made with {ways}?").format(
            ways=_(", ").join(MAKES)),
        hints=[_("All three give a target that does not require grad. Are they all ordinary tensors?"),
               _("Look at target.is_inference() in each case.")],
        praise=_("no_grad and detach() for values used again; inference_mode for values that never meet "
                 "autograd."))
