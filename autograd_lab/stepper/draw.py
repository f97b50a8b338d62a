"""The backward graph as a matplotlib Figure (no Graphviz needed): the output at the top, leaves at
the bottom, gradients flowing down. Finished, current and ready nodes are coloured; inputs that need
no gradient end in a 'stop' mark. Big graphs show the neighbourhood of the current node and say how
much was left out."""
from __future__ import annotations

from collections import deque

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..graph import Graph, Node

COLORS = {"done": "#d9ead3", "current": "#f6b26b", "ready": "#fff2cc", "waiting": "#ffffff"}
LEAF_EDGE = "#3d85c6"


class Layout:
    """Rows of a graph, computed once: a node's row is its longest distance from the output, so
    every edge points downward."""

    def __init__(self, graph: Graph):
        self.graph = graph
        row = {graph.root: 0}
        for node in _topological(graph):
            for child, _ in node.next:
                if child is not None:
                    row[child] = max(row.get(child, 0), row[node] + 1)
        self.row = row

    def around(self, center: Node | None, limit: int) -> list[Node]:
        """At most limit nodes: the whole graph if it fits, else the nearest ones to center."""
        nodes = self.graph.nodes
        if len(nodes) <= limit:
            return list(nodes)
        start = center or self.graph.root
        seen, queue = {start}, deque([start])
        while queue and len(seen) < limit:
            node = queue.popleft()
            for other in [c for c, _ in node.next if c is not None] + node.consumers:
                if other not in seen and len(seen) < limit:
                    seen.add(other)
                    queue.append(other)
        return sorted(seen, key=lambda n: n.id)


def _topological(graph: Graph):
    """Nodes so that each comes after every node that sends it a gradient."""
    waiting = {n: len(n.consumers) for n in graph.nodes}
    queue = deque([graph.root])
    while queue:
        node = queue.popleft()
        yield node
        for child, _ in node.next:
            if child is not None:
                waiting[child] -= 1
                if waiting[child] == 0:
                    queue.append(child)


def draw(layout: Layout, current: Node | None = None, done=frozenset(), ready=frozenset(),
         limit: int = 36, title: str | None = None) -> Figure:
    """Draw the graph (or the part of it around current) and return the Figure."""
    shown = layout.around(current, limit)
    visible = set(shown)
    rows: dict[int, list[Node]] = {}
    for node in shown:
        rows.setdefault(layout.row[node], []).append(node)
    top = min(rows)
    pos = {}
    for r, members in rows.items():
        for i, node in enumerate(members):
            pos[node] = (i - (len(members) - 1) / 2, -(r - top))
    width = max(len(m) for m in rows.values())
    fig = Figure(figsize=(min(2.0 + 2.1 * width, 14), min(1.0 + 0.9 * len(rows), 12)))
    ax = fig.add_axes((0, 0, 1, 0.92 if title else 1))
    ax.set_axis_off()
    for node in shown:
        x, y = pos[node]
        for child, _ in node.next:
            if child is None:
                ax.annotate("stop", xy=(x + 0.35, y - 0.42), ha="center", va="center", fontsize=7, color="#999999")
                ax.plot([x, x + 0.3], [y - 0.15, y - 0.36], color="#cccccc", lw=0.8, ls=":")
            elif child in visible:
                cx, cy = pos[child]
                ax.annotate("", xy=(cx, cy + 0.16), xytext=(x, y - 0.16),
                            arrowprops={"arrowstyle": "->", "color": "#777777", "lw": 0.8})
    for node in shown:
        x, y = pos[node]
        state = "current" if node is current else "done" if node in done else "ready" if node in ready else "waiting"
        ax.add_patch(FancyBboxPatch((x - 0.46, y - 0.15), 0.92, 0.3, boxstyle="round,pad=0.02",
                                    facecolor=COLORS[state], lw=1.6 if node.is_accumulator else 0.8,
                                    edgecolor=LEAF_EDGE if node.is_accumulator else "#444444"))
        text = node.name if not node.label else f"{node.name}\n{node.label}"
        ax.text(x, y, text, ha="center", va="center", fontsize=7 if node.label else 7.5)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.4)
    left_out = len(layout.graph.nodes) - len(shown)
    caption = title or ""
    if left_out:
        caption = (caption + "  " if caption else "") + f"(showing {len(shown)} of {len(layout.graph.nodes)} nodes)"
    if caption:
        fig.suptitle(caption, fontsize=9)
    return fig
