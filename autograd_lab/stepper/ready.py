"""The engine's bookkeeping replayed from a recording: before each step, which nodes had received
all their gradients (were ready to run). Replayed lazily, only as far as a step that is looked at:
opening a 10,000-step walk needs the first set, not all of them."""
from __future__ import annotations

from ..graph import Graph


class Replay:
    """Ready sets of a recorded walk, computed up to the furthest step asked for.

    >>> import torch
    >>> from ..graph import snapshot
    >>> x = torch.ones(2, requires_grad=True)
    >>> g = snapshot((x * 2).sum())
    >>> class S:  # a step: only its node matters here
    ...     def __init__(self, node): self.node = node
    >>> r = Replay(g, [S(n) for n in g.nodes])
    >>> [[n.name for n in r.at(i)] for i in range(3)]
    [['SumBackward0'], ['MulBackward0'], ['AccumulateGrad']]
    """

    def __init__(self, graph: Graph, steps: list):
        self.graph, self.steps = graph, steps
        self.ran = {step.node for step in steps}
        self.sets: list[tuple] = []
        self._waiting: dict | None = None
        self._ready: set = set()

    def at(self, index: int) -> tuple:
        """The nodes that were ready when step index (0-based) was picked, itself included."""
        if self._waiting is None:
            self._waiting = self.graph.dependencies()
            # the outputs' gradients are given at once: an output no other node sends to is ready
            self._ready = {root for root in self.graph.roots if self._waiting[root] == 0}
        sets, steps, waiting, ready = self.sets, self.steps, self._waiting, self._ready
        while len(sets) <= index:
            step = steps[len(sets)]
            sets.append(tuple(sorted(ready, key=lambda n: -n.seq)))
            ready.discard(step.node)
            for child, _ in step.node.next:
                if child is None or child not in self.ran:  # not on a path to inputs=: never queued
                    continue
                waiting[child] -= 1
                if waiting[child] == 0:
                    ready.add(child)
        return sets[index]

    def all(self) -> list[tuple]:
        if self.steps:
            self.at(len(self.steps) - 1)
        return self.sets
