"""The graph view: a backward graph drawn once, with where backprop stops and why, and the
learner's frozen parameters that take part in it."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ..display import View, png, scrolling
from ..graph import snapshot
from ..format import table
from .cuts import frozen_in, stop_label, stop_reason
from .draw import Layout, draw
from .draw_labels import STOPS_DRAWN
from .rules import learner_function
from ..names import caller_names, name_in
from .trace import check_input


# Bounds that keep %graph's output small whatever the graph: a graph of more than ROWS nodes shows
# its first HEAD and last TAIL; at most STOPS stops are explained, and a node names PARTS inputs.
ROWS, HEAD, TAIL, STOPS, PARTS, FIGURE = 60, 25, 25, 20, 8, 60


class GraphView(View):
    """A backward graph drawn once, with where backprop stops."""

    def __init__(self, graph, label: str, names: Mapping | None = None):
        self.graph = graph
        self.label = label
        self.names = names or {}

    def text(self) -> str:
        nodes = self.graph.nodes
        shown = list(range(len(nodes))) if len(nodes) <= ROWS else [*range(HEAD), *range(len(nodes) - TAIL, len(nodes))]
        rows, last = [], -1
        for i in shown:
            if i != last + 1:
                rows.append(["...", f"({i - last - 1} nodes not shown)", ""])
            node = nodes[i]
            to = ["stop" if c is None else f"{c.id}" for c, _ in node.next]
            mark = " [your backward]" if learner_function(node) is not None else ""
            rows.append([str(node.id), node.title + mark, ", ".join(_first(to)) or "-"])
            last = i
        stops = self.graph.stops()
        lines = [f"backward graph of {self.label}: {len(nodes)} nodes, "
                 f"{_count(len(self.graph.leaves()), 'leaf', 'leaves')}, "
                 f"{_count(len(stops), 'place', 'places')} where backprop stops",
                 table(["id", "node", "sends gradients to"], rows)]
        if len(nodes) > ROWS:
            lines.append(f"(a big graph: shown are its first {HEAD} and last {TAIL} nodes; every one of the "
                         f"{len(nodes)} is in autograd_lab.show_graph({self.label}).graph.nodes, and "
                         f"%backward {self.label} steps through them)")
        for node, position in stops[:STOPS]:
            lines.append(f"stop at input {position + 1} of node {node.id} ({node.title}): "
                         f"{stop_reason(self.graph, node, position, self.names)}")
        if len(stops) > STOPS:
            lines.append(f"and {len(stops) - STOPS} more places where backprop stops "
                         f"(autograd_lab.show_graph({self.label}).graph.stops() lists them)")
        frozen = frozen_in(self.graph, self.names)
        if frozen:
            lines.append(f"frozen (requires_grad=False, so no node and no .grad): {', '.join(_first(frozen, 40))}")
        return "\n".join(lines)

    def figure(self):
        layout = Layout(self.graph)
        shown = set(layout.around(None, FIGURE))
        labels = {(node, position): stop_label(self.graph, node, position, self.names)
                  for node in self.graph.nodes if node in shown for position in node.stops[:STOPS_DRAWN]}
        frozen = frozen_in(self.graph, self.names)
        notes = (f"frozen (no node, no .grad): {', '.join(_first(frozen, 6))}",) if frozen else ()
        return draw(layout, title=f"backward graph of {self.label}", limit=FIGURE, stop_labels=labels, notes=notes)

    def figure_title(self) -> str:
        return f"backward graph of {self.label}"

    def build_widget(self):
        import ipywidgets as w

        image = w.Image(value=png(self.figure()), format="png", layout=w.Layout(max_width="none"))
        image.add_class("agl-graph")
        return scrolling(image)  # at its own size: scaled down, the labels would shrink


def show_graph(output, names: Mapping | None = None, label: str | None = None) -> GraphView:
    """The backward graph of output, drawn once (matplotlib; no Graphviz needed).

    >>> import torch
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> len(show_graph((x * 2).sum(), names={"x": x}).graph.nodes)
    3
    """
    if names is None:
        names = caller_names()
    what = label or name_in(names, output) or "the output"
    # a graph can be drawn for any output, scalar or not: only a missing graph is refused
    gradient = torch.ones_like(output) if isinstance(output, torch.Tensor) and output.numel() != 1 else None
    check_input(output, gradient, what)
    return GraphView(snapshot(output, names), what, names)


def _first(parts: list[str], count: int = PARTS) -> list[str]:
    return parts if len(parts) <= count else parts[:count] + [f"and {len(parts) - count} more"]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
