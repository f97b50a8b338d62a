"""Record one real backward(): every node the engine ran, in the order it ran them, with the
gradients that arrived and the gradients it sent on.

The recording runs the engine once, for real, on the learner's graph: torch.autograd.grad(output,
inputs=leaves, retain_graph=True), with one post-hook per node but the accumulators and a hook on
each leaf. (When learner code can run inside the engine, the same run is made one level below
grad(), Variable._execution_engine.run_backward, so that guard.NestedBackward is on the stack while
it runs; with no leaf, a backward() that writes nothing.) Every value a step shows comes from that
run. The engine then writes no leaf's .grad and runs no post-accumulate-grad hook: it
captures each leaf's gradient where the leaf's accumulator would run, and the accumulator's step is
made from what it captured (marked as such); the learner's own hooks on an accumulator node run
there, as the engine would run them (recorder.py). What the run may still change of the learner's is set
aside and put back (guard.py): the .grad of retain_grad() tensors, module buffers, hooks that
remove themselves, what a backward started by their code writes, the random state. The learner's
own tensor and module hooks run, as in backward(), and the trace says what of theirs ran
(hooks.py). Nothing of torch is replaced.

With apply=True the recording is the learner's backward itself: one run of backward() that writes
.grad, runs every hook once and frees the graph as backward() does."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import warnings

import torch

from ..errors import LabInputError
from ..graph import MAX_DEPTH, Graph, collector_paused, deeper_than, root_fns, snapshot
from ..i18n import _
from ..names import caller_names, label as shortened, name_in
from .failures import (REENTRANT_CHECKPOINT, TraceError, check_input, deeper_than_the_limit, explain,
                       reentrant_checkpoint)
from .guard import NestedBackward, SetAside, find, held_interrupts, learner_code_may_run, refused_selective
from .ready import Replay
from .recompute import packed_holders
from .recorder import NESTED_LIMIT, NestedTooDeep, Recorder, capture_leaves, hook_every_node
from .hooks import HookFailed, LearnerHooks, module_name
from .steps import Step, accumulated, steps_of

__all__ = ["Step", "Trace", "TraceError", "check_input", "trace"]


@dataclass(eq=False)
class Trace:
    """The recording of one backward. trace.steps in engine order; trace.grad(leaf) per leaf."""

    output: torch.Tensor | tuple = field(repr=False)  # several outputs: a tuple, as backward() takes them
    gradient: torch.Tensor | tuple | None = field(repr=False)
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
    # the leaves' gradients were captured by torch.autograd.grad where their accumulators would
    # run (the accumulators themselves did not run: no .grad written, no post-accumulate hook)
    captured: bool = False
    checkpointed: bool = False  # a live non-reentrant checkpoint held values of the graph
    # the module buffers that learner code running inside the recording changed, put back (names)
    put_back: list = field(default_factory=list, repr=False)
    # what the learner's hooks' runs are called -> (kind, hook name); {node fn: saved values its
    # learner's unpack hooks unpack}: what ran of theirs (yours.py)
    hook_kinds: dict = field(default_factory=dict, repr=False)
    unpacks: dict = field(default_factory=dict, repr=False)
    own: bool = False  # the learner's own backward() or grad() call, recorded by record()
    call: str = "backward"  # which: "grad" returns the gradients and writes no .grad
    # backward(inputs=...): the tensors the gradient was asked for (None: every leaf)
    inputs: tuple | None = field(default=None, repr=False)
    _steps: list | None = field(default=None, repr=False)
    _yours: list | None = field(default=None, repr=False)

    @property
    def steps(self) -> list[Step]:
        """The steps in the engine's order (made on first use: a recording would make one per node)."""
        if self._steps is None:
            with held_interrupts(), collector_paused():
                self._steps = steps_of(self)
        return self._steps

    @property
    def yours(self) -> list:
        """What of the learner's own code ran in the recording, by kind (yours.Ran: kind, count,
        a few names): hooks, a Function's backward, unpack hooks, a checkpoint's forward."""
        if self._yours is None:  # worked out once: every text, HTML and widget face asks
            from .yours import ran_of_yours

            self._yours = ran_of_yours(self)
        return self._yours

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
            torch.autograd.backward(self.output, self.gradient, retain_graph=retain_graph, inputs=self.inputs)
            self.applied = True

    def __repr__(self) -> str:
        names = ", ".join(s.node.title for s in self.steps[:6])
        more = ", ..." if len(self.steps) > 6 else ""
        return f"<Trace: {len(self.steps)} steps: {names}{more}>"


