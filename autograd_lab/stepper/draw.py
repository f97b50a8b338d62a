"""The backward graph as a matplotlib Figure (no Graphviz needed): the output at the top, leaves at
the bottom, gradients flowing down. Finished, current and ready nodes are coloured; inputs that need
no gradient end in a 'stop' mark. Big graphs show the neighbourhood of the current node and say how
much was left out.

Edges, arrow heads and boxes are one collection each, so a figure costs a few artists whatever its
size, and a Drawing kept between steps only repaints its boxes."""
from __future__ import annotations

from collections import deque

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..graph import Graph, Node
from ..i18n import _
from .draw_labels import FONT, STOPS_DRAWN, clip, node_lines, points, stop_words
from .png_bands import BandedPng
from ..fonts import figure_text

COLORS = {"done": "#d9ead3", "current": "#f6b26b", "ready": "#fff2cc", "waiting": "#ffffff"}
LEAF_EDGE = "#3d85c6"
# Wider graphs shrink the font (FONT, in draw_labels) to stay within MAX_WIDTH, but never below
# MIN_FONT: below it the labels are left out.
MIN_FONT = 7.0
# 40 inches (3200 px): a window of up to about 20 boxes side by side keeps its labels at body-text
# size; the figure is shown at its own size and scrolls sideways rather than being shrunk to fit.
MAX_WIDTH = 40.0
MAX_ROWS_FOR_LABELS = 40
# Characters of a stop's label and of a note line, and inches between the labels of one node's
# stops: so figures stay readable.
STOP_WORDS, NOTE, FAN = 28, 90, 0.17
TITLE = 11.0  # points: the title and the notes above the graph


class Layout:
    """Rows of a graph, computed once: a node's row is its longest distance from the output, so
    every edge points downward."""

    def __init__(self, graph: Graph):
        self.graph = graph
        row = dict.fromkeys(graph.roots, 0)
        for node in graph.topological():
            for child, _nr in node.next:
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
            for other in [c for c, _nr in node.next if c is not None] + node.consumers:
                if other not in seen and len(seen) < limit:
                    seen.add(other)
                    queue.append(other)
        return sorted(seen, key=lambda n: n.id)


