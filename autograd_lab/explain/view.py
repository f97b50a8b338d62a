"""Front end of the explainer: explain() (an explained error as a view), %%explain (run a cell,
explain an autograd error instead of the traceback wall) and explain_errors (the same for every cell,
as an IPython exception handler that leaves the learner's own handler in place)."""
from __future__ import annotations

import warnings

from ..display import ModelView, show
from ..errors import LabInputError
from ..i18n import _
from . import faces
from .anomaly import TRACEABLE, Rerun, run_under_anomaly
from .context import compile_cell
from .explanation import Explanation, explanation_of

_NONLEAF = "The .grad attribute of a Tensor that is not a leaf"
# while explain_errors(True) is on: "shell", "showwarning", and the handler it found ("theirs")
# and the one it installed ("ours"), to put the learner's back when it is turned off
_installed: dict = {}


class ExplanationView(ModelView):
    """An explained error; attributes (kind, summary, why, fix, original, known) are the model's."""

    model: Explanation

    def __init__(self, explanation: Explanation, show_original: bool = False):
        self.model, self.show_original = explanation, show_original

    def text(self) -> str:
        return faces.explanation_text(self.model, self.show_original)

    def html(self) -> str:
        return faces.explanation_html(self.model, self.show_original)


def explain(exc, names=None, line: str | None = None) -> ExplanationView:
    """Explain an autograd error (an exception, a warning or its message) in terms of the graph.

    names: the learner's variables (a notebook's namespace) to name tensors with; by default the
    names visible where the error was raised. line: the failing line, when the traceback lacks it.

    >>> import torch
    >>> try:
    ...     torch.tensor([1., 2.]).sum().backward()
    ... except RuntimeError as err:
    ...     e = explain(err)
    >>> e.kind
    'no_grad_fn'
    >>> print(e.fix.splitlines()[0])
    # mark the inputs you want gradients for, before computing from them:
    """
    return ExplanationView(explanation_of(exc, names, line))


def run_explained(shell, cell: str, show_original: bool = False, anomaly: bool = False):
    """Run the cell like a normal cell and return its last expression's value; if autograd raises
    (or warns that a non-leaf's .grad was read), show the explanation instead of the traceback.

    anomaly: only when the learner asks. If backward failed inside a node (a saved value changed in
    place, a freed graph), run the cell a second time with torch.autograd.detect_anomaly() on, and
    show the line of the cell whose forward op saved that value. The second run repeats the cell's
    side effects (prints, appends, in-place edits of earlier tensors); anomaly mode's own warnings
    are kept off stderr.

    >>> from IPython.testing.globalipapp import get_ipython
    >>> from IPython.utils.capture import capture_output
    >>> shell = get_ipython()
    >>> run_explained(shell, "6 * 7")
    42
    >>> with capture_output() as shown:
    ...     run_explained(shell, "import torch\\ntorch.ones(2).sum().backward()")
    >>> shown.outputs[0].data["text/plain"].splitlines()[0]
    'autograd error explained (no grad fn)'
    """
    body, expr = compile_cell(shell, cell, "explain")
    failure: Explanation | None = None
    with warnings.catch_warnings(record=True) as caught:
        # the learner's filters stay; only the non-leaf warning is always caught, to be explained
        warnings.filterwarnings("always", message=_NONLEAF)
        try:
            exec(body, shell.user_global_ns, shell.user_ns)
            value = eval(expr, shell.user_global_ns, shell.user_ns) if expr is not None else None
        except Exception as err:
            explanation = explanation_of(err, names=shell.user_ns)
            if not explanation.known:
                raise
            value, failure = None, explanation
    for w in caught:
        explained = explanation_of(w, names=shell.user_ns)
        if explained.known:
            show(ExplanationView(explained, show_original))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
    if failure is not None:
        if anomaly:
            failure.anomaly = _rerun(shell, cell, failure.kind)
        show(ExplanationView(failure, show_original))
    return value


def _rerun(shell, cell: str, kind: str) -> Rerun:
    if kind not in TRACEABLE:
        return Rerun(False)
    body, expr = compile_cell(shell, cell, "explain")
    # the first run's warnings were shown already: the second run's copies are dropped
    _, found, _ = run_under_anomaly(body, expr, shell.user_global_ns, shell.user_ns)
    return Rerun(True, found)


def _handler(shell, etype, value, tb, tb_offset=None):
    explanation = explanation_of(value, names=shell.user_ns)
    if explanation.known:
        show(ExplanationView(explanation))
        return None
    their_types, their_handler = _installed.get("theirs", ((), None))
    if their_types and isinstance(value, their_types):
        return their_handler(etype, value, tb, tb_offset=tb_offset)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return None


def explain_errors(flag: bool = True, shell=None) -> None:
    """Explain every autograd error (and the non-leaf .grad warning) in this notebook: True installs
    an IPython exception handler, False removes it. Other errors show as usual; an exception handler
    of your own (IPython's set_custom_exc) keeps handling its errors, and is back alone after False.

    >>> from IPython.testing.globalipapp import get_ipython
    >>> explain_errors(True, shell=get_ipython())
    >>> explain_errors(False)
    """
    if not flag:
        _uninstall()
        return
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        raise LabInputError(_("explain_errors works inside IPython or Jupyter. In a script, use: "
                              "except RuntimeError as err: print(autograd_lab.explain(err))"))
    if _installed.get("shell") is shell and getattr(shell, "CustomTB", None) is _installed.get("ours"):
        return  # already on: keep the learner's handler saved the first time
    _uninstall()
    theirs = (tuple(shell.custom_exceptions), shell.CustomTB)
    # their exception types stay caught, even those that are not an Exception (KeyboardInterrupt)
    shell.set_custom_exc((Exception,) + theirs[0], _handler)
    _installed.update(shell=shell, theirs=theirs, ours=shell.CustomTB)
    if "showwarning" not in _installed:
        _installed["showwarning"] = warnings.showwarning
        warnings.showwarning = _explaining_showwarning


def _uninstall() -> None:
    """Put back the handler the learner had, unless they replaced ours since (then theirs stays)."""
    shell = _installed.pop("shell", None)
    theirs = _installed.pop("theirs", ((), None))
    ours = _installed.pop("ours", None)
    if shell is not None and shell.CustomTB is ours:
        shell.set_custom_exc((), None)
        if theirs[0]:
            shell.custom_exceptions, shell.CustomTB = theirs
    if "showwarning" in _installed:
        warnings.showwarning = _installed.pop("showwarning")


def _explaining_showwarning(message, category, filename, lineno, file=None, line=None):
    # after explain_errors(False), a copy of this function kept by someone else falls back to Python's
    original = _installed.get("showwarning") or warnings._showwarning_orig  # type: ignore[attr-defined]
    shell = _installed.get("shell")
    if shell is not None and str(message).startswith(_NONLEAF):
        record = warnings.WarningMessage(message, category, filename, lineno, file, line)
        show(ExplanationView(explanation_of(record, names=shell.user_ns)))
        return
    original(message, category, filename, lineno, file, line)
