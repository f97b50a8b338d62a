"""What the next speed-ups of the recording would gain, measured before anyone makes them: the
recording as it is, against the same recording with one cost taken away. Not run by `make bench`.

    .venv/bin/python bench/next_speedups.py

Candidates, per family, in turns (common.side_by_side, the collector run untimed after each), one
thread, the lab installed first (as %load_ext does) so that no node is probed for the learner's hooks:
- plain: torch.autograd.grad of the leaves; floor: one appending post-hook per node
  (bench_families.bare_hooks);
- trace: autograd_lab.trace as it is (big gradients left for the first look, stepper/later.py);
- summaries in the run: the same, with every big gradient summarised inside the engine's hook (what
  a recording that cannot run again does: apply, the learner's hooks, checkpoints);
- free summaries: summaries in the run, each a constant (what the norm and first values cost);
- snapshot: alone, graph.snapshot of the graph (a walk: the Nodes are made when first asked for);
- found: alone, guard.Found (what the registry knows about this graph)."""
from __future__ import annotations

import gc
import os

import common
import torch

import autograd_lab
from autograd_lab.graph import snapshot
from autograd_lab.stepper import guard, recorder, trace as tracing
from autograd_lab.stepper.registry import install

import bench_families
import families

torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))  # as bench_families.py
REPLAYABLE = tracing.replayable
SUMMARY = recorder.Summary
CONSTANT = SUMMARY((1,), torch.float32, "cpu", 0.0, ())


class _Free:
    @staticmethod
    def of(t, count: int = 4):
        return CONSTANT


def free_summaries(fn):
    def run():
        recorder.Summary = _Free  # type: ignore[misc,assignment]
        try:
            return fn()
        finally:
            recorder.Summary = SUMMARY  # type: ignore[misc]
    return run


def in_the_run(fn):
    def run():
        tracing.replayable = lambda graph, output: False  # type: ignore[assignment]
        try:
            return fn()
        finally:
            tracing.replayable = REPLAYABLE
    return run


def main():
    print(common.machine())
    install()
    for family in families.FAMILIES:
        leaves, loss = family.build()
        graph = snapshot(loss, {})

        def record(loss=loss):
            return autograd_lab.trace(loss, names={})
        times = common.side_by_side({
            "plain": bench_families.plain_grad(leaves, loss),
            "floor": bench_families.bare_hooks(leaves, loss),
            "trace": common.fresh(leaves, record),
            "summaries in the run": common.fresh(leaves, in_the_run(record)),
            "free summaries": common.fresh(leaves, in_the_run(free_summaries(record))),
            "snapshot": lambda loss=loss: snapshot(loss, {}),
            "found": lambda graph=graph: guard.Found(graph),
        }, repeat=max(5, family.repeat // 2), tidy=gc.collect)
        med = {k: common.median(v) for k, v in times.items()}
        print(f"{family.key}: " + ", ".join(f"{k} {common.ms(v)}" for k, v in med.items()))
        variants = ("trace", "summaries in the run", "free summaries")
        print("   / floor: " + ", ".join(f"{k} {med[k] / med['floor']:.2f}" for k in variants))
        shown = ("floor", "trace", "summaries in the run")
        print("   / plain: " + ", ".join(f"{k} {med[k] / med['plain']:.2f}" for k in shown))


if __name__ == "__main__":
    main()
