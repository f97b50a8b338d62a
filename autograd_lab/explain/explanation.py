"""Autograd's error messages explained from the learner's own code: what went wrong in the graph,
with their names, and the fix as code. Messages are recognised by how they start (the tail changes
between PyTorch versions); anything else is reported as unknown so the caller passes it through."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

from ..errors import LabInputError
from ..format import MESSAGE, quote
from ..i18n import _
from . import context as ctxmod
from .kinds import KINDS


@dataclass(repr=False)
class Explanation:
    """One explained error. kind is 'unknown' when the lab does not recognise the message.

    >>> explanation_of("element 0 of tensors does not require grad", line="q.backward()")
    Explanation(no_grad_fn: q is not part of any graph: nothing it came from requires grad.)
    """

    kind: str
    summary: str
    why: str
    fix: str
    original: str
    category: str = "RuntimeError"
    anomaly: object = None  # an anomaly.Rerun when the learner asked for anomaly mode

    @property
    def known(self) -> bool:
        return self.kind != "unknown"

    def __repr__(self) -> str:
        return f"Explanation({self.kind}: {self.summary})"


def explanation_of(exc, names=None, line: str | None = None) -> Explanation:
    """Explain an autograd error (an exception, a warning or its message) in terms of the graph.

    names: the learner's variables (a notebook's namespace) to name tensors with; by default the
    names visible where the error was raised. line: the failing line, when the traceback lacks it.

    >>> explanation_of(RuntimeError("grad can be implicitly created only for scalar outputs"),
    ...                line="y.backward()").fix.splitlines()[0]
    'y.sum().backward()'
    """
    message, category, ctx = _message_and_context(exc, names)
    if line is not None:
        ctx.line = line.strip()
    for kind, _title, starts, build in KINDS:
        if any(_starts(message, s) for s in starts):
            summary, why, fix = build(message, ctx)
            return Explanation(kind, summary, why, fix, message, category)
    # the message is kept whole (original); what the faces show of it is bounded
    first = message.splitlines()[0] if message else ""
    return Explanation("unknown", quote(first, MESSAGE), "", "", message, category)


def _starts(message: str, start) -> bool:
    if isinstance(start, str):
        return message.lower().startswith(start.lower())
    return start.match(message) is not None


def _message_and_context(exc, names):
    if isinstance(exc, warnings.WarningMessage):
        category = exc.category.__name__
        return str(exc.message), category, ctxmod.from_warning(exc.filename, exc.lineno, names)
    if isinstance(exc, BaseException):
        ctx = ctxmod.from_exception(exc, names)
        message = str(exc.args[0]) if isinstance(exc, Warning) and exc.args else str(exc)
        return message, type(exc).__name__, ctx
    if isinstance(exc, str):
        return exc, "RuntimeError", ctxmod.Context("", dict(names or {}))
    raise LabInputError(_("explain() takes an exception, a warning or a message, not {type}. "
                          "Type: try: ... except RuntimeError as err: autograd_lab.explain(err)"
                          ).format(type=type(exc).__name__))
