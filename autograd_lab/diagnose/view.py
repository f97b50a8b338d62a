"""Front end of the diagnose room: %%explain (run a cell, explain an autograd error instead of the
traceback wall), explain_errors (the same for every cell, as an IPython exception handler) and
%%backward_profile (run a cell as a training step, measure, show the verdict)."""
from __future__ import annotations

import ast
import itertools
import linecache
import warnings

from ..display import View, live, png, show
from ..errors import LabInputError
from . import faces
from .draw import profile_figure
from .explain import explain
from .measure import parameters_in
from .profile import profile_backward

_NONLEAF = "The .grad attribute of a Tensor that is not a leaf"
_cells = itertools.count(1)
_installed = {}  # "shell" and "showwarning" while explain_errors(True) is on


class ExplanationView(View):
    def __init__(self, explanation, show_original: bool = False):
        self.explanation, self.show_original = explanation, show_original

    def text(self) -> str:
        return faces.explanation_text(self.explanation, self.show_original)

    def html(self) -> str:
        return faces.explanation_html(self.explanation, self.show_original)


class ProfileView(View):
    def __init__(self, profile):
        self.profile = profile

    def text(self) -> str:
        return faces.profile_text(self.profile)

    def html(self) -> str:
        return faces.profile_html(self.profile)

    def figure(self):
        return profile_figure(self.profile) if self.profile.steps else None

    def figure_title(self) -> str:
        return "backward time and graph nodes per step"

    def build_widget(self):
        import ipywidgets as w

        parts = []
        fig = self.figure()
        if fig is not None:
            image = w.Image(value=png(fig), format="png")
            image.add_class("agl-profile-figure")
            parts.append(image)
        faces_html = w.HTML(self.html())
        faces_html.add_class("agl-profile-text")
        parts.append(faces_html)
        box = w.VBox(parts)
        box.add_class("agl-profile")
        return box


def _compile(shell, cell: str, tag: str):
    """The cell as (statements, last expression or None), compiled under a name linecache knows, so
    tracebacks and explanations can quote the learner's line."""
    source = shell.transform_cell(cell)
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    filename = f"<{tag}-{next(_cells)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    body = compile(tree, filename, "exec")
    return body, (compile(last, filename, "eval") if last is not None else None)


def run_explained(shell, cell: str, show_original: bool = False):
    """Run the cell like a normal cell and return its last expression's value; if autograd raises
    (or warns that a non-leaf's .grad was read), show the explanation instead of the traceback.

    >>> run_explained(get_ipython(), "x = torch.ones(2)\\nx.numpy()")  # doctest: +SKIP
    """
    body, expr = _compile(shell, cell, "explain")
    with warnings.catch_warnings(record=True) as caught:
        # the learner's filters stay; only the non-leaf warning is always caught, to be explained
        warnings.filterwarnings("always", message=_NONLEAF)
        try:
            exec(body, shell.user_global_ns, shell.user_ns)
            value = eval(expr, shell.user_global_ns, shell.user_ns) if expr is not None else None
        except Exception as err:
            explanation = explain(err, names=shell.user_ns)
            if not explanation.known:
                raise
            value, failure = None, explanation
        else:
            failure = None
    for w in caught:
        explained = explain(w, names=shell.user_ns)
        if explained.known:
            show(ExplanationView(explained, show_original))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
    if failure is not None:
        show(ExplanationView(failure, show_original))
    return value


def _handler(shell, etype, value, tb, tb_offset=None):
    explanation = explain(value, names=shell.user_ns)
    if not explanation.known:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    show(ExplanationView(explanation))
    return None


def explain_errors(flag: bool = True, shell=None) -> None:
    """Explain every autograd error (and the non-leaf .grad warning) in this notebook: True installs
    an IPython exception handler, False removes it. Other errors show as usual.

    >>> autograd_lab.explain_errors(True)  # doctest: +SKIP
    """
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if flag:
        if shell is None:
            raise LabInputError("explain_errors works inside IPython or Jupyter. In a script, use: "
                                "except RuntimeError as err: print(autograd_lab.explain(err))")
        shell.set_custom_exc((Exception,), _handler)
        if "showwarning" not in _installed:
            _installed["showwarning"] = warnings.showwarning
            warnings.showwarning = _explaining_showwarning
        _installed["shell"] = shell
        return
    mine = _installed.pop("shell", None)
    if mine is not None and getattr(mine, "CustomTB", None) is not None and mine.custom_exceptions == (Exception,):
        mine.set_custom_exc((), None)
    if "showwarning" in _installed:
        warnings.showwarning = _installed.pop("showwarning")


def _explaining_showwarning(message, category, filename, lineno, file=None, line=None):
    original = _installed.get("showwarning", warnings._showwarning_orig)
    shell = _installed.get("shell")
    if shell is not None and str(message).startswith(_NONLEAF):
        record = warnings.WarningMessage(message, category, filename, lineno, file, line)
        show(ExplanationView(explain(record, names=shell.user_ns)))
        return
    original(message, category, filename, lineno, file, line)


def profile_cell(shell, cell: str, steps: int = 20, warmup: int = 2) -> ProfileView:
    """Run the cell (one training step ending in the loss) warmup + steps times in the learner's
    namespace, calling backward on each loss, and return the profile's view.

    >>> profile_cell(get_ipython(), "h = torch.tanh(W @ h + x)\\nh.pow(2).sum()")  # doctest: +SKIP
    """
    body, expr = _compile(shell, cell, "backward_profile")
    if expr is None:
        raise LabInputError("the cell must end in the loss, as an expression on its last line, e.g. "
                            "loss = (model(x) - y).pow(2).mean() then a last line: loss")
    ns = shell.user_ns
    read = sorted({n.id for n in ast.walk(ast.parse(shell.transform_cell(cell))) if isinstance(n, ast.Name)})

    def step():
        exec(body, shell.user_global_ns, ns)
        return eval(expr, shell.user_global_ns, ns)

    bar = _progress(warmup + steps)
    try:
        prof = profile_backward(step, steps=steps, warmup=warmup, params=parameters_in(list(ns.values())),
                                watch=lambda: {n: ns[n] for n in read if n in ns},
                                on_step=(lambda i: setattr(bar, "value", i)) if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    return ProfileView(prof)


def _progress(total: int):
    """An ipywidgets progress bar in a live kernel; nothing elsewhere (and never on stderr)."""
    if not live():
        return None
    import ipywidgets as w
    from IPython.display import display

    bar = w.IntProgress(value=0, min=0, max=total, description="profiling")
    bar.add_class("agl-profile-progress")
    display(bar)
    return bar
