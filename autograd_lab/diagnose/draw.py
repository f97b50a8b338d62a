"""The profiler's evidence as a figure: backward time per step (bars, warm-up steps pale) and the
number of graph nodes backward walked (line), so growth and its cost are seen side by side."""
from __future__ import annotations

from matplotlib.figure import Figure


def profile_figure(prof) -> Figure:
    """Backward time and node count per step of a Profile."""
    fig = Figure(figsize=(7, 3))
    ax = fig.add_subplot(1, 1, 1)
    steps = [s.index for s in prof.steps]
    colors = ["#c9d6ea" if s.warmup else "#4c72b0" for s in prof.steps]
    ax.bar(steps, [s.backward_ms for s in prof.steps], color=colors, label="backward (ms)")
    ax.set_xlabel("step (pale: warm-up)")
    ax.set_ylabel("backward time (ms)")
    nodes = ax.twinx()
    nodes.plot(steps, prof.node_counts, color="#dd8452", marker="o", label="nodes from the loss")
    nodes.plot(steps, prof.input_node_counts, color="#55a868", marker=".", linestyle="--",
               label="nodes from the inputs")
    nodes.set_ylabel("graph nodes")
    nodes.set_ylim(bottom=0)
    nodes.legend(loc="upper left", fontsize=8)
    ax.set_title(f"backward profile: {prof.kind.replace('_', ' ')}", fontsize=10)
    fig.tight_layout()
    return fig
