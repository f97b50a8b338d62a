"""Benchmark 3: drawing the whole backward graph of the 1000-node model, against Graphviz.

Ours: snapshot the graph, lay it out and draw every node (autograd_lab.stepper.draw.draw with
limit=len(graph.nodes), since the default view of a big graph shows only a neighbourhood), then
encode the PNG the lab shows (display.png). Reference: torchviz's make_dot(loss, params).pipe(
format="svg"), which walks the same graph and runs Graphviz's `dot`. Both in turns, median of
repeats after a warm-up. The default view (show_graph(...).figure() as PNG) is reported too.
Goal (issue 8): whole graph ratio <= 1.0 (no slower than Graphviz, and no system binary needed).

The reference needs two things the lab itself never needs, installed for this benchmark only:
    .venv/bin/pip install torchviz        (Python package)
    apt-get install -y graphviz           (Debian package that provides the `dot` binary)"""
from __future__ import annotations

import shutil
import sys

import common

import autograd_lab
from autograd_lab.display import png
from autograd_lab.graph import snapshot
from autograd_lab.stepper.draw import Layout, draw

REPEAT = 3  # the whole-graph draw takes seconds; 3 rounds keep `make bench` under its budget


def reference_or_exit():
    try:
        from torchviz import make_dot
    except ImportError:
        sys.exit("bench_graph_drawing: torchviz is missing. It is needed for this benchmark only: "
                 ".venv/bin/pip install torchviz  (and apt-get install -y graphviz for `dot`)")
    if shutil.which("dot") is None:
        sys.exit("bench_graph_drawing: Graphviz's `dot` is missing. It is needed for this benchmark "
                 "only: apt-get install -y graphviz")
    return make_dot


def main():
    make_dot = reference_or_exit()
    print(common.machine())
    model, loss = common.big_model()
    params = dict(model.named_parameters())

    def whole():
        graph = snapshot(loss, {})
        return png(draw(Layout(graph), limit=len(graph.nodes)))

    def default_view():
        return png(autograd_lab.show_graph(loss, names={}).figure())

    def graphviz():
        return make_dot(loss, params=params).pipe(format="svg")

    nodes = len(snapshot(loss, {}).nodes)
    # Warm-up: the default view goes through the same matplotlib code as the whole graph.
    graphviz(), default_view()
    times = common.side_by_side({"ours": whole, "graphviz": graphviz, "default": default_view},
                                repeat=REPEAT, warmup=0)
    ours, ref, default = (common.median(times[k]) for k in ("ours", "graphviz", "default"))
    print(f"{nodes} nodes, median of {REPEAT}: whole graph drawn as PNG {common.ms(ours)}; "
          f"torchviz make_dot + dot -Tsvg {common.ms(ref)}; default view (60 nodes) {common.ms(default)}")
    print(f"whole graph ratio {ours / ref:.2f}; default view ratio {default / ref:.2f}")
    print(common.result(("draw_whole_vs_graphviz", ours / ref, 1.0),
                        ("draw_default_view_vs_graphviz", default / ref, None)))


if __name__ == "__main__":
    main()