def trace(output, gradient=None, names: Mapping | None = None, label: str | None = None,
          apply: bool = False, retain_graph: bool = False, inputs=None) -> Trace:
    """Run output.backward(gradient) once for real and record every step the engine took.

    names maps the learner's variable names to values (default: the caller's variables); it labels
    the nodes. label is what the learner typed for output (messages use it). apply=True makes the
    run the learner's own backward: .grad is written and the graph freed unless retain_graph.
    inputs, as in backward(inputs=...): a tensor or a sequence of them; only the nodes on a path to
    them run, and only their gradients are kept (.grad of those alone with apply=True).

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
    what = shortened(label or name_in(names, output) or _("the output"))  # messages quote it shortened
    output, gradient = _checked(output, gradient, names, what)
    # Ctrl-C held while the lab's code runs (guard.py); a recording makes a few objects per node and
    # no garbage
    inputs = _inputs(inputs)
    if deeper_than(output, MAX_DEPTH):  # before the lab reaches the deeper nodes
        raise TraceError(deeper_than_the_limit(what))
    with held_interrupts(), collector_paused():
        graph = snapshot(output, names)
        if any(kind.__name__ == REENTRANT_CHECKPOINT for kind in graph.kinds):
            raise TraceError(reentrant_checkpoint(what))
        if inputs is not None:
            _check_inputs(inputs, graph, names, what)
        # A freed graph is found by the engine itself when it reaches the first freed node.
        return _record(output, gradient, graph, names, what, apply, retain_graph, inputs=inputs)


def record_call(output, run, names: Mapping, label: str | None = None, captured=()) -> Trace | None:
    """Record the learner's own backward() or grad() call as they made it: run() makes the call (its
    result is the caller's to keep), with the recorder's hooks on output's graph; .grad is written,
    hooks run once and the graph is freed exactly as their call does. captured: the leaves a grad()
    call asks for (their accumulators do not run: their steps are what the engine captured).
    Returns the trace, or None when the call cannot be recorded (then run() was called as it is).
    The learner's own errors reach them unchanged."""
    what = shortened(label or name_in(names, output) or _("the output"))
    if not root_fns(output) or deeper_than(output, MAX_DEPTH):
        run()
        return None
    with held_interrupts(), collector_paused():
        graph = snapshot(output, names)
        if any(kind.__name__ == REENTRANT_CHECKPOINT for kind in graph.kinds):
            run()
            return None
        t = _record(output, None, graph, names, what, True, False, run=run, captured=captured)
    t.own, t.call = True, "grad" if captured else "backward"
    return t


def _checked(output, gradient, names: Mapping, what: str):
    """(output, gradient) as backward() takes them, each output checked: one tensor and its gradient,
    or several outputs (a tuple or list) and a gradient for each, as torch.autograd.backward(tensors,
    grad_tensors) takes them (None for a one-number output)."""
    if not isinstance(output, (tuple, list)):
        return output, check_input(output, gradient, what)
    outputs = tuple(output)
    if not outputs:
        raise TraceError(_("give at least one output to backward, e.g. (a, b). Nothing was changed."))
    if len(outputs) == 1:
        single = gradient[0] if isinstance(gradient, (tuple, list)) and len(gradient) == 1 else gradient
        return outputs[0], check_input(outputs[0], single, what)
    given = (None,) * len(outputs) if gradient is None else gradient
    if not isinstance(given, (tuple, list)) or len(given) != len(outputs):
        raise TraceError(_("{what} has {count} outputs: give one gradient for each, in a tuple, e.g. --gradient "
                           "(torch.ones_like(a), None) (None for a one-number output). Nothing was changed.").format(
                               what=what, count=len(outputs)))
    checked = tuple(check_input(o, g, name_in(names, o) or f"{what}[{i}]")
                    for i, (o, g) in enumerate(zip(outputs, given, strict=True)))
    return outputs, checked


