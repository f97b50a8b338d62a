"""Benchmark: how big one output of the stepper is, and how long a 10,000-node graph takes to open.

Output size: the text/plain and text/html faces the stepper puts in a notebook (what nbval stores
and GitHub renders; an embedded picture is not counted, it has its own bound), for a chain of
1,000 and of 10,000 multiplications, at the start, in the middle and at the end of the walk.
Goal (issue 12): at most 100 KB whatever the graph size.
Opening: autograd_lab.step() on the 10,000-node chain (the recording, every node hooked and run by
the engine) plus both faces at the start, as a notebook shows them. Goal: under one second. This is
an absolute time, because a learner's wait is; the same run times a plain backward() of the graph
for scale."""
from __future__ import annotations

import time

import common
import torch

import autograd_lab


def chain(n: int):
    x = torch.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y.sum()


def face_bytes(stepper) -> int:
    return len(stepper.text().encode()) + len(stepper.html().encode())


def sizes(n: int) -> int:
    x, loss = chain(n)
    s = autograd_lab.step(loss, names={"x": x})
    steps = len(s.trace.steps)
    worst = 0
    for index in (0, 1, steps // 2, steps):
        s.goto(index)
        worst = max(worst, face_bytes(s))
    print(f"{n} multiplications ({steps} steps): largest output {worst / 1000:.1f} KB")
    return worst


def open_time(n: int = 10_000, repeat: int = 5) -> tuple[float, float]:
    times, plain = [], []
    for _ in range(repeat):
        x, loss = chain(n)
        start = time.perf_counter()
        s = autograd_lab.step(loss, names={"x": x})
        s.text()
        s.html()
        times.append(time.perf_counter() - start)
        x, loss = chain(n)
        plain.append(common.timed(loss.backward))
    return common.median(times), common.median(plain)


def main():
    print(common.machine())
    small, big = sizes(1_000), sizes(10_000)
    opened, plain = open_time()
    print(f"10,000 nodes: step() and both faces {common.ms(opened)} (median of 5); "
          f"a plain backward() {common.ms(plain)}")
    print(common.result(("output_kb_1000", small / 1000, 100), ("output_kb_10000", big / 1000, 100),
                        ("open_10000_nodes_s", opened, 1.0)))


if __name__ == "__main__":
    main()
