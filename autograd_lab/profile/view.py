"""Front end of the profiler: profile_backward and compare_inputs (their results as views) and
%%backward_profile (run a cell as a training step, measure, show the verdict)."""
from __future__ import annotations

import ast

from ..display import WIDGET_MIME, ModelView, image_widget, live
from ..errors import LabInputError
from ..i18n import _
from ..explain.context import compile_cell
from . import faces
from .compare import Comparison, run_compare
from .measure import parameters_in
from .records import Profile
from .run import BUDGET, check, profile_steps


class ProfileView(ModelView):
    """A backward profile; attributes (node_counts, growth, carriers, verdict, fix...) are the model's."""

    model: Profile
    text_face = staticmethod(faces.profile_text)
    html_face = staticmethod(faces.profile_html)

    def figure(self):
        return faces.profile_figure(self.model) if self.model.steps else None

    def figure_title(self) -> str:
        return _("backward time and graph nodes per step")

    def build_widget(self):
        import ipywidgets as w

        parts = []
        fig = self.figure()
        if fig is not None:
            image = image_widget(fig)
            image.add_class("agl-profile-figure")
            parts.append(image)
        faces_html = w.HTML(self.html())
        faces_html.add_class("agl-profile-text")
        parts.append(faces_html)
        box = w.VBox(parts)
        box.add_class("agl-profile")
        return box


class ComparisonView(ModelView):
    """An input comparison; attributes (rows, row(), ratio(), verdict) are the model's."""

    model: Comparison
    text_face = staticmethod(faces.comparison_text)
    html_face = staticmethod(faces.comparison_html)


def profile_backward(step_fn, steps: int = 20, warmup: int = 2, *, budget: float = BUDGET, watch=None,
                     params=None, retain_graph: bool = True, on_step=None) -> ProfileView:
    """Run step_fn() (a training step's forward, returning the loss) warmup + steps times, call
    backward on each loss, and measure. The first `warmup` steps are reported as warm-up. A step
    that calls backward() itself is measured as it is: its own backward is timed, none is added.
    The run stops early once `budget` seconds have passed; steps + warmup is at most 10,000.

    watch() -> {name: value} gives the variables the step reads from outside (default: the ones
    step_fn's code mentions); params: ids of trained weights (default: nn.Parameters and tensors an
    optimizer updates). backward keeps each graph (retain_graph=True) so that a graph carried into
    the next step can be measured instead of failing at step 2. on_step(i) is called after each step.

    >>> import torch
    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> prof = profile_backward(lambda: (w * 2).sum(), steps=3, warmup=1)
    >>> prof.node_counts, prof.kind
    ([3, 3, 3, 3], 'flat')
    """
    return ProfileView(profile_steps(step_fn, steps, warmup, watch=watch, params=params,
                                     retain_graph=retain_graph, on_step=on_step, budget=budget))


def compare_inputs(step_fn, data, variants=("as is", "clone()", "detach()", "clone().detach()"),
                   steps: int = 5, warmup: int = 1) -> ComparisonView:
    """Run the same step with the data passed each way and tabulate backward time and graph size.

    step_fn(data) returns the loss, or (loss, carry) to feed carry (e.g. a hidden state) into the
    next step, passed the same way. variants: names among 'as is', 'clone()', 'detach()',
    'clone().detach()', 'detach().clone()', '.data', or (name, function) pairs. Gradients are
    computed with torch.autograd.grad, so no .grad is written.

    >>> import torch
    >>> x = torch.ones(4, requires_grad=True)
    >>> [r.nodes for r in compare_inputs(lambda d: (d * 2).sum(), x, steps=1).rows]
    [3, 4, 0, 0]
    """
    return ComparisonView(run_compare(step_fn, data, variants, steps, warmup))


def profile_cell(shell, cell: str, steps: int = 20, warmup: int = 2, budget: float = BUDGET) -> ProfileView:
    """Run the cell (one training step ending in the loss) warmup + steps times in the learner's
    namespace, calling backward on each loss, and return the profile's view. A cell that calls
    backward() itself is run as it is, its own backward timed. Stops once budget seconds have passed.

    >>> from IPython.testing.globalipapp import get_ipython
    >>> shell = get_ipython()
    >>> shell.run_cell("import torch; W = torch.nn.Parameter(torch.ones(2, 2)); h = torch.zeros(2)")
    <ExecutionResult ...>
    >>> profile_cell(shell, "h = torch.tanh(W @ h + 1)\\nh.pow(2).sum()", steps=2).carriers
    ['h']
    """
    check(steps, warmup, budget, how="%%backward_profile --steps 20")
    body, expr = compile_cell(shell, cell, "backward_profile")
    tree = ast.parse(shell.transform_cell(cell))
    if expr is None and not _calls_backward(tree):
        raise LabInputError(_("the cell must end in the loss, as an expression on its last line, e.g. "
                              "loss = (model(x) - y).pow(2).mean() then a last line: loss"))
    ns = shell.user_ns
    read = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})

    def step():
        exec(body, shell.user_global_ns, ns)
        return eval(expr, shell.user_global_ns, ns) if expr is not None else None

    bar = _progress(warmup + steps)
    try:
        prof = profile_steps(step, steps=steps, warmup=warmup, params=parameters_in(list(ns.values())),
                             budget=budget, watch=lambda: {n: ns[n] for n in read if n in ns},
                             on_step=(lambda i: setattr(bar, "value", i)) if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    return ProfileView(prof)


def _calls_backward(tree) -> bool:
    """Whether the cell's code calls backward() itself (loss.backward(), torch.autograd.backward)."""
    return any((isinstance(n, ast.Attribute) and n.attr == "backward")
               or (isinstance(n, ast.Name) and n.id == "backward") for n in ast.walk(tree))


def _progress(total: int):
    """An ipywidgets progress bar in a live kernel; nothing elsewhere (and never on stderr)."""
    if not live():
        return None
    import ipywidgets as w
    from IPython.display import display

    bar = w.IntProgress(value=0, min=0, max=total, description=_("profiling"))
    bar.add_class("agl-profile-progress")
    # The widget alone, without its text/plain repr ("IntProgress(value=0, ...)"): a stored notebook
    # and a static viewer keep nothing of a bar that is closed once the profile is shown.
    display({WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": bar.model_id}}, raw=True)
    return bar
