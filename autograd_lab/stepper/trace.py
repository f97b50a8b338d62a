"""Record one real backward(): every node the engine ran, in the order it ran them, with the
gradients that arrived and the gradients it sent on, accumulators included.

The recording runs the engine for real (torch.autograd.backward with retain_graph=True) with one
post-hook per node, and gives back everything it touched (guard.py): every .grad it would write, the
post-accumulate-grad hooks, buffers and the random state are set aside and put back, so the
learner's tensors, their versions and their graph are as before. The learner's own tensor and module
hooks run, as in backward(), and the trace says which ran (hooks.py). With apply=True the recording
is the learner's backward itself: one run that writes .grad and frees the graph as backward() does."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch

import warnings

from ..errors import LabInputError
from ..graph import Graph, collector_paused, snapshot
from ..i18n import _
from ..names import caller_names, name_in
from .failures import REENTRANT_CHECKPOINT, TraceError, check_input, explain, reentrant_checkpoint

__all__ = ["Step", "Trace", "TraceError", "check_input", "trace"]
from .guard import Found, SetAside, install
from .ready import Replay
from .recompute import packed_holders
from .recorder import Recorder, hook_every_node
from .hooks import HookFailed, LearnerHooks
from .steps import Step, accumulated, steps_of


@dataclass(eq=False)
class Trace:
    """The recording of one backward. trace.steps in engine order; trace.grad(leaf) per leaf."""

    output: torch.Tensor = field(repr=False)
    gradient: torch.Tensor | None = field(repr=False)
    graph: Graph = field(repr=False)
    # what the recorder appended, (fn, grad_outputs, grad_inputs) per step: the steps are made
    # from it when first asked for (steps)
    order: list | None = field(repr=False)
    names: Mapping = field(default_factory=dict, repr=False)
    _ready: Replay | None = field(default=None, repr=False)
    hooks_ran: list = field(default_factory=list, repr=False)  # (node, "your hook h on y") in run order
    applied: bool = False  # the recording was the learner's own backward (.grad written)
    # --apply frees the graph: the checkpoints' placeholders, read before the run, tell where a
    # forward ran again (see recompute.py)
    checkpoint_holders: dict | None = field(default=None, repr=False)
    # accumulators whose leaf held a .grad before: (grad_before, grad_after), worked out in the run
    # (the learner may change their .grad later)
    accumulated: dict = field(default_factory=dict, repr=False)
    _steps: list | None = field(default=None, repr=False)

    @property
    def steps(self) -> list[Step]:
        """The steps in the engine's order (made on first use: a recording would make one per node)."""
        if self._steps is None:
            with collector_paused():
                self._steps = steps_of(self)
        return self._steps

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def grad(self, t: torch.Tensor):
        """The gradient backward() would accumulate into the leaf t (None if t is not reached)."""
        for step in self.steps:
            if step.node.leaf is t:
                return step.grad_outputs[0]
        return None

    def ready_at(self, index: int) -> tuple:
        """Before step index (0-based), the nodes that were ready: replayed only as far as asked."""
        if self._ready is None:
            self._ready = Replay(self.graph, self.steps)
        return self._ready.at(index)

    def ready_sets(self) -> list[tuple]:
        """Before each step, the nodes that were ready: the engine's bookkeeping replayed."""
        if self._ready is None:
            self._ready = Replay(self.graph, self.steps)
        return self._ready.all()

    def apply(self, retain_graph: bool = False) -> None:
        """Accumulate into .grad for real, as output.backward(gradient) does (once: a trace recorded
        with apply=True already did)."""
        if not self.applied:
            torch.autograd.backward(self.output, self.gradient, retain_graph=retain_graph)
            self.applied = True

    def __repr__(self) -> str:
        names = ", ".join(s.node.title for s in self.steps[:6])
        more = ", ..." if len(self.steps) > 6 else ""
        return f"<Trace: {len(self.steps)} steps: {names}{more}>"


