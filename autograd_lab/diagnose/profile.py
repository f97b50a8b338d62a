"""Why is my backward slow? Run a training step several times and measure, per step, forward and
backward time and the size of the graph backward walks: from the loss, and from the step's inputs
(history that came in with the data). Then say in plain words what grows, who carries it, and
where to put the detach()."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import LabInputError
from . import measure as m
from .compare import Comparison, run_compare
from .verdict import judge


@dataclass
class StepRecord:
    index: int  # 1-based step number
    warmup: bool
    forward_ms: float
    backward_ms: float
    nodes: int  # nodes reachable from the loss: what backward walks
    input_nodes: int  # of those, reachable from the step's inputs: history that came in with them
    carried: tuple = ()  # learner's names whose history changed since the previous step


@dataclass
class Profile:
    """What profile_backward measured; timings vary from run to run, everything else does not."""

    steps: list
    carriers: list = field(default_factory=list)  # names carrying history across steps
    history_in: list = field(default_factory=list)  # names arriving with a fixed history
    data: list = field(default_factory=list)  # (name, numel) of inputs that require grad, not weights
    without_data_ms: float | None = None  # backward without the data's gradient (last step)
    anomaly: bool = False
    gpu: bool = False
    retain_graph: bool = True
    failed: str | None = None  # the error that stopped the run, if any
    kind: str = ""
    verdict: str = ""
    fix: str = ""

    @property
    def node_counts(self) -> list[int]:
        return [s.nodes for s in self.steps]

    @property
    def input_node_counts(self) -> list[int]:
        return [s.input_nodes for s in self.steps]

    @property
    def growth(self) -> float:
        """Nodes added per step (0 for a flat graph), from the first to the last step."""
        counts = self.node_counts
        return (counts[-1] - counts[0]) / (len(counts) - 1) if len(counts) > 1 else 0.0

    @property
    def timed(self) -> list:
        return [s for s in self.steps if not s.warmup] or self.steps

    def __repr__(self) -> str:
        counts = self.node_counts
        return (f"Profile({len(self.steps)} steps, nodes {counts[0]} -> {counts[-1]}, {self.kind}): "
                f"{self.verdict}" if counts else f"Profile(no steps): {self.verdict}")


def profile_backward(step_fn, steps: int = 20, warmup: int = 2, *, watch=None, params=None,
                     retain_graph: bool = True, on_step=None) -> Profile:
    """Run step_fn() (a training step's forward, returning the loss) `steps` times, call backward
    on each loss, and measure. The first `warmup` steps are reported as warm-up.

    watch() -> {name: value} gives the variables the step reads from outside (default: the ones
    step_fn's code mentions); params: ids of trained weights (default: nn.Parameters and tensors an
    optimizer updates). backward keeps each graph (retain_graph=True) so that a graph carried into
    the next step can be measured instead of failing at step 2. on_step(i) is called after each step.

    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> profile_backward(lambda: (w * 2).sum(), steps=3, warmup=1).node_counts
    [3, 3, 3, 3]
    """
    if not callable(step_fn):
        raise LabInputError("profile_backward needs a function that runs one step and returns the loss. "
                            "Type: profile_backward(lambda: model(x).pow(2).mean(), steps=20)")
    if steps < 1 or warmup < 0:
        raise LabInputError(f"steps must be 1 or more and warmup 0 or more (got steps={steps}, "
                            f"warmup={warmup}). Type: profile_backward(step, steps=20, warmup=2)")
    watch = watch or m.closure_watch(step_fn)
    prof = Profile([], retain_graph=retain_graph, anomaly=torch.is_anomaly_enabled())
    before = {}
    for i in range(1, warmup + steps + 1):
        seen = watch()
        if params is None:
            params = m.parameters_in(seen.values())
        clock = m.Clock(cuda=prof.gpu or m.on_gpu(*seen.values()))
        clock.start()
        loss = step_fn()
        if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
            raise LabInputError("the step must end in the loss: a tensor with a grad_fn, "
                                f"got {type(loss).__name__}{'' if not isinstance(loss, torch.Tensor) else ' without a graph'}. "
                                "End the step with the loss, e.g. loss = (model(x) - y).pow(2).mean(); loss")
        prof.gpu = prof.gpu or loss.is_cuda
        clock.cuda = prof.gpu and torch.cuda.is_available()
        forward = clock.lap()
        nodes = m.reachable(loss.grad_fn)
        record = _inputs(prof, seen, before, nodes, params)
        last = i == warmup + steps
        if last and prof.data:
            prof.without_data_ms = _without_data(loss, nodes, seen, prof.data, clock)
        clock.start()
        try:
            loss.backward(retain_graph=retain_graph)
        except RuntimeError as err:
            prof.failed = str(err)
            prof.steps.append(StepRecord(i, i <= warmup, forward, 0.0, len(nodes), *record))
            break
        prof.steps.append(StepRecord(i, i <= warmup, forward, clock.lap(), len(nodes), *record))
        before = {k: v.grad_fn for k, v in seen.items() if isinstance(v, torch.Tensor)}
        del loss, nodes
        if on_step is not None:
            on_step(i)
    judge(prof)
    return prof


def _inputs(prof, seen, before, nodes, params) -> tuple[int, tuple]:
    """Count the nodes that came in with the inputs; note who carries history and which data needs grad."""
    history, carried = set(), []
    for name, value in seen.items():
        if not isinstance(value, torch.Tensor) or name.startswith("_"):
            continue
        fn = value.grad_fn
        if fn is not None and fn in nodes:
            history |= m.reachable(fn)
            if name in before and before[name] is not fn:
                carried.append(name)
                if name not in prof.carriers:
                    prof.carriers.append(name)
            elif name not in before and name not in prof.history_in:
                prof.history_in.append(name)
        elif m.is_data(value, params) and any(getattr(n, "variable", None) is value for n in nodes):
            history |= {n for n in nodes if getattr(n, "variable", None) is value}
            if name not in [d[0] for d in prof.data]:
                prof.data.append((name, value.numel()))
    prof.history_in = [n for n in prof.history_in if n not in prof.carriers]
    return len(history), tuple(carried)


def _without_data(loss, nodes, seen, data, clock) -> float:
    """Time the same backward asked only for the weights' gradients: the engine then skips the
    branches that lead only to the data. torch.autograd.grad writes no .grad."""
    data_ids = {id(seen[name]) for name, _ in data}
    weights = [t for t in m.leaves_of(nodes) if id(t) not in data_ids]
    clock.start()
    if weights:
        torch.autograd.grad(loss, weights, retain_graph=True, allow_unused=True)
    return clock.lap()


def compare_inputs(step_fn, data, variants=("as is", "clone()", "detach()", "clone().detach()"),
                   steps: int = 5, warmup: int = 1) -> Comparison:
    """Run the same step with the data passed each way and tabulate backward time and graph size.

    step_fn(data) returns the loss, or (loss, carry) to feed carry (e.g. a hidden state) into the
    next step, passed the same way. variants: names among 'as is', 'clone()', 'detach()',
    'clone().detach()', 'detach().clone()', '.data', or (name, function) pairs. Gradients are
    computed with torch.autograd.grad, so no .grad is written.

    >>> x = torch.ones(4, requires_grad=True)
    >>> [r.nodes for r in compare_inputs(lambda d: (d * 2).sum(), x, steps=1).rows]
    [3, 4, 0, 0]
    """
    return run_compare(step_fn, data, variants, steps, warmup)
