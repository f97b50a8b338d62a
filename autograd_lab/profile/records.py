"""What the profiler measured: one record per step (times, graph size, who carried history in) and
the whole profile with the verdict. Timings vary from run to run; everything else is deterministic."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class StepRecord:
    index: int  # 1-based step number
    warmup: bool
    forward_ms: float
    backward_ms: float
    nodes: int  # nodes reachable from the loss: what backward walks
    input_nodes: int  # of those, reachable from the step's inputs: history that came in with them
    carried: tuple = ()  # learner's names whose history changed since the previous step


@dataclass(repr=False)
class Profile:
    """What profile_backward measured.

    >>> Profile([StepRecord(1, False, 1.0, 2.0, 3, 0)], kind="flat", verdict="The graph is flat.")
    Profile(1 steps, nodes 3 -> 3, flat): The graph is flat.
    """

    steps: list
    carriers: list = field(default_factory=list)  # names carrying history across steps
    history_in: list = field(default_factory=list)  # names arriving with a fixed history
    data: list = field(default_factory=list)  # (name, numel) of inputs that require grad, not weights
    without_data_ms: float | None = None  # backward without the data's gradient (last step)
    anomaly: bool = False
    gpu: bool = False
    retain_graph: bool = True
    failed: str | None = None  # the error that stopped the run, if any
    own_backward: bool = False  # the step called backward() itself; the profiler called none
    planned: int = 0  # steps asked for, warm-up included
    budget: float | None = None  # the time budget, in seconds, when it stopped the run early
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
