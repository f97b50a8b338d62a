"""Why is my backward slow? Run a training step several times and measure, per step, forward and
backward time and the size of the graph backward walks: from the loss, and from the step's inputs
(history that came in with the data). Then say in plain words what grows, who carries it, and
where to put the detach()."""
from __future__ import annotations

import torch

from ..errors import LabInputError
from ..names import learner_tensors
from . import measure as m
from .records import Profile, StepRecord
from .verdict import judge


def profile_steps(step_fn, steps: int = 20, warmup: int = 2, *, watch=None, params=None,
                  retain_graph: bool = True, on_step=None) -> Profile:
    """Run step_fn() (a training step's forward, returning the loss) `steps` times, call backward
    on each loss, and measure. The first `warmup` steps are reported as warm-up.

    watch() -> {name: value} gives the variables the step reads from outside (default: the ones
    step_fn's code mentions); params: ids of trained weights (default: nn.Parameters and tensors an
    optimizer updates). backward keeps each graph (retain_graph=True) so that a graph carried into
    the next step can be measured instead of failing at step 2. on_step(i) is called after each step.

    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> profile_steps(lambda: (w * 2).sum(), steps=3, warmup=1).node_counts
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
    before: dict[str, object] = {}
    for i in range(1, warmup + steps + 1):
        seen = watch()
        if params is None:
            params = m.parameters_in(seen.values())
        clock = m.Clock(cuda=prof.gpu or m.on_gpu(*seen.values()))
        clock.start()
        loss = step_fn()
        if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
            got = type(loss).__name__ + (" without a graph" if isinstance(loss, torch.Tensor) else "")
            raise LabInputError(f"the step must end in the loss: a tensor with a grad_fn, got {got}. "
                                "End the step with the loss, e.g. loss = (model(x) - y).pow(2).mean(); loss")
        prof.gpu = prof.gpu or loss.is_cuda
        clock.cuda = prof.gpu and torch.cuda.is_available()
        forward = clock.lap()
        nodes = m.reachable(loss)
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
        before = {k: v.grad_fn for k, v in learner_tensors(seen)}
        del loss, nodes
        if on_step is not None:
            on_step(i)
    judge(prof)
    return prof


def _inputs(prof, seen, before, nodes, params) -> tuple[int, tuple]:
    """Count the nodes that came in with the inputs; note who carries history and which data needs grad."""
    history, carried = set(), []
    for name, value in learner_tensors(seen):
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
