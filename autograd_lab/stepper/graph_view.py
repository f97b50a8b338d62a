"""The graph view: a backward graph drawn once, with where backprop stops and why, and the
learner's frozen parameters that take part in it."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ..display import View, png, scrolling
from ..graph import snapshot
from ..format import table
from ..i18n import N_, _, ngettext
from .cuts import frozen_in, stop_label, stop_reason
from .draw import Layout, draw
from .draw_labels import STOPS_DRAWN
from .rules import learner_function
from ..names import caller_names, label as shortened, name_in
from .trace import check_input


HEADERS = (N_("id"), N_("node"), N_("sends gradients to"))
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
                rows.append(["...", _("({count} nodes not shown)").format(count=i - last - 1), ""])
            node = nodes[i]
            to = [_("stop") if c is None else f"{c.id}" for c, _nr in node.next]
            title = node.title
            if learner_function(node) is not None:
                title = _("{node} [your backward]").format(node=title)
            rows.append([str(node.id), title, ", ".join(_first(to)) or "-"])
            last = i
        stops = self.graph.stops()
        leaves = len(self.graph.leaves())
        # the count of stops is a whole phrase ("0 places where backprop stops"): a bare "0 places"
        # reads as a place in a language that puts the count elsewhere
        lines = [_("backward graph of {name}: {count} nodes, {leaves}, {stops}").format(
                     name=shortened(self.label), count=len(nodes),
                     leaves=ngettext("{count} leaf", "{count} leaves", leaves).format(count=leaves),
                     stops=ngettext("{count} place where backprop stops", "{count} places where backprop stops",
                                    len(stops)).format(count=len(stops))),
                 table([_(h) for h in HEADERS], rows)]
        if len(nodes) > ROWS:
            lines.append(_("(a big graph: shown are its first {head} and last {tail} nodes; every one of the "
                           "{count} is in autograd_lab.show_graph({name}).graph.nodes, and %backward {name} steps "
                           "through them)").format(head=HEAD, tail=TAIL, count=len(nodes),
                                                  name=shortened(self.label)))
        for node, position in stops[:STOPS]:
            lines.append(_("stop at input {position} of node {id} ({node}): {reason}").format(
                position=position + 1, id=node.id, node=node.title,
                reason=stop_reason(self.graph, node, position, self.names)))
        if len(stops) > STOPS:
            lines.append(_("and {count} more places where backprop stops "
                           "(autograd_lab.show_graph({name}).graph.stops() lists them)").format(
                count=len(stops) - STOPS, name=shortened(self.label)))
        frozen = frozen_in(self.graph, self.names)
        if frozen:
            lines.append(_("frozen (requires_grad=False, so no node and no .grad): {parameters}").format(
                parameters=", ".join(_first(frozen, 40))))
        return "\n".join(lines)

    def figure(self):
        layout = Layout(self.graph)
        shown = set(layout.around(None, FIGURE))
        labels = {(node, position): stop_label(self.graph, node, position, self.names)
                  for node in self.graph.nodes if node in shown for position in node.stops[:STOPS_DRAWN]}
        frozen = frozen_in(self.graph, self.names)
        notes = (_("frozen (no node, no .grad): {parameters}").format(parameters=", ".join(_first(frozen, 6))),
                 ) if frozen else ()
        return draw(layout, title=self.figure_title(), limit=FIGURE, stop_labels=labels, notes=notes)

    def figure_title(self) -> str:
        return _("backward graph of {name}").format(name=shortened(self.label))

    def alt_text(self) -> str:
        """The output and the graph's size."""
        nodes = self.graph.nodes
        return ngettext("{title}: from the output {name} back to its leaves, {count} node",
                        "{title}: from the output {name} back to its leaves, {count} nodes", len(nodes)).format(
            title=self.figure_title(), name=shortened(self.label), count=len(nodes))

    def shown_expression(self) -> str:
        return self.label

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
    what = label or name_in(names, output) or _("the output")
    # a graph can be drawn for any output, scalar or not: only a missing graph is refused
    gradient = torch.ones_like(output) if isinstance(output, torch.Tensor) and output.numel() != 1 else None
    check_input(output, gradient, shortened(what))  # its messages quote the label shortened
    return GraphView(snapshot(output, names), what, names)


def _first(parts: list[str], count: int = PARTS) -> list[str]:
    return parts if len(parts) <= count else parts[:count] + [_("and {count} more").format(count=len(parts) - count)]