class Drawing:
    """A figure of some nodes of a graph, built once; paint() recolours it for a step."""

    @figure_text
    def __init__(self, layout: Layout, shown: list[Node], title: str | None = None,
                 stop_labels: dict | None = None, notes: tuple[str, ...] = ()):
        """stop_labels: {(node, input position): a few words} written at that stop instead of 'stop'
        (what cut the graph there); notes: lines under the title (the frozen parameters)."""
        self.nodes = shown
        self.members = set(shown)
        self._png: BandedPng | None = None  # the blank rendering, made on the first png()
        rows: dict[int, list[Node]] = {}
        for node in shown:
            rows.setdefault(layout.row[node], []).append(node)
        top = min(rows)
        pos = {}
        for r, members in rows.items():
            for i, node in enumerate(members):
                pos[node] = (i - (len(members) - 1) / 2, -(r - top))
        width = max(len(m) for m in rows.values())
        texts = {n: node_lines(n) for n in shown}
        lines = max(len(t) for t in texts.values())
        # inches of the widest line per point of font size
        widest = max(points(line) for t in texts.values() for line in t) / FONT / 72
        font = min(FONT, (MAX_WIDTH / (width + 0.2) * 0.92 - 0.3) / widest)
        self.labelled = font >= MIN_FONT and len(rows) <= MAX_ROWS_FOR_LABELS
        if not self.labelled:
            font, lines = MIN_FONT, 1
        # a box is 0.92 columns wide and holds its widest line; rows leave room for edges and 'stop'
        column = max((widest * font + 0.3) / 0.92, 1.0) if self.labelled else 0.9
        box_inches = lines * font * 1.3 / 72 + 0.12
        labels = {key: clip(words, STOP_WORDS) for key, words in (stop_labels or {}).items()}
        # rows leave room under a box for its stops' labels, one line each
        fan = max(len(stop_words(n, labels)) for n in shown) if self.labelled else 1
        row = box_inches + 0.4 + FAN * max(fan - 1, 0)
        self.row = row
        self.half = half = box_inches / row / 2
        notes = tuple(clip(n, NOTE) for n in notes)
        heading = 0.35 + 0.22 * len(notes)  # inches above the graph for the title and the notes
        height = row * (len(rows) + 0.2)
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        # a labelled stop may reach past the rightmost box: widen the figure (in columns) to hold it
        reach = max([pos[n][0] + 0.36 + points(words) * 0.85 / 72 / column
                     for n in shown for words in stop_words(n, labels)] or [0.0]) if self.labelled else 0.0
        above = self._heading_lines(layout, title, notes)
        left, right = _widened(min(xs) - 0.6, max(max(xs) + 0.6, reach + 0.12), column, above)
        size = (max(column * (right - left), 3.2), height + heading)
        self.figure = fig = Figure(figsize=size)
        ax = fig.add_axes((0, 0, 1, height / (height + heading)))
        ax.set_axis_off()
        edges, heads = [], []
        for node in shown:
            x, y = pos[node]
            for child, _nr in node.next:
                if child in self.members:
                    cx, cy = pos[child]
                    edges.append([(x, y - half), (cx, cy + half + 0.02)])
                    heads.append((cx, cy + half + 0.05))
        self._pos = pos
        ax.add_collection(LineCollection(edges, colors="#777777", linewidths=0.8))
        if heads:
            ax.scatter([h[0] for h in heads], [h[1] for h in heads], marker="v", s=30, color="#555555", zorder=5,
                       linewidths=0)
        self._stops(ax, labels, font)
        self.boxes = PatchCollection(
            [FancyBboxPatch((pos[n][0] - 0.46, pos[n][1] - half), 0.92, 2 * half, boxstyle="round,pad=0.02")
             for n in shown], zorder=3,
            edgecolors=[LEAF_EDGE if n.is_accumulator else "#444444" for n in shown],
            linewidths=[1.6 if n.is_accumulator else 0.8 for n in shown])
        ax.add_collection(self.boxes)
        if self.labelled:
            for node in shown:
                ax.text(*pos[node], "\n".join(texts[node]), ha="center", va="center", fontsize=font,
                        linespacing=1.15, zorder=4)
        ax.set_xlim(left, right)
        ax.set_ylim(min(ys) - 0.5 - half, max(ys) + 0.1 + half)
        if above:
            self.figure.suptitle("\n".join(above), fontsize=TITLE, y=1 - 0.08 / size[1], va="top")

    def _stops(self, ax, labels: dict, font: float) -> None:
        """The dotted 'stop' marks of inputs that need no gradient, with what cut each when known.
        A node's stops fan out downward, so their labels do not overwrite one another."""
        stops, words, cuts = [], [], []
        plain = _("stop")
        for node in self.nodes:
            x, y = self._pos[node]
            counted = len(node.stops) > STOPS_DRAWN  # the last label counts the rest
            found = stop_words(node, labels)
            for k, text in enumerate(found):
                stops.append([(x, y - self.half), (x + 0.3, y - self.half - (0.2 + FAN * k) / self.row)])
                words.append(text)
                cuts.append(text != plain and not (counted and k == len(found) - 1))
        if not stops:
            return
        ax.add_collection(LineCollection(stops, colors="#bbbbbb", linewidths=0.8, linestyles=":"))
        ax.scatter([s[1][0] for s in stops], [s[1][1] for s in stops], marker="x", s=16, color="#999999", zorder=2)
        if not self.labelled:
            return
        for (_start, end), text, cut in zip(stops, words, cuts, strict=True):
            ax.text(end[0] + 0.06, end[1] + 0.02, text, fontsize=font * 0.8, color="#a61c00" if cut else "#888888",
                    ha="left", va="center", zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5} if cut else None)

    def _heading_lines(self, layout: Layout, title: str | None, notes: tuple[str, ...]) -> list[str]:
        """The lines above the graph: the title with how much is shown, then the notes."""
        first = [title] if title else []
        total = len(layout.graph.nodes)
        if len(self.nodes) < total:
            first.append(_("(showing {shown} of {total} nodes)").format(shown=len(self.nodes), total=total))
        if not self.labelled:
            first.append(_("(too many nodes for readable labels: %backward shows them a few at a time)"))
        return ["  ".join(first), *notes] if first else list(notes)

    def _colors(self, current, done, ready) -> list[str]:
        return [COLORS["current" if n is current else "done" if n in done else "ready" if n in ready else "waiting"]
                for n in self.nodes]

    def paint(self, current: Node | None = None, done=frozenset(), ready=frozenset()) -> Figure:
        self.boxes.set_facecolor(self._colors(current, done, ready))
        return self.figure

    def png(self, current: Node | None = None, done=frozenset(), ready=frozenset(), dpi: int = 80) -> bytes:
        """The painted figure as PNG bytes, fast: the figure is rendered once with blank boxes, and
        each call fills the blank pixels inside the boxes (see BandedPng)."""
        if self._png is None:
            self._png = self._render_blank(dpi)
        return self._png.encode(self._colors(current, done, ready))

    @property
    def box_pixels(self) -> list[tuple[int, int, int, int]]:
        """Each shown node's box in the PNG as (top, bottom, left, right) pixel rows and columns."""
        if self._png is None:
            self._png = self._render_blank(80)
        return self._png.rects

    def _render_blank(self, dpi: int) -> BandedPng:
        self.boxes.set_facecolor(COLORS["waiting"])
        self.figure.set_dpi(dpi)
        canvas = FigureCanvasAgg(self.figure)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba()).copy()
        height = pixels.shape[0]
        to_pixels = self.figure.axes[0].transData.transform
        rects = []
        for node in self.nodes:
            x, y = self._pos[node]
            # the box with its rounded padding, two pixels in, so the corners' outside stays blank
            (left, bottom), (right, top) = to_pixels([(x - 0.48, y - self.half - 0.02),
                                                      (x + 0.48, y + self.half + 0.02)])
            rects.append((int(height - top) + 2, int(height - bottom) - 1, int(left) + 2, int(right) - 1))
        return BandedPng(pixels, rects, blank=COLORS["waiting"])


def _widened(left: float, right: float, column: float, lines: list[str]) -> tuple[float, float]:
    """The x range (in columns) that also holds the title and notes above the graph (a Chinese line is
    about twice as wide as its English): wider on both sides, the columns kept at their size."""
    needed = max((points(line) for line in lines), default=0.0) * TITLE / FONT / 72 + 0.3  # inches
    if needed <= max(column * (right - left), 3.2):
        return left, right
    extra = (needed - column * (right - left)) / column / 2
    return left - extra, right + extra


def draw(layout: Layout, current: Node | None = None, done=frozenset(), ready=frozenset(),
         limit: int = 36, title: str | None = None, stop_labels: dict | None = None,
         notes: tuple[str, ...] = ()) -> Figure:
    """Draw the graph (or the part of it around current) and return the Figure."""
    return Drawing(layout, layout.around(current, limit), title, stop_labels, notes).paint(current, done, ready)
