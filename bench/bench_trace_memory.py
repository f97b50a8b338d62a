"""Benchmark 5: memory a trace of the 1000-node model holds, relative to the gradients themselves.

Method. tracemalloc does not see torch's allocations, and torch's CPU profiler does not see those
made on the engine's side of a backward, so the figure is computed from what the trace keeps: every
tensor reachable from its steps (grad_outputs, grad_inputs, grad_before, grad_after), counted once
per storage (two views of one block count once) at the storage's size in bytes. All of them are
alive together when the backward ends, so this is a lower bound of the trace's peak (the engine's
own short-lived buffers come on top, as they do for a plain backward). The reference is the bytes
of the gradients backward() leaves in the leaves' .grad (numel * element_size of each parameter).
Goal (issue 8): at most 2x. Reference value 1.0: the leaf gradients are what the trace must keep.

Subjects: the 1000-node MLP of common.big_model() (200 x Linear(64)+Tanh, batch 32), the goal's
first subject; the GRU and the conv net of families.py (their big gradients become summaries in the
run); and for contrast the transformer of benchmark 1. One RESULT field per subject, each with the
goal. The recording captures each leaf's gradient where its accumulator would run (the engine runs
torch.autograd.grad(inputs=leaves)): the accumulator's step holds that gradient, counted as a leaf
gradient."""
from __future__ import annotations

import common
import torch

import autograd_lab

import families

GOAL = 2.0


def held_bytes(trace) -> dict[str, int]:
    """Bytes of distinct storages the trace keeps, split by what holds them."""
    seen: set = set()
    sizes = {"leaf gradients": 0, "gradients between nodes": 0, "grad before/after": 0}

    def add(kind, value):
        if not isinstance(value, torch.Tensor):
            return
        storage = value.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if key not in seen:
            seen.add(key)
            sizes[kind] += storage.nbytes()

    for step in trace.steps:  # accumulators first: their gradient is the answer itself
        if step.node.is_accumulator:
            add("leaf gradients", step.grad_outputs[0])
    for step in trace.steps:
        for g in (*step.grad_outputs, *step.grad_inputs):
            add("gradients between nodes", g)
        add("grad before/after", step.grad_before)
        add("grad before/after", step.grad_after)
    return sizes


def measure(label: str, leaves, loss) -> float:
    leaves = common.leaves_of(leaves)
    for p in leaves:
        p.grad = None
    recorded = autograd_lab.trace(loss, names={})
    grads = sum(p.numel() * p.element_size() for p in leaves)
    sizes = held_bytes(recorded)
    total = sum(sizes.values())
    parts = ", ".join(f"{k} {v / 2**20:.3f} MiB" for k, v in sizes.items())
    print(f"{label}: {len(recorded.steps)} steps; leaf gradients {grads / 2**20:.3f} MiB; "
          f"the trace holds {total / 2**20:.3f} MiB ({parts}); ratio {total / grads:.2f}")
    return total / grads


def main():
    print(common.machine())
    by_key = {f.key: f for f in families.FAMILIES}
    subjects = [("trace_memory_1000_nodes", "1000-node MLP 200 x Linear(64)+Tanh, batch 32", common.big_model),
                ("trace_memory_gru", f"GRU: {by_key['gru'].description}", by_key["gru"].build),
                ("trace_memory_conv", f"conv: {by_key['conv'].description}", by_key["conv"].build),
                ("trace_memory_transformer", "2 x TransformerEncoderLayer(256), sequence 64, batch 8",
                 common.transformer)]
    print(common.result(*((key, measure(label, *build()), GOAL) for key, label, build in subjects)))


if __name__ == "__main__":
    main()
