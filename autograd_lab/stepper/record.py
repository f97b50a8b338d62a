"""Record the learner's own backward: `%%record` (a cell) and `with autograd_lab.record() as rec:`
(a block) run their code as it is, and record each backward() and grad() call it makes on the
current thread (not those the lab's own code makes), with the learner's own semantics: .grad
written, hooks run once, the graph freed, exactly as their code does. trace() records a backward
beside theirs and changes nothing; record() records theirs.

The calls are seen by a TorchFunctionMode, active only inside the block (torch's own way to see
Tensor.backward, torch.autograd.backward and torch.autograd.grad without replacing them). The first
KEEP_FIRST calls and the last one are kept as steppers; the rest are counted. Every call is
recorded (one pass over the kernel's objects and a hook per node each): a long loop under
%%record pays that at every step."""
from __future__ import annotations

import inspect
import sys
import threading
from collections import ChainMap
from collections.abc import Mapping

import torch
from torch.overrides import TorchFunctionMode

from ..display import View
from ..i18n import _, ngettext
from ..text import esc
from .guard import in_the_lab
from .trace import record_call
from .view import Stepper

KEEP_FIRST = 3
_CALLS = {torch.Tensor.backward: "self", torch.autograd.backward: "tensors", torch.autograd.grad: "outputs"}


class _Calls(TorchFunctionMode):
    """Sees the learner's backward and grad calls made on the recording thread while it is active."""

    def __init__(self, rec: Record):
        super().__init__()
        self.rec, self.owner = rec, threading.get_ident()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in _CALLS or threading.get_ident() != self.owner or in_the_lab(sys._getframe(1)):
            return func(*args, **kwargs)  # not the learner's own call (the lab's trace() or %jacobian, say)
        return self.rec._call(func, args, kwargs)


class Record(View):
    """What record() gives: steppers (the first KEEP_FIRST recorded calls and the last one), count
    (every backward or grad call the block made), unrecorded (calls run but not recorded: several
    without a graph, or one too deep to record)."""

    def __init__(self, names: Mapping | None = None):
        self.names = names
        self.steppers: list[Stepper] = []
        self.count = 0
        self.unrecorded = 0
        self._mode: _Calls | None = None

    def __enter__(self) -> Record:
        if self.names is None:
            frame = sys._getframe(1)
            self.names = ChainMap(frame.f_locals, frame.f_globals)
        self._mode = _Calls(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        mode, self._mode = self._mode, None
        if mode is not None:
            mode.__exit__(*exc)
        return False

    def _call(self, func, args, kwargs):
        self.count += 1
        bound = inspect.signature(func).bind(*args, **kwargs)
        outputs = bound.arguments.get(_CALLS[func])
        if isinstance(outputs, (tuple, list)) and all(isinstance(o, torch.Tensor) for o in outputs):
            outputs = outputs[0] if len(outputs) == 1 else tuple(outputs)
        result: list = []

        def run():
            result.append(func(*args, **kwargs))

        if not isinstance(outputs, (torch.Tensor, tuple)):
            self.unrecorded += 1
            run()
            return result[0]
        captured = ()
        if func is torch.autograd.grad:
            inputs = bound.arguments.get("inputs")
            captured = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs or ())
        trace = record_call(outputs, run, self.names or {}, captured=captured)
        if trace is None:
            self.unrecorded += 1
        else:
            stepper = Stepper(trace, label=trace.graph.root.label or None)
            if len(self.steppers) <= KEEP_FIRST:
                self.steppers.append(stepper)
            else:
                self.steppers[-1] = stepper
        return result[0]

    # --- faces ----------------------------------------------------------------------------------
    def summary(self) -> str:
        recorded = self.count - self.unrecorded
        if self.count == 0:
            return _("no backward() or grad() call of yours ran in the block: nothing was recorded")
        line = ngettext("{count} backward or grad call of yours ran, for real", "{count} backward or grad calls of "
                        "yours ran, for real", self.count).format(count=self.count)
        if recorded > len(self.steppers):
            line += _("; shown: the first {first} and the last; {rest} more were recorded and counted").format(
                first=KEEP_FIRST, rest=recorded - len(self.steppers))
        if self.unrecorded:
            line += ngettext("; {count} could not be recorded (no graph, or one too deep) and ran as it is",
                             "; {count} could not be recorded (no graph, or one too deep) and ran as they are",
                             self.unrecorded).format(count=self.unrecorded)
        return line

    def text(self) -> str:
        return "\n\n".join([self.summary()] + [s.text() for s in self.steppers])

    def html(self) -> str:
        return f"<p>{esc(self.summary())}</p>" + "".join(s.html() for s in self.steppers)

    def build_widget(self):
        import ipywidgets as w

        return w.VBox([w.HTML(value=f"<p>{esc(self.summary())}</p>")] + [s.widget for s in self.steppers])


def record(names: Mapping | None = None) -> Record:
    """Record your own backward() and grad() calls in a block, run as they are:

    >>> import autograd_lab
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> with autograd_lab.record() as rec:
    ...     (x * x).sum().backward()
    >>> x.grad.tolist(), len(rec.steppers), [s.name for s in rec.steppers[0].trace.steps]
    ([2.0, 4.0], 1, ['SumBackward0', 'MulBackward0', 'AccumulateGrad'])
    """
    return Record(names)