def _inputs(inputs) -> tuple | None:
    """inputs= as a tuple of tensors, or a LabInputError saying what to pass."""
    if inputs is None:
        return None
    given = (inputs,) if isinstance(inputs, torch.Tensor) else inputs
    if not isinstance(given, (tuple, list)) or not given or not all(isinstance(t, torch.Tensor) for t in given):
        raise LabInputError(_("inputs takes a tensor or a list of tensors the gradient is wanted for, e.g. "
                              "inputs=[w]; got {kind}. Nothing was changed.").format(kind=type(inputs).__name__))
    return tuple(given)


def _check_inputs(inputs: tuple, graph: Graph, names: Mapping, what: str) -> None:
    leaves = {id(fn.variable) for fn in graph.accumulators()}
    for t in inputs:
        if t.grad_fn is not None:  # its gradient would be captured where no hook of the lab's sees it
            raise LabInputError(_("{input} was computed (it has a grad_fn): a recording takes as inputs= the "
                                  "leaves you created with requires_grad=True, e.g. inputs=[w]. Nothing was "
                                  "changed.").format(input=name_in(names, t) or _("an input")))
        if not (t.requires_grad and id(t) in leaves):
            raise LabInputError(_("{input} is not in the graph of {what} (it is not one of the tensors {what} was "
                                  "computed from with requires_grad=True): backward(inputs=...) takes those. "
                                  "Nothing was changed.").format(input=name_in(names, t) or _("an input"), what=what))


def _record(output, gradient, graph: Graph, names: Mapping, what: str, apply: bool,
            retain_graph: bool, run=None, captured=(), inputs: tuple | None = None) -> Trace:
    handles: list = []
    holders = None
    hooks = None
    aside = None
    try:
        found = find(graph)
        if found.selective and not apply:  # a recording beside theirs would use up its one backward
            raise TraceError(refused_selective(what))
        leaves = [fn.variable for fn in graph.accumulators()]
        kept_leaf_grads = [leaf.grad for leaf in leaves]
        capture = not apply and bool(leaves)
        if run is not None and captured:  # the learner's grad() call: it accumulates nothing
            wanted = {id(t) for t in captured}
            leaves, capture, kept_leaf_grads = [t for t in leaves if id(t) in wanted], True, [None] * len(leaves)
        elif inputs is not None:  # backward(inputs=...): only those leaves are reached
            wanted = {id(t) for t in inputs}
            leaves = [t for t in leaves if id(t) in wanted]
        recording = Recorder(graph, output if isinstance(output, tuple) else (output,))
        recording.copying[1] = apply
        node_dicts = hook_every_node(graph, recording, handles, capture, beside=not (run is not None and captured))
        learner_hooks = LearnerHooks(graph, found.hooked, names, node_dicts, check=run is None)
        with learner_hooks as hooks, warnings.catch_warnings():
            # anomaly mode's "Error detected in ..." warning is a traceback of the forward: the
            # error that follows is explained instead
            warnings.filterwarnings("ignore", message="Error detected in")
            recording.copying[0] = hooks.any
            if capture:
                capture_leaves(graph, recording, handles, leaves)
            learner = learner_code_may_run(graph, found, bool(node_dicts))
            if apply:
                kept_leaf_grads = [None if g is None else g.detach().clone() for g in kept_leaf_grads]
                # read before the run: backward() frees what the nodes saved, and the checkpoints'
                # placeholders that tell where a forward ran again
                holders = packed_holders(graph.nodes) if found.checkpoint else None
                _read_saved(graph)
                if run is not None:
                    run()
                else:
                    torch.autograd.backward(output, gradient, retain_graph=retain_graph, inputs=inputs)
            else:
                with SetAside(found, buffers=learner) as aside:
                    _run(output, gradient, inputs or (leaves if capture else ()), aside if learner else None)
                    if found.checkpoint:  # reading a checkpointed value runs its forward again
                        _read_saved(graph)
    except Exception as err:
        told = _told(err, what, graph, names, apply, own=run is not None)
        if told is None:
            raise
        raise told from None
    finally:
        for handle in handles:
            handle.remove()
    return Trace(output, gradient, graph, recording.order, names, hooks_ran=hooks.ran, applied=apply,
                 checkpoint_holders=holders, accumulated=accumulated(graph, recording.order, kept_leaf_grads),
                 captured=capture, checkpointed=found.checkpoint,
                 put_back=[f"{module_name(m, names)}.{b}" for m, b in aside.put_back] if aside is not None else [],
                 hook_kinds=hooks.kinds, unpacks=found.unpacks, inputs=inputs)


