"""Big gradients read when a learner first looks at them, not while the engine runs.

Inside the engine's hook, summarising a big gradient (its norm and first values: two tensor
operations and an object) costs more than everything else the recording does for that node, and a
recording may not hold the gradients themselves (its memory stays bounded). So when a run can be
made again exactly as it was, the recording leaves LATER in the place of each big gradient, and the
first look at such a step runs the same backward once more, with everything set aside as in the first
run, summarising every big gradient in that one pass.

A run can be made again when nothing in it but the engine runs and nothing it reads can move: not
the learner's own backward (apply: the graph is freed), no hooks of the learner's on the graph, no
checkpoint recomputing a forward (random numbers, buffers), no backward written in Python (a custom
Function may count its calls or print), and on the CPU (its kernels give the same bits every time).

The second run must be the first one again: the same nodes in the same order, and every value the
first run kept (the small gradients, and the leaves' gradients, kept whole) equal to the bit. If not,
or if the engine refuses (the graph was freed, a saved tensor was edited in place), every value owed
becomes LOST, which says so; nothing is guessed. Before the learner's own backward or grad, or a new
hook (registry.py), every recording that owes values reads them, while its graph is as recorded."""
from __future__ import annotations

import warnings

import torch

from ..graph import Graph, collector_paused
from ..tensors import LOST
from .guard import Found, SetAside
from .recorder import LATER, Recorder, hook_every_node
from .registry import STATE, torch_backward

_PYTHON_BACKWARD = torch.autograd.function.BackwardCFunction


def replayable(graph: Graph, output: torch.Tensor) -> bool:
    """Whether running this graph's backward again gives the same values (module docstring)."""
    if output.device.type != "cpu" or any(fn.variable.device.type != "cpu" for fn in graph.accumulators()):
        return False
    return not any(issubclass(kind, _PYTHON_BACKWARD) for kind in graph.kinds)


class Owed:
    """The values one recording owes: order is the recording ((fn, grad_outputs, grad_inputs) per
    step, LATER in the place of each big gradient), indices the steps that hold a LATER. values(i)
    gives step i's (grad_outputs, grad_inputs), read on first use."""

    __slots__ = ("__weakref__", "_gradient", "_graph", "_order", "_output", "_values", "indices")

    def __init__(self, output: torch.Tensor, gradient, graph: Graph, order: list, indices: list[int]):
        self._output, self._gradient, self._graph = output, gradient, graph
        self._order, self.indices = order, indices
        self._values: dict | None = None
        STATE.owing.add(self)

    def values(self, index: int) -> tuple[tuple, tuple]:
        if self._values is None:
            self.read_later()
        assert self._values is not None
        return self._values[index]

    def read_later(self) -> None:
        """Run the backward again and fill in every LATER (once; LOST where the run is not the same)."""
        if self._values is not None:
            return
        STATE.owing.discard(self)
        first = self._order
        try:
            with collector_paused():
                again = _run_again(self._output, self._gradient, self._graph)
        # the engine's refusal (a freed graph, an edited saved tensor), or anything else: this runs
        # inside the learner's own backward() too (registry.settle), which must never fail for it
        except Exception:
            again = None
        same = again is not None and _same_run(first, again)
        values = {}
        for i in self.indices:
            _fn, outs, ins = first[i]
            if same:
                _fn, outs_again, ins_again = again[i]  # type: ignore[index]
                values[i] = (_filled(outs, outs_again), _filled(ins, ins_again))
            else:
                values[i] = (_filled(outs, None), _filled(ins, None))
        self._values = values
        self._order = self._output = self._gradient = self._graph = None  # type: ignore[assignment]


class _Changed(Exception):
    """The learner hooked the graph since it was recorded: a second run would not be the first."""


def _run_again(output: torch.Tensor, gradient, graph: Graph) -> list:
    found = Found(graph)
    if found.hooked or found.checkpoint:
        raise _Changed
    recording = Recorder(graph)  # summaries made in the run, as a recording that cannot run again
    handles: list = []
    STATE.busy += 1
    try:
        if hook_every_node(graph, recording, handles, found.probe_all):
            raise _Changed
        with SetAside(graph, found), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Error detected in")
            torch_backward(output, gradient, retain_graph=True)  # torch's own: no settling here
    finally:
        STATE.busy -= 1
        for handle in handles:
            handle.remove()
    return recording.order


def _same_run(first: list, again: list) -> bool:
    if len(first) != len(again):
        return False
    for (fn, outs, ins), (fn_again, outs_again, ins_again) in zip(first, again, strict=True):
        if fn is not fn_again or len(outs) != len(outs_again) or len(ins) != len(ins_again):
            return False
        for a, b in zip(outs + ins, outs_again + ins_again, strict=True):
            if a is LATER:
                continue
            if isinstance(a, torch.Tensor):
                if not (isinstance(b, torch.Tensor) and _equal(a, b)):
                    return False
            elif a is not None or b is not None:
                return False
    return True


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same values to the bit (NaN equal to NaN), whatever the layout."""
    if a.shape != b.shape or a.dtype != b.dtype or a.layout != b.layout:
        return False
    if a.layout is not torch.strided:
        a, b = a.to_dense(), b.to_dense()
    if torch.equal(a, b):
        return True
    return bool(torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all())


def _filled(first: tuple, again: tuple | None) -> tuple:
    if again is None:
        return tuple(LOST if g is LATER else g for g in first)
    return tuple(b if a is LATER else a for a, b in zip(first, again, strict=True))
