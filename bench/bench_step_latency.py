"""Benchmark 2: how long a learner waits after pressing Next in the stepper, on the 1000-node model.

The stepper is built for the MLP of common.big_model() (200 x Linear(64)+Tanh, batch 32: 1002
nodes), its widget is created (no front end is needed: the kernel side does all the work), and
Stepper.next() is timed: everything the kernel does for one click, the panel HTML and the PNG
figure included. Steps are sampled at the start, the middle and the end of the walk; the first
steps of each stretch are warm-up and not counted.
Goal (issue 8): median under 50 ms, worst under 200 ms. These are absolute times, because a
learner's wait is; to judge the machine, the same run also times a bare matplotlib figure of 36
boxes saved as PNG (the least a redrawn figure can cost) and quotes the ratio."""
from __future__ import annotations

import io
import time

import common

import autograd_lab

BUDGET_S = 25.0  # stop sampling after this long: each stretch still gets its share
PER_STRETCH = 12
WARMUP = 2


def bare_figure():
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    fig = Figure(figsize=(8, 6))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    for i in range(36):
        x, y = i % 6, i // 6
        ax.add_patch(Rectangle((x, y), 0.8, 0.4))
        ax.text(x + 0.4, y + 0.2, f"Node{i}", ha="center", va="center", fontsize=7)
    ax.set_xlim(-1, 7)
    ax.set_ylim(-1, 7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


def main():
    print(common.machine())
    _model, loss = common.big_model()
    stepper = autograd_lab.step(loss, names={})
    n = len(stepper.trace.steps)
    start = time.perf_counter()
    _ = stepper.widget  # builds the UI and draws the first figure
    print(f"{n} steps; building the widget took {common.ms(time.perf_counter() - start)}")
    samples = []
    for first in (0, n // 2, n - PER_STRETCH - WARMUP - 1):
        stepper.goto(first)
        stop_at = time.perf_counter() + BUDGET_S / 3
        for i in range(WARMUP + PER_STRETCH):
            t = common.timed(stepper.next)
            if i >= WARMUP:
                samples.append(t)
            if time.perf_counter() > stop_at and i >= WARMUP:
                break
    bare = common.median(common.side_by_side({"bare": bare_figure}, repeat=7)["bare"])
    med, worst = common.median(samples), max(samples)
    print(f"next(): median {common.ms(med)}, worst {common.ms(worst)} over {len(samples)} clicks")
    print(f"a bare 36-box figure saved as PNG: {common.ms(bare)}; next() costs {med / bare:.1f} of them")
    print(common.result(("step_median_ms", med * 1e3, 50), ("step_worst_ms", worst * 1e3, 200),
                        ("step_vs_bare_figure", med / bare, None)))


if __name__ == "__main__":
    main()