def trace(output, gradient=None, names: Mapping | None = None, label: str | None = None,
          apply: bool = False, retain_graph: bool = False) -> Trace:
    """Run output.backward(gradient) once for real and record every step the engine took.

    names maps the learner's variable names to values (default: the caller's variables); it labels
    the nodes. label is what the learner typed for output (messages use it). apply=True makes the
    run the learner's own backward: .grad is written and the graph freed unless retain_graph.

    >>> x = torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)
    >>> t = trace((x ** 2).mean())
    >>> [s.name for s in t.steps]
    ['MeanBackward0', 'PowBackward0', 'AccumulateGrad']
    >>> t.grad(x)
    tensor([0.6667, 1.3333, 2.0000], dtype=torch.float64)
    >>> x.grad is None
    True
    """
    if names is not None and not isinstance(names, Mapping):
        raise LabInputError(_("names takes a dict of your names for values, e.g. names={{\"x\": x}}, or nothing "
                              "(then the names of the calling code are used); got a {kind}. Nothing was "
                              "changed.").format(kind=type(names).__name__))
    if label is not None and not isinstance(label, str):
        raise LabInputError(_("label takes the text you typed for the output, e.g. label=\"z\"; got a {kind}. "
                              "Nothing was changed.").format(kind=type(label).__name__))
    if names is None:
        names = caller_names()
    install()
    what = label or name_in(names, output) or _("the output")
    gradient = check_input(output, gradient, what)
    with collector_paused():  # a recording makes a few objects per node and no garbage
        graph = snapshot(output, names)
        if any(kind.__name__ == REENTRANT_CHECKPOINT for kind in graph.kinds):
            raise TraceError(reentrant_checkpoint(what))
        # A freed graph is found by the engine itself when it reaches the first freed node.
        return _record(output, gradient, graph, names, what, apply, retain_graph)


def _record(output, gradient, graph: Graph, names: Mapping, what: str, apply: bool,
            retain_graph: bool) -> Trace:
    found = Found(graph)
    recording = Recorder(graph)
    handles: list = []
    holders = None
    try:
        node_dicts = hook_every_node(graph, recording, handles, found.probe_all)
        kept_leaf_grads = [fn.variable.grad for fn in graph.accumulators()]
        with LearnerHooks(graph, found.hooked, names, node_dicts) as hooks, warnings.catch_warnings():
            # anomaly mode's "Error detected in ..." warning is a traceback of the forward: the
            # error that follows is explained instead
            warnings.filterwarnings("ignore", message="Error detected in")
            recording.copying[0] = hooks.any
            if apply:
                kept_leaf_grads = [None if g is None else g.detach().clone() for g in kept_leaf_grads]
                # read before the run: backward() frees what the nodes saved, and the checkpoints'
                # placeholders that tell where a forward ran again
                holders = packed_holders(graph.nodes) if found.checkpoint else None
                _read_saved(graph)
                torch.autograd.backward(output, gradient, retain_graph=retain_graph)
            else:
                with SetAside(graph, found):
                    torch.autograd.backward(output, gradient, retain_graph=True)
                    if found.checkpoint:  # reading a checkpointed value runs its forward again
                        _read_saved(graph)
    except HookFailed as err:
        fix = (_("{failure}. Fix the hook or remove it (h.remove() on the handle register_hook returned).") if apply
               else _("{failure}. Fix the hook or remove it (h.remove() on the handle register_hook returned); "
                      "nothing of yours was changed."))
        raise TraceError(fix.format(failure=err)) from None
    except Exception as err:  # the engine's own error, or a custom Function's: one paragraph
        raise TraceError(explain(err, what, graph, names, apply)) from None
    finally:
        for handle in handles:
            handle.remove()
    return Trace(output, gradient, graph, recording.order, names, hooks_ran=hooks.ran, applied=apply,
                 checkpoint_holders=holders, accumulated=accumulated(graph, recording.order, kept_leaf_grads))


def _read_saved(graph: Graph) -> None:
    for node in graph.nodes:
        node.saved  # noqa: B018 -- read once: cached on the node
