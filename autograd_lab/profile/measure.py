"""The measuring tools of the profiler: count the nodes a backward will walk, time forward and
backward honestly (synchronising a GPU around each part), and find the learner's variables a step
function reads, so the profiler can see which of them carries history into the step."""
from __future__ import annotations

import time
import types

import torch

from ..graph import walk


def reachable(root) -> set:
    """Every node backward walks from root (a tensor or a node), root included; empty for None.

    >>> x = torch.ones(2, requires_grad=True)
    >>> len(reachable((x * 2).sum()))
    3
    """
    return {fn for fn, _ in walk(root)}


def leaves_of(nodes) -> list[torch.Tensor]:
    """The leaf tensors whose accumulators are among nodes (an accumulator holds its leaf as
    .variable), in a stable order: creation order."""
    found = [n for n in nodes if hasattr(n, "variable")]
    return [n.variable for n in sorted(found, key=lambda n: n._sequence_nr())]


def on_gpu(*tensors) -> bool:
    return any(isinstance(t, torch.Tensor) and t.is_cuda for t in tensors)


class Clock:
    """Milliseconds between marks. On a GPU, kernels run after Python moves on, so each mark first
    waits for the device (torch.cuda.synchronize); otherwise whatever synchronises next (backward,
    .item()) absorbs the forward's time. GPU path: needs a check on a machine with CUDA."""

    def __init__(self, cuda: bool = False):
        self.cuda = cuda and torch.cuda.is_available()
        self.last = 0.0

    def start(self) -> None:
        self.last = self._now()

    def lap(self) -> float:
        now = self._now()
        elapsed, self.last = (now - self.last) * 1000.0, now
        return elapsed

    def _now(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()
        return time.perf_counter()


class OwnBackward:
    """While entered, times the backward() calls a step makes itself (loss.backward() or
    torch.autograd.backward) and notes the nodes each one walks, counted before it runs.

    The engine says nowhere when a backward starts and ends, so for the step's duration the one
    name both calls go through, torch.autograd.backward, is wrapped; it is put back on exit (the
    profiler enters it with Ctrl-C held while the lab's own code runs: stepper.guard). Not a
    TorchFunctionMode, as record() uses: a mode is called for every op of the forward, and made the
    forward that the profiler times about 60% slower. If another tool replaced the name during the
    step, its replacement is left in place (it wraps this one, which then only passes calls on).
    A backward nested in another (a reentrant checkpoint's) is part of the outer one.

    >>> w = torch.ones(2, requires_grad=True)
    >>> with OwnBackward() as own:
    ...     (w * 3).sum().backward()
    >>> own.calls, len(own.nodes), w.grad.tolist()
    (1, 3, [3.0, 3.0])
    """

    def __init__(self, cuda: bool = False):
        self.clock = Clock(cuda)
        self.calls, self.ms = 0, 0.0
        self.nodes: set = set()
        self.error: RuntimeError | None = None  # what the step's own backward raised
        self._depth = 0
        self._real = torch.autograd.backward

    def __enter__(self) -> OwnBackward:
        self._real = torch.autograd.backward
        self._wrapper = self._timed  # one bound method, to know it again on exit
        torch.autograd.backward = self._wrapper
        return self

    def __exit__(self, *exc) -> None:
        if torch.autograd.backward is self._wrapper:
            torch.autograd.backward = self._real
        else:
            self.calls_through = True  # another tool's replacement, made during the step, stays

    calls_through = False  # set when a replacement made during the step kept this wrapper in torch's name

    def _timed(self, tensors, *args, **kwargs):
        if self._depth or self.calls_through:
            return self._real(tensors, *args, **kwargs)
        if not isinstance(tensors, (torch.Tensor, tuple, list)):
            tensors = tuple(tensors)  # a generator is read here and by the real backward
        for root in [tensors] if isinstance(tensors, torch.Tensor) else tensors:
            if isinstance(root, torch.Tensor):
                self.nodes |= reachable(root)
        self._depth, self.calls = 1, self.calls + 1
        self.clock.start()
        try:
            return self._real(tensors, *args, **kwargs)
        except RuntimeError as err:
            self.error = err
            raise
        finally:
            self.ms += self.clock.lap()
            self._depth = 0


def code_names(code) -> set[str]:
    """Every global or free name a code object (and the functions nested in it) mentions."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def closure_watch(step_fn):
    """A function giving {name: value} of the variables step_fn reads from outside, read at call time
    (a hidden state is rebound every step, so it must be looked up again each time)."""
    code = getattr(step_fn, "__code__", None)
    if code is None:
        return lambda: {}
    cells = dict(zip(code.co_freevars, step_fn.__closure__ or (), strict=False))
    wanted = code_names(code)
    glob = step_fn.__globals__

    def watch():
        seen = {}
        for name in sorted(wanted):
            if name in cells:
                try:
                    seen[name] = cells[name].cell_contents
                except ValueError:  # a closure cell not filled yet
                    continue
            elif name in glob:
                seen[name] = glob[name]
        return seen
    return watch


def parameters_in(values) -> set[int]:
    """ids of tensors that are trained weights: nn.Parameters, and tensors any optimizer updates."""
    ids = set()
    for value in values:
        if isinstance(value, torch.nn.Parameter):
            ids.add(id(value))
        elif isinstance(value, torch.nn.Module):
            ids |= {id(p) for p in value.parameters()}
        elif isinstance(value, torch.optim.Optimizer):
            ids |= {id(p) for group in value.param_groups for p in group["params"]}
    return ids


def is_data(value, params: set[int]) -> bool:
    """A leaf that requires grad but is no trained weight: the data (or a forgotten flag)."""
    return (isinstance(value, torch.Tensor) and value.requires_grad and value.grad_fn is None
            and id(value) not in params)


def median(values) -> float:
    values = sorted(values)
    if not values:
        return 0.0
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
