"""Benchmark 6: what a learner feels on five model families: recording, opening and clicking.

Families (families.py): an MLP of 1000 nodes, a GRU cell unrolled 25 steps, 12 x (Conv2d,
BatchNorm2d, ReLU), one transformer encoder layer, and a 10,000-node element-wise loop.

For each family, in one run:
- recording: three candidates in turns, median of rounds after a warm-up (common.side_by_side):
  the plain backward (torch.autograd.grad of the leaves, retain_graph), the bare-hook floor (walk
  the graph, one Python post-hook per node that only appends its arguments, backward, remove the
  hooks: the least any recording with a hook per node can cost) and autograd_lab.trace. Figures:
  trace / plain and trace / floor.
- opening: what a learner waits for after the cell runs, imports done: autograd_lab.step(z,
  names={}) (the recording), .widget (the UI and the first figure), .text() and .html(); beside
  the plain backward's time, measured in turns with it.
- clicking: 80 consecutive presses of the stepper's Next button from the start (through the
  button itself, as the widget tests press it), back to back, then again one every 300 ms (a
  learner's pace, when the next window is drawn between clicks); on the big graphs these cross
  several moves of the drawn window. Median, 95th percentile and worst.

Goals (issue 17): trace within 1.15x of the floor; trace <= 2.0x plain where nodes are small (MLP,
GRU, loop), <= 1.3x where the engine's own work dominates (conv, transformer); opening under 0.5 s
up to 1,000 nodes and under 1 s at 10,000; clicks median < 30 ms, p95 < 150 ms, worst < 300 ms back
to back, and median < 30 ms, p95 < 150 ms at a learner's pace.
One RESULT line per family (BENCH_FAMILIES=gru,conv measures only those). Every value a step shows
comes from the recording's one run (big gradients are summarised in it)."""
from __future__ import annotations

import gc
import os
import time

import common
import torch

import autograd_lab
from autograd_lab.graph import snapshot, walk

import families

# One intra-op thread: on this shared 2-core machine torch's worker threads spin against the other
# load and a plain backward swings by an order of magnitude between rounds, which would drown the
# ratios; the goals are stated for one thread. (BENCH_THREADS still overrides it, as in common.)
torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))

CLICKS = 80
GOAL_FLOOR = 1.15
GOAL_MEDIAN_MS, GOAL_P95_MS, GOAL_WORST_MS = 30, 150, 300
PACE = float(os.environ.get("BENCH_PACE", "0.3"))  # a learner's pace; BENCH_PACE=0 skips those 24 s a family


def plain_grad(leaves, loss):
    def run():
        return torch.autograd.grad(loss, leaves, retain_graph=True)
    return run


def bare_hooks(leaves, loss):
    """The floor: one post-hook per node that only appends its arguments, then removed. Runs
    backward() (not grad) so the accumulators run and are hooked, as in a trace; .grad cleared
    before, as common.fresh does for the trace. The cyclic collector is paused, as trace pauses it:
    otherwise its passes over the heap, set off by the handles and tuples of a 10,000-node graph,
    make the floor itself 3 to 5 times a plain backward and flatter any recording measured by it."""
    def run():
        for leaf in leaves:
            leaf.grad = None
        seen: list = []
        append = seen.append

        def hook(grad_inputs, grad_outputs):
            append((grad_inputs, grad_outputs))
        was = gc.isenabled()
        gc.disable()
        try:
            handles = [fn.register_hook(hook) for fn, _ in walk(loss)]
            try:
                torch.autograd.backward(loss, retain_graph=True)
            finally:
                for h in handles:
                    h.remove()
        finally:
            if was:
                gc.enable()
        for leaf in leaves:
            leaf.grad = None
        return seen
    return run


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def recording(leaves, loss, repeat: int) -> dict[str, float]:
    """The three candidates in turns; a trace is dropped after its round and the collector run
    (untimed), as a learner's trace is forgotten."""
    times = common.side_by_side({
        "plain": plain_grad(leaves, loss),
        "floor": bare_hooks(leaves, loss),
        "trace": common.fresh(leaves, lambda: autograd_lab.trace(loss, names={})),
    }, repeat=repeat, tidy=gc.collect)
    result = {k: common.median(v) for k, v in times.items()}
    return result


