"""Benchmark 1: what recording a backward costs on top of the backward itself.

trace(loss, names={}) (snapshot + one post-hook per node + the real backward + the steps) against
a plain backward() of the same graph (retain_graph=True in both, every leaf .grad cleared first in both),
in turns, median of repeats after a warm-up. Three graphs:
(a) many small ops: an MLP of 120 Linear+Tanh layers, 64 wide, batch 32 (about 600 nodes);
(b) compute-heavy: two TransformerEncoderLayer, d_model 256, sequence 64, batch 8;
(c) the seed example (x ** 2).mean() on three numbers: no goal, it shows the fixed cost.
Goals (issue 8): at most 2.0x for (a), 1.3x for (b). The limit is 1.0."""
from __future__ import annotations

import common
import torch

import autograd_lab


def measure(label: str, model, loss, repeat: int) -> float:
    nodes = len(autograd_lab.trace(loss, names={}).graph.nodes)
    times = common.side_by_side({
        "backward": common.plain_backward(model, loss),
        "trace": common.fresh(model, lambda: autograd_lab.trace(loss, names={})),
    }, repeat=repeat)
    plain, traced = common.median(times["backward"]), common.median(times["trace"])
    ratio = traced / plain
    print(f"{label}: {nodes} nodes; backward {common.ms(plain)}, trace {common.ms(traced)} "
          f"(median of {repeat}); ratio {ratio:.2f}; {(traced - plain) / nodes * 1e6:.0f} us added per node")
    return ratio


def main():
    print(common.machine())
    model, loss = common.mlp(120)
    mlp = measure("(a) MLP 120 x Linear(64)+Tanh, batch 32", model, loss, repeat=21)
    model, loss = common.transformer(layers=2, d_model=256, seq=64, batch=8)
    tf = measure("(b) 2 x TransformerEncoderLayer(256), sequence 64, batch 8", model, loss, repeat=15)
    x = torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)
    z = (x ** 2).mean()
    seed = measure("(c) seed example (x ** 2).mean()", [x], z, repeat=201)
    print(common.result(("trace_overhead_mlp", mlp, 2.0), ("trace_overhead_transformer", tf, 1.3),
                        ("trace_overhead_seed", seed, None)))


if __name__ == "__main__":
    main()
