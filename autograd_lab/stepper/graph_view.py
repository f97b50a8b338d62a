"""The graph view: a backward graph drawn once, with where backprop stops and why, and the
learner's frozen parameters that take part in it."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ..display import View, png
from ..graph import snapshot
from ..format import table
from .cuts import frozen_in, stop_reason
from .draw import Layout, draw
from ..names import caller_names, name_in
from .trace import check_input


class GraphView(View):
    """A backward graph drawn once, with where backprop stops."""

    def __init__(self, graph, label: str, names: Mapping | None = None):
        self.graph = graph
        self.label = label
        self.names = names or {}

    def text(self) -> str:
        rows = []
        for node in self.graph.nodes:
            to = ", ".join("stop" if c is None else f"{c.id}" for c, _ in node.next) or "-"
            rows.append([str(node.id), node.title, to])
        stops = self.graph.stops()
        lines = [f"backward graph of {self.label}: {len(self.graph.nodes)} nodes, "
                 f"{_count(len(self.graph.leaves()), 'leaf', 'leaves')}, "
                 f"{_count(len(stops), 'place', 'places')} where backprop stops",
                 table(["id", "node", "sends gradients to"], rows)]
        for node, position in stops:
            lines.append(f"stop at input {position + 1} of node {node.id} ({node.title}): "
                         f"{stop_reason(self.graph, node, position, self.names)}")
        frozen = frozen_in(self.graph, self.names)
        if frozen:
            lines.append(f"frozen (requires_grad=False, so no node and no .grad): {', '.join(frozen)}")
        return "\n".join(lines)

    def figure(self):
        return draw(Layout(self.graph), title=f"backward graph of {self.label}", limit=60)

    def figure_title(self) -> str:
        return f"backward graph of {self.label}"

    def build_widget(self):
        import ipywidgets as w

        image = w.Image(value=png(self.figure()), format="png")
        image.add_class("agl-graph")
        return image


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


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