def opening(leaves, loss, repeat: int) -> tuple[float, float, dict[str, float]]:
    """(median open, median plain backward, median of each part)."""
    parts: dict[str, list[float]] = {"record": [], "widget": [], "text": [], "html": []}

    def open_once():
        t0 = time.perf_counter()
        s = autograd_lab.step(loss, names={})
        t1 = time.perf_counter()
        _ = s.widget
        t2 = time.perf_counter()
        s.text()
        t3 = time.perf_counter()
        s.html()
        t4 = time.perf_counter()
        for key, (a, b) in zip(parts, ((t0, t1), (t1, t2), (t2, t3), (t3, t4)), strict=True):
            parts[key].append(b - a)
        s.widget.close()

    times = common.side_by_side({"plain": plain_grad(leaves, loss), "open": common.fresh(leaves, open_once)},
                                repeat=repeat, warmup=1)
    warm = len(parts["record"]) - repeat
    return (common.median(times["open"]), common.median(times["plain"]),
            {k: common.median(v[warm:]) for k, v in parts.items()})


def clicking(loss, pace: float = 0.0) -> list[float]:
    """80 Next clicks from the start, back to back (pace 0) or one every pace seconds. The next
    window is drawn between clicks, as in a live kernel (stepper/windows.py): back to back it never
    is (it waits for the kernel to be idle), at a learner's pace it is."""
    s = autograd_lab.step(loss, names={})
    _ = s.widget
    s.ahead.enabled = True
    button = s.buttons["next"]
    samples = []
    for _ in range(min(CLICKS, len(s.trace.steps))):
        samples.append(common.timed(button.click))
        if pace:
            time.sleep(max(0.0, pace - samples[-1]))
    s.release()
    return samples


def measure(family: families.Family) -> str:
    leaves, loss = family.build()
    nodes = len(snapshot(loss, {}).nodes)
    print(f"\n{family.name}: {family.description}; {nodes} nodes")
    rec = recording(leaves, loss, family.repeat)
    vs_plain, vs_floor = rec["trace"] / rec["plain"], rec["trace"] / rec["floor"]
    print(f"  recording (median of {family.repeat}): plain grad {common.ms(rec['plain'])}, bare-hook floor "
          f"{common.ms(rec['floor'])} ({rec['floor'] / rec['plain']:.2f}x plain), trace {common.ms(rec['trace'])}: "
          f"{vs_plain:.2f}x plain, {vs_floor:.2f}x floor; {(rec['trace'] - rec['floor']) / nodes * 1e6:.1f} us "
          f"per node above the floor")
    gc.collect()
    opened, plain, parts = opening(leaves, loss, family.open_repeat)
    open_goal = 0.5 if nodes < 5000 else 1.0  # the goals: 1,000 nodes in 0.5 s, 10,000 in 1 s
    print(f"  opening (median of {family.open_repeat}): {common.ms(opened)} (plain grad {common.ms(plain)}, "
          f"{opened / plain:.0f}x); " + ", ".join(f"{k} {common.ms(v)}" for k, v in parts.items()))
    gc.collect()
    clicks = clicking(loss)
    med, p95, worst = common.median(clicks), percentile(clicks, 0.95), max(clicks)
    slow = [i + 1 for i, t in enumerate(clicks) if t > 3 * med]
    print(f"  {len(clicks)} Next clicks: median {common.ms(med)}, p95 {common.ms(p95)}, worst {common.ms(worst)}; "
          f"clicks over 3x the median: {slow}")
    paced = clicking(loss, PACE) if PACE else [0.0]
    print(f"  {len(paced)} Next clicks one every {PACE * 1e3:.0f} ms: median {common.ms(common.median(paced))}, "
          f"p95 {common.ms(percentile(paced, 0.95))}, worst {common.ms(max(paced))}")
    key = family.key
    paced_items = ((f"{key}_paced_click_median_ms", common.median(paced) * 1e3, GOAL_MEDIAN_MS),
                   (f"{key}_paced_click_p95_ms", percentile(paced, 0.95) * 1e3, GOAL_P95_MS)) if PACE else ()
    return common.result(
        (f"{key}_trace_vs_floor", vs_floor, GOAL_FLOOR),
        (f"{key}_trace_vs_plain", vs_plain, family.goal_plain),
        (f"{key}_floor_vs_plain", rec["floor"] / rec["plain"], None),
        (f"{key}_open_s", opened, open_goal),
        (f"{key}_open_vs_plain", opened / plain, None),
        (f"{key}_click_median_ms", med * 1e3, GOAL_MEDIAN_MS),
        (f"{key}_click_p95_ms", p95 * 1e3, GOAL_P95_MS),
        (f"{key}_click_worst_ms", worst * 1e3, GOAL_WORST_MS),
        *paced_items)  # BENCH_PACE=0: no paced clicks measured, so no paced figures


def main():
    print(common.machine())
    start = time.perf_counter()
    chosen = os.environ.get("BENCH_FAMILIES", "")  # e.g. BENCH_FAMILIES=gru,conv: only those
    lines = [measure(f) for f in families.FAMILIES if not chosen or f.key in chosen.split(",")]
    print(f"\n(bench_families took {time.perf_counter() - start:.0f} s)")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