def _told(err: Exception, what: str, graph: Graph, names: Mapping, apply: bool, own: bool) -> Exception | None:
    """What a recording that failed raises instead of err (None: err itself). The learner's own
    call (record()) gives them their own error, a hook's included; a recording gives one paragraph."""
    if own:
        return err.__cause__ if isinstance(err, HookFailed) and isinstance(err.__cause__, Exception) else None
    if isinstance(err, TraceError):
        return None
    if isinstance(err, HookFailed):
        fix = (_("{failure}. Fix the hook or remove it (h.remove() on the handle register_hook returned).") if apply
               else _("{failure}. Fix the hook or remove it (h.remove() on the handle register_hook returned); "
                      "nothing of yours was changed."))
        return TraceError(fix.format(failure=err))
    if isinstance(err, NestedTooDeep):
        return TraceError(_("Code of yours inside the backward (a Function's backward, or a hook) starts a backward, "
                            "which starts another, again and again: the recording stopped it after {count} rounds "
                            "(your own backward() would not end either). Nothing of yours was changed.").format(
                                count=NESTED_LIMIT))
    # the engine's own error, or a custom Function's: one paragraph
    return TraceError(explain(err, what, graph, names, apply))


# The engine itself, called below torch.autograd.grad: the interception of a backward started by
# learner code (a TorchFunctionMode) must be on the stack while the engine runs, and grad() would
# hand its own call to that mode, which steps aside while it handles a call.
_ENGINE = getattr(torch.autograd.Variable, "_execution_engine", None)


def _run(output, gradient, leaves, aside) -> None:
    """The recording's one engine run: the gradients of leaves (every leaf, or the inputs asked for)
    captured (no accumulator runs, no .grad written), or with no leaf a backward that writes nothing.
    aside, when learner code may run inside the engine, takes what a backward started by that code
    writes."""
    if aside is None or _ENGINE is None:
        if leaves:
            torch.autograd.grad(output, leaves, gradient, retain_graph=True, allow_unused=True)
        else:
            torch.autograd.backward(output, gradient, retain_graph=True)
        return
    outputs = output if isinstance(output, tuple) else (output,)
    gradients = gradient if isinstance(gradient, tuple) else (gradient,)
    gradients = tuple(torch.ones_like(o, memory_format=torch.preserve_format) if g is None else g
                      for o, g in zip(outputs, gradients, strict=True))
    with NestedBackward(aside):
        _ENGINE.run_backward(outputs, gradients, True, False, tuple(leaves), True, not leaves)


def _read_saved(graph: Graph) -> None:
    for node in graph.nodes:
        node.saved  # noqa: B018 -- read once: cached on the node
