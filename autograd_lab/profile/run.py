"""Why is my backward slow? Run a training step several times and measure, per step, forward and
backward time and the size of the graph backward walks: from the loss, and from the step's inputs
(history that came in with the data). Then say in plain words what grows, who carries it, and
where to put the detach(). A step that calls backward() itself is measured as it is: its own
backward is timed, and the profiler calls none. The run stops at a time budget."""
from __future__ import annotations

import time

import torch

from ..errors import LabInputError
from ..format import quote
from ..i18n import _
from ..names import label
from ..names import learner_tensors
from ..stepper.guard import held_interrupts
from . import measure as m
from .records import Profile, StepRecord
from .verdict import judge

MAX_STEPS = 10_000  # warm-up included: a few dozen steps show whether a graph grows
BUDGET = 20.0  # seconds, by default: a profile is a look, not a training run


def check(steps, warmup, budget, how: str = "profile_backward(step, steps=20)") -> None:
    """Refuse step counts and budgets the profiler cannot run; how: what to type instead.

    >>> check(10**9, 2, 20.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    autograd_lab.errors.LabInputError: 1000000002 steps are more than the profiler runs (at most 10000, ...
    """
    whole = all(isinstance(n, int) and not isinstance(n, bool) for n in (steps, warmup))
    if not whole or steps < 1 or warmup < 0:
        raise LabInputError(_("steps must be 1 or more and warmup 0 or more (got steps={steps}, warmup={warmup}). "
                              "Type: {how}").format(steps=given(steps), warmup=given(warmup),
                                                    how=how.replace("steps=20", "steps=20, warmup=2")))
    if steps + warmup > MAX_STEPS:
        raise LabInputError(_("{total} steps are more than the profiler runs (at most {most}, warm-up included); "
                              "a few dozen show whether the graph grows. Type: {how}").format(
                                  total=steps + warmup, most=MAX_STEPS, how=how))
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
        raise LabInputError(_("budget is the time the profiler may take, in seconds: a number above 0, got "
                              "{budget}. Type: {how}").format(budget=given(budget),
                                                             how=how.replace("steps=20", "budget=60")))


def given(value) -> str:
    """What was passed, as a message quotes it (at most i18n.QUOTED characters of its repr)."""
    try:
        return quote(repr(value))
    except Exception:  # a repr that raises: its type names it
        return label(type(value).__name__)


def profile_steps(step_fn, steps: int = 20, warmup: int = 2, *, watch=None, params=None,
                  retain_graph: bool = True, on_step=None, budget: float = BUDGET) -> Profile:
    """Run step_fn() (a training step's forward, returning the loss) warmup + steps times, call
    backward on each loss, and measure; stop early once `budget` seconds have passed.

    watch() -> {name: value} gives the variables the step reads from outside (default: the ones
    step_fn's code mentions); params: ids of trained weights (default: nn.Parameters and tensors an
    optimizer updates). backward keeps each graph (retain_graph=True) so that a graph carried into
    the next step can be measured instead of failing at step 2. on_step(i) is called after each step.

    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> profile_steps(lambda: (w * 2).sum(), steps=3, warmup=1).node_counts
    [3, 3, 3, 3]
    """
    if not callable(step_fn):
        raise LabInputError(_("profile_backward needs a function that runs one step and returns the loss. "
                              "Type: profile_backward(lambda: model(x).pow(2).mean(), steps=20)"))
    check(steps, warmup, budget)
    watch = watch or m.closure_watch(step_fn)
    prof = Profile([], retain_graph=retain_graph, anomaly=torch.is_anomaly_enabled(), planned=warmup + steps)
    before: dict[str, object] = {}
    started = time.perf_counter()
    for i in range(1, warmup + steps + 1):
        seen = watch()
        if params is None:
            params = m.parameters_in(seen.values())
        if not _step(prof, step_fn, i, i <= warmup, seen, before, params, i == warmup + steps):
            break
        before = {k: v.grad_fn for k, v in learner_tensors(seen)}
        if on_step is not None:
            on_step(i)
        if i < warmup + steps and time.perf_counter() - started >= budget:
            prof.budget = budget
            break
    judge(prof)
    return prof


def _step(prof, step_fn, i, warm, seen, before, params, last) -> bool:
    """Run and measure step i; False when its backward failed (the profile stops there)."""
    clock = m.Clock(cuda=prof.gpu or m.on_gpu(*seen.values()))
    own = m.OwnBackward(cuda=clock.cuda)
    clock.start()
    try:
        with held_interrupts(), own:  # Ctrl-C in the step's code stops it; in the lab's, waits for the exit
            loss = step_fn()
    except RuntimeError as err:
        if err is not own.error:
            raise  # the step failed outside backward: the learner's error, as Python gives it
        loss = None
    if isinstance(loss, torch.Tensor):
        prof.gpu = prof.gpu or loss.is_cuda
        clock.cuda = prof.gpu and torch.cuda.is_available()
    total = clock.lap()
    if own.calls:  # the step ran its own backward: measure that one, and call none
        prof.own_backward = True
        record = _inputs(prof, seen, before, own.nodes, params)
        prof.steps.append(StepRecord(i, warm, total - own.ms, own.ms, len(own.nodes), *record))
        if own.error is not None:
            prof.failed = str(own.error)
        return own.error is None
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
        if isinstance(loss, torch.Tensor):
            said = _("the step must end in the loss: a tensor with a grad_fn, got {type} without a graph. "
                     "End the step with the loss, e.g. loss = (model(x) - y).pow(2).mean(); loss")
        else:
            said = _("the step must end in the loss: a tensor with a grad_fn, got {type}. "
                     "End the step with the loss, e.g. loss = (model(x) - y).pow(2).mean(); loss")
        raise LabInputError(said.format(type=label(type(loss).__name__)))
    nodes = m.reachable(loss)
    record = _inputs(prof, seen, before, nodes, params)
    if last and prof.data:
        prof.without_data_ms = _without_data(loss, nodes, seen, prof.data, clock)
    clock.start()
    try:
        loss.backward(retain_graph=prof.retain_graph)
    except RuntimeError as err:
        prof.failed = str(err)
        prof.steps.append(StepRecord(i, warm, total, 0.0, len(nodes), *record))
        return False
    prof.steps.append(StepRecord(i, warm, total, clock.lap(), len(nodes), *record))
    return True


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
