"""What the next speed-ups of the recording would gain, measured before anyone makes them: the
recording as it is, against the same recording with one cost taken away. Not run by `make bench`.

    .venv/bin/python bench/next_speedups.py

Candidates, per family, in turns (common.side_by_side), one thread, the lab installed first (as
%load_ext does) so that no node is probed for the learner's hooks:
- plain: torch.autograd.grad of the leaves; floor: one appending post-hook per node
  (bench_families.bare_hooks);
- trace: autograd_lab.trace as it is;
- lazy values: the same, with the big gradients kept as references instead of summaries (what a
  recording that summarised only when a learner looks at a step would cost during the run; it
  holds every big gradient meanwhile, which is why the lab does not do it);
- free summaries: the same, with every summary a constant (what summarising costs in the run: the
  norm and first values of each big gradient, and the Summary object);
- snapshot: alone, graph.snapshot of the graph (the Node objects the steps point to);
- found: alone, guard.Found (what the registry knows about this graph)."""
from __future__ import annotations

import os

import common
import torch

import autograd_lab
from autograd_lab.graph import snapshot
from autograd_lab.stepper import guard, recorder
from autograd_lab.stepper.registry import install

import bench_families
import families

torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))  # as bench_families.py
KEEP = recorder.KEEP_WHOLE
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


def lazy(fn):
    def run():
        recorder.KEEP_WHOLE = 1 << 62
        try:
            return fn()
        finally:
            recorder.KEEP_WHOLE = KEEP
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
            "lazy values": common.fresh(leaves, lazy(record)),
            "free summaries": common.fresh(leaves, free_summaries(record)),
            "snapshot": lambda loss=loss: snapshot(loss, {}),
            "found": lambda graph=graph: guard.Found(graph),
        }, repeat=max(5, family.repeat // 2))
        med = {k: common.median(v) for k, v in times.items()}
        print(f"{family.key}: " + ", ".join(f"{k} {common.ms(v)}" for k, v in med.items()))
        variants = ("trace", "lazy values", "free summaries")
        print("   / floor: " + ", ".join(f"{k} {med[k] / med['floor']:.2f}" for k in variants))
        print("   / plain: " + ", ".join(f"{k} {med[k] / med['plain']:.2f}" for k in ("floor", "trace", "lazy values")))


if __name__ == "__main__":
    main()
