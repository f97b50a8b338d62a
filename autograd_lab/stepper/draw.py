"""The backward graph as a matplotlib Figure (no Graphviz needed): the output at the top, leaves at
the bottom, gradients flowing down; inputs that need no gradient end in a 'stop' mark. Big graphs
show the neighbourhood of the current node and say how much was left out.

The layout is a layered one: a node's row is its longest distance from the output; an edge that
spans rows bends through a slot in each row it passes, so no edge is drawn through a box; the order
within a row is settled by barycentre sweeps (fewest crossings kept, deterministic); a graph taller
than a screen is folded into columns, the edges between columns ending in matching letters.

In the stepper each node's state has a border (style and width), a word with a symbol, and a
colour, explained by a legend; with the recording given, the edges into and out of the current
node carry the gradients they carry, and each leaf's box its .grad before and after.

Edges, arrow heads and boxes are one collection each, so a figure costs a few artists whatever its
size, and a Drawing kept between steps only repaints its marks (see png())."""
from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import IdentityTransform

from ..format import width as columns
from ..graph import Graph, Node
from ..i18n import _
from .draw_labels import (FONT, STOPS_DRAWN, clip, ems, leaf_line, node_lines, points, state_word, stop_words,
                          value_text)
from .png_bands import BandedPng, Mark, border, fill, stamp
from ..fonts import FIGURES, figure_text

STATES = ("done", "current", "ready", "waiting")
PREPARED_AT_ONCE = 8  # texts a figure when prepare() renders a drawing's texts between clicks
#: one thread in matplotlib at a time: a click's texts and the next window drawn between clicks; the
#: lock every figure is built under (fonts.FIGURES), so that a thread's fonts are never another's
RENDERING = FIGURES
COLORS = {"done": "#d9ead3", "current": "#f6b26b", "ready": "#fff2cc", "waiting": "#ffffff"}
# The marks that do not rest on colour: each state's border (colour, width in points, dashes in
# points or None for solid) and its word (draw_labels.STATE_WORDS). Every mark's colour has a WCAG
# contrast of at least 3:1 against white and against every state's fill (tests/test_figure.py).
BORDERS = {"done": ("#274e13", 2.0, None), "current": ("#000000", 3.5, None),
           "ready": ("#7f6000", 1.6, (4.0, 2.5)), "waiting": ("#595959", 1.0, (1.5, 2.5))}
INK = "#1a1a1a"  # the states' words and the values
LEAF_EDGE = "#3d85c6"  # %graph: a leaf's border (no states there)
# Wider graphs shrink the font (FONT, in draw_labels) to stay within MAX_WIDTH, but never below
# MIN_FONT: below it the labels are left out.
MIN_FONT = 7.0
BIG_FONT = 11.0  # points: the names in a window of more than VALUES_UP_TO boxes
# 40 inches (3200 px): a window of up to about 20 boxes side by side keeps its labels at body-text
# size; the figure is shown at its own size and scrolls sideways rather than being shrunk to fit.
MAX_WIDTH = 40.0
MAX_ROWS_FOR_LABELS = 40
# Inches of graph a column may hold before the graph is folded into columns side by side: about a
# laptop screen's height at 80 dpi (800 px), the heading aside.
SCREEN = 10.0
FOLD_AFTER = 8  # rows a folded column holds at least
# Values are written on the graph up to this many boxes; a bigger window leaves them to the panel.
VALUES_UP_TO = 36
# Characters of a stop's label and of a note line, and inches between the labels of one node's
# stops: so figures stay readable.
STOP_WORDS, NOTE, FAN = 28, 90, 0.17
TITLE = 11.0  # points: the title and the notes above the graph
SMALL = 0.8  # the values' and the leaves' lines, and the states' words, in FONTs
DUMMY = 0.45  # columns a bending edge takes in a row it passes
SWEEPS = 8  # barycentre sweeps (down and up) that order the rows
LEGEND = 0.42  # inches of the legend's strip
DPI = 80


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


def groups(shown: list[Node]) -> dict[Node, str]:
    """The learner's module each node belongs to, where the graph tells it: a leaf named
    module.weight belongs to module (its first name: G of G.0.weight); a node whose leaves (its own
    children, or reached through nodes that only pass one leaf on, as TBackward0 does) all belong to
    one module belongs to it. Empty unless the nodes show two modules or more."""
    def of_leaf(node: Node) -> str | None:
        name = node.label or ""
        head = name.split(".", 1)[0]
        return head if "." in name and head.isidentifier() else None

    found: dict[Node, str] = {}
    for node in shown:
        if node.is_accumulator:
            module = of_leaf(node)
            if module:
                found[node] = module
            continue
        seen: set[str | None] = set()
        for child, _nr in node.next:
            while child is not None and not child.is_accumulator and len(child.consumers) == 1:
                inner = [c for c, _n in child.next if c is not None]
                child = inner[0] if len(inner) == 1 else None
            if child is not None and child.is_accumulator:
                seen.add(of_leaf(child))
        if len(seen) == 1 and None not in seen:
            found[node] = seen.pop()  # type: ignore[assignment]
    return found if len(set(found.values())) >= 2 else {}


class Placement:
    """Where each box and each bend of an edge goes, in columns (x) and rows (y, 0 at the top of
    each folded column, going down): ranks (the rows of the shown nodes, gaps closed), folded
    every per_band ranks; each edge that spans ranks gets a slot in every rank it passes; the
    order within a rank from barycentre sweeps; the positions from the order (each element as
    near as it may be to the mean of its neighbours, kept apart: a least-squares packing)."""

    def __init__(self, layout: Layout, shown: list[Node], per_band: int):
        members = set(shown)
        ranks = {r: i for i, r in enumerate(sorted({layout.row[n] for n in shown}))}
        self.rank = {n: ranks[layout.row[n]] for n in shown}
        count = len(ranks)
        self.per_band = per_band if count > per_band else max(count, 1)
        self.bands = (count + self.per_band - 1) // self.per_band
        self.edges = [(n, k, c) for n in shown for k, (c, _nr) in enumerate(n.next) if c in members]
        order: list[list] = [[] for _ in range(count)]
        for node in shown:
            order[self.rank[node]].append(node)
        self.chains: dict[int, list] = {}  # edge -> its elements top to bottom (nodes and bends)
        self.cut: list[int] = []  # edges between folded columns: drawn as two lettered ends
        for i, (parent, _k, child) in enumerate(self.edges):
            top, bottom = self.rank[parent], self.rank[child]
            if top // self.per_band != bottom // self.per_band:
                self.cut.append(i)
                continue
            bends = [("bend", i, r) for r in range(top + 1, bottom)]
            for bend in bends:
                order[bend[2]].append(bend)
            self.chains[i] = [parent, *bends, child]
        up: dict = {e: [] for row in order for e in row}
        down: dict = {e: [] for row in order for e in row}
        for chain in self.chains.values():
            for a, b in itertools.pairwise(chain):
                down[a].append(b)
                up[b].append(a)
        self.order = _ordered(order, up, down, self.per_band)
        self.x = _positions(self.order, up, down, self.per_band)
        # the folded columns side by side, each its width apart
        self.band_left: list[float] = []
        shift, self.pos = 0.0, {}
        for band in range(self.bands):
            rows = self.order[band * self.per_band:(band + 1) * self.per_band]
            xs = [self.x[e] for row in rows for e in row]
            low, high = min(xs) - 0.5, max(xs) + 0.5
            self.band_left.append(shift)
            for row_index, row in enumerate(rows):
                for e in row:
                    self.pos[e] = (self.x[e] - low + shift, -float(row_index))
            shift += high - low + 0.6
        self.width = shift - 0.6  # columns

    def band(self, node: Node) -> int:
        return self.rank[node] // self.per_band


def _width(e) -> float:
    return DUMMY if isinstance(e, tuple) else 1.0


def _ordered(order: list[list], up: dict, down: dict, per_band: int) -> list[list]:
    """The rows' orders after barycentre sweeps, the one with the fewest crossings kept."""
    pos = {e: i for row in order for i, e in enumerate(row)}

    def crossings() -> int:
        total = 0
        for row in order:
            pairs = [(pos[a], pos[b]) for a in row for b in down[a]]
            total += sum(1 for i, (a1, b1) in enumerate(pairs) for a2, b2 in pairs[i + 1:] if (a1 - a2) * (b1 - b2) < 0)
        return total

    best, fewest = [list(row) for row in order], crossings()
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        ranks = range(1, len(order)) if downward else range(len(order) - 2, -1, -1)
        for r in ranks:
            near = up if downward else down
            row = order[r]
            row.sort(key=lambda e: (sum(pos[n] for n in near[e]) / len(near[e]) if near[e] else pos[e], pos[e]))
            for i, e in enumerate(row):
                pos[e] = i
        count = crossings()
        if count < fewest:
            best, fewest = [list(row) for row in order], count
    return best


def _positions(order: list[list], up: dict, down: dict, per_band: int) -> dict:
    """x of every element: each row packed left to right, then moved towards its neighbours' mean."""
    x: dict = {}
    for row in order:
        at = 0.0
        for i, e in enumerate(row):
            at += 0.0 if i == 0 else (_width(row[i - 1]) + _width(e)) / 2
            x[e] = at
        for e in row:
            x[e] -= at / 2
    for sweep in range(4):
        near = up if sweep % 2 == 0 else down
        for row in (order if sweep % 2 == 0 else order[::-1]):
            wanted = [sum(x[n] for n in near[e]) / len(near[e]) if near[e] else x[e] for e in row]
            for e, value in zip(row, _packed(row, wanted), strict=True):
                x[e] = value
    return x


def _packed(row: list, wanted: list[float]) -> list[float]:
    """Positions in row's order, kept apart by the elements' widths, as near the wanted ones as may
    be (least squares: pool adjacent violators)."""
    offsets, at = [], 0.0
    for i, e in enumerate(row):
        at += 0.0 if i == 0 else (_width(row[i - 1]) + _width(e)) / 2
        offsets.append(at)
    blocks: list[tuple[float, int, int]] = []  # (sum, count, first index)
    for i, (w, o) in enumerate(zip(wanted, offsets, strict=True)):
        blocks.append((w - o, 1, i))
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1] = (blocks[-1][0] + last[0], blocks[-1][1] + last[1], blocks[-1][2])
    out: list[float] = []
    for total, count, first in blocks:
        out.extend(total / count + offsets[first + j] for j in range(count))
    return out


class Drawing:
    """A figure of some nodes of a graph, built once; paint() marks it for a step, png() gives the
    marked figure's PNG fast."""

    @figure_text
    def __init__(self, layout: Layout, shown: list[Node], title: str | None = None,
                 stop_labels: dict | None = None, notes: tuple[str, ...] = (), trace=None, states: bool = True):
        """stop_labels: {(node, input position): a few words} written at that stop instead of 'stop'
        (what cut the graph there); notes: lines under the title (the frozen parameters); trace: the
        recording, whose values the edges and leaves then carry; states: the stepper's marks and
        their legend (%graph has none)."""
        self.nodes = shown
        self.members = set(shown)
        self.states = states
        self._png: BandedPng | None = None  # the blank rendering, made on the first png()
        self._sprites: dict = {}
        self.prepared = False  # every text a step may stamp is rendered (prepare())
        self._steps = {s.node: s for s in trace.steps} if trace is not None else {}
        self.values = bool(self._steps) and len(shown) <= VALUES_UP_TO
        self.groups = groups(shown)
        texts = {n: node_lines(n, None if n.is_accumulator else self.groups.get(n)) for n in shown}  # a leaf names it
        self.leaf_texts = {n: self._leaf_lines(n) for n in shown if n.is_accumulator} if self.values else {}
        lines = max(len(t) for t in texts.values())
        # inches of the widest line per point of font size
        widest = max(points(line) for t in texts.values() for line in t) / FONT / 72
        widest = max([widest] + [ems(t) * SMALL / 72 for pair in self.leaf_texts.values() for t in pair])
        labels = {key: clip(words, STOP_WORDS) for key, words in (stop_labels or {}).items()}
        self._stop_labels = labels
        fan = max(len(stop_words(n, labels)) for n in shown)
        small_line = FONT * SMALL * 1.25 / 72  # inches of a small line at full size
        # rows leave room under a box for its stops' labels, one line each, and for two lines of values
        gap = max(0.62 if self.values else 0.4, 0.4 + FAN * max(fan - 1, 0))
        badge = small_line + 0.08 if states else 0.0
        leaf = small_line if self.leaf_texts else 0.0
        box_inches = lines * FONT * 1.3 / 72 + 0.12 + badge + leaf
        # fold only a tall graph: a short one keeps its shape (eight rows may pass a screen a little)
        per_band = max(FOLD_AFTER, int((SCREEN - 0.6) / (box_inches + gap)))
        self.place = place = Placement(layout, shown, per_band)
        pos = {n: place.pos[n] for n in shown}
        # a window of more than VALUES_UP_TO boxes is written a size smaller: its picture stays small
        font = min(FONT if len(shown) <= VALUES_UP_TO else BIG_FONT,
                   (MAX_WIDTH / (place.width + 1.2) * 0.92 - 0.3) / widest)
        self.labelled = font >= MIN_FONT and len(place.order) <= MAX_ROWS_FOR_LABELS
        if not self.labelled:
            font, lines, self.values, self.leaf_texts = MIN_FONT, 1, False, {}
            badge = leaf = 0.0
            box_inches = FONT * 1.3 / 72 + 0.12
        scale = font / FONT
        badge, leaf = badge * scale, leaf * scale
        if self.labelled:
            box_inches = lines * font * 1.3 / 72 + 0.12 + badge + leaf
        self.font, self.small = font, font * SMALL
        # a box is 0.92 columns wide and holds its widest line
        column = max((widest * font + 0.3) / 0.92, 1.0) if self.labelled else 0.9
        self.column = column
        row = box_inches + gap
        self.row, self.box_inches = row, box_inches
        self.half = half = box_inches / row / 2
        self.gap = gap / row  # rows
        self._badge, self._leaf = badge / row, leaf / row
        notes = tuple(clip(n, NOTE) for n in notes)
        above = self._heading_lines(layout, title, notes)
        legend = LEGEND if states and self.labelled else 0.0
        heading = (0.35 + 0.22 * (len(above) - 1) if above else 0.12) + legend
        bands_rows = min(len(place.order), place.per_band)
        # rows above the first box (the output's arrow, the ends coming from another column) and below
        # the last (stops, ends going to another column)
        y_top = half + (self.gap * 0.85 + 0.03 if self.values or place.cut else 0.1)
        y_bottom = -(bands_rows - 1) - half - max(self.gap * 0.85 + 0.05, 0.5 - half)
        height = row * (y_top - y_bottom)
        self._pos = pos
        self._ports_cache = self._ports()
        self._value_labels = self._plan_values() if self.values else {}
        self._lettered = self._letters()
        reach = [pos[n][0] + 0.44 + points(words) * 0.85 / 72 / column
                 for n in shown for words in stop_words(n, labels)] if self.labelled else []
        spans = [x + w / 2 for lst in self._value_labels.values() for (_t, x, _y, w, _h) in lst]
        lefts = [x - w / 2 for lst in self._value_labels.values() for (_t, x, _y, w, _h) in lst]
        left = min([-0.1] + [v - 0.1 for v in lefts])
        right = max([place.width + 0.1] + [v + 0.12 for v in reach + spans])
        legend_inches = sum(ems(state_word(s)) * self.small / 72 + 0.75 for s in STATES) if legend else 0.0
        left, right = _widened(left, right, column, above, legend_inches)
        size = (max(column * (right - left), 3.2), height + heading)
        self.figure = fig = Figure(figsize=size)
        ax = fig.add_axes((0, 0, 1, height / (height + heading)))
        ax.set_axis_off()
        self._edges(ax)
        self._stops(ax, labels, font)
        self.boxes = PatchCollection(
            [Rectangle((pos[n][0] - 0.46, pos[n][1] - half), 0.92, 2 * half) for n in shown], zorder=3,
            edgecolors=[LEAF_EDGE if n.is_accumulator else "#444444" for n in shown],
            linewidths=[1.6 if n.is_accumulator else 0.8 for n in shown], facecolors=COLORS["waiting"])
        ax.add_collection(self.boxes)
        self._badges: dict[Node, object] = {}
        self._leaves: dict[Node, object] = {}
        self._shown_values: list = []
        if self.labelled:
            for node in shown:
                x, y = pos[node]
                middle = y + (self._leaf if node in self.leaf_texts else 0.0) / 2 - self._badge / 2
                ax.text(x, middle, "\n".join(texts[node]), ha="center", va="center", fontsize=font,
                        linespacing=1.15, zorder=4)
                if states:
                    self._badges[node] = ax.text(*self._badge_at(node), "", ha="right", va="top", fontsize=self.small,
                                                 color=INK, zorder=4)
                if node in self.leaf_texts:
                    self._leaves[node] = ax.text(*self._leaf_at(node), "", ha="center", va="center",
                                                 fontsize=self.small, color=INK, zorder=4)
        self._ax = ax
        ax.set_xlim(left, right)
        ax.set_ylim(y_bottom, y_top)
        if above:
            fig.suptitle("\n".join(above), fontsize=TITLE, y=1 - 0.08 / size[1], va="top")
        if legend:
            self._legend(fig, size, heading)

    # --- what the figure holds -----------------------------------------------------------------
    def _leaf_lines(self, node: Node) -> tuple[str, str]:
        """A leaf's .grad line before its gradient arrived and after."""
        step = self._steps.get(node)
        if step is None:  # not reached by this backward
            text = leaf_line(getattr(node.leaf, "grad", None), None, False)
            return text, text
        return leaf_line(step.grad_before, None, False), leaf_line(step.grad_before, step.grad_after, True)

    def _badge_at(self, node: Node) -> tuple[float, float]:
        """The top right corner of the state's word, inside the box."""
        x, y = self._pos[node]
        return x + 0.43, y + self.half - 0.015

    def _leaf_at(self, node: Node) -> tuple[float, float]:
        x, y = self._pos[node]
        return x, y - self.half + self._leaf / 2 + 0.03

    def _ports(self) -> dict:
        """Where each edge leaves its parent's box and enters its child's (x offsets in columns):
        spread along the box's side, in the order of where the edge goes or comes from."""
        place = self.place
        outs: dict[Node, list] = {}
        ins: dict[Node, list] = {}
        for i, (parent, _k, child) in enumerate(place.edges):
            chain = place.chains.get(i)
            nxt = place.pos[chain[1]][0] if chain else place.pos[parent][0]
            prev = place.pos[chain[-2]][0] if chain else place.pos[child][0]
            outs.setdefault(parent, []).append((nxt, i))
            ins.setdefault(child, []).append((prev, i))
        out_at: dict[int, float] = {}
        in_at: dict[int, float] = {}
        for table, ports in ((outs, out_at), (ins, in_at)):
            for _node, found in table.items():
                found.sort()
                step = min(0.14, 0.7 / len(found))
                for j, (_x, i) in enumerate(found):
                    ports[i] = (j - (len(found) - 1) / 2) * step
        return {"out": out_at, "in": in_at}

    def _letters(self) -> dict[int, str]:
        """The letter of each edge between folded columns: both its ends carry it."""
        return {i: _letter(n) for n, i in enumerate(self.place.cut)}

    def _segments_of(self, i: int) -> list[list[tuple[float, float]]]:
        """Edge i as polylines (one; two for an edge between folded columns), arrow at the end."""
        place, ports, half = self.place, self._ports_cache, self.half
        parent, _k, child = place.edges[i]
        (px, py), (cx, cy) = place.pos[parent], place.pos[child]
        start = (px + ports["out"][i], py - half)
        end = (cx + ports["in"][i], cy + half + 0.02)
        chain = place.chains.get(i)
        if chain is None:  # between folded columns: an end under the parent, one above the child
            stub = self.gap * 0.8
            return [[start, (start[0], start[1] - stub)], [(end[0], end[1] + stub), end]]
        points_ = [start]
        for bend in chain[1:-1]:
            bx, by = place.pos[bend]
            points_ += [(bx, by + half), (bx, by - half)]
        return [points_ + [end]]

    def _edges(self, ax) -> None:
        lines, heads, self.segments = [], [], []
        for i in range(len(self.place.edges)):
            for polyline in self._segments_of(i):
                lines.append(polyline)
                self.segments += list(itertools.pairwise(polyline))
            heads.append((polyline[-1][0], polyline[-1][1] + 0.03))
        if self.values:  # the output's incoming gradient: a short arrow above each root shown
            for node in self.nodes:
                if not node.consumers:
                    x, y = self._pos[node]
                    lines.append([(x, y + half_gap(self)), (x, y + self.half + 0.02)])
                    heads.append((x, y + self.half + 0.05))
        ax.add_collection(LineCollection(lines, colors="#666666", linewidths=0.9))
        if heads:
            ax.scatter([h[0] for h in heads], [h[1] for h in heads], marker="v", s=30, color="#555555", zorder=5,
                       linewidths=0)
        if self.labelled:
            for i, letter in self._lettered.items():
                leaving, entering = self._segments_of(i)
                for at in (leaving[-1], entering[0]):  # the end under the parent, the start above the child
                    ax.text(at[0] + 0.05, at[1], letter, ha="left", va="center", fontsize=self.small,
                            fontweight="bold", color=INK, zorder=6)

    def _plan_values(self) -> dict:
        """For each node that has a step: the values written when it is current, as (text, x, y,
        width, height) in columns and rows: on each edge into it what its parent sent along that
        edge, on each edge out of it what it sends; placed on the edge, apart from one another."""
        place, out = self.place, {}
        column, row = self.column, self.row
        tall = self.small * 1.3 / 72 / row  # rows of a line
        stops = self._stop_rects(column, row)
        for node in self.nodes:
            step = self._steps.get(node)
            if step is None:
                continue
            wanted: list[tuple[str, list, tuple[float, ...]]] = []  # (text, segment (top, bottom), fractions)
            for i, (parent, k, child) in enumerate(place.edges):
                if child is node and parent in self._steps:
                    sent = self._steps[parent].grad_inputs
                    value = sent[k] if k < len(sent) else None
                    seg = self._segments_of(i)[-1][-2:]
                    wanted.append((value_text(value), seg, (0.45, 0.25, 0.7)))
                elif parent is node:
                    value = step.grad_inputs[k] if k < len(step.grad_inputs) else None
                    seg = self._segments_of(i)[0][:2]
                    wanted.append((value_text(value), seg, (0.55, 0.75, 0.3)))
            if not node.consumers:
                x, y = self._pos[node]
                seg = [(x, y + half_gap(self)), (x, y + self.half)]
                wanted.append((value_text(step.grad_outputs[0] if step.grad_outputs else None), seg, (0.5,)))
            placed: list[tuple[str, float, float, float, float]] = []
            for text, ((x0, y0), (x1, y1)), tries in wanted:
                w = ems(text) * self.small / 72 / column + 0.1
                h = tall * (text.count("\n") + 1) + 0.04
                best = None
                # on the edge, at a few heights; then beside it, touching it, on either side
                for f, side in [(f, 0.0) for f in tries + (0.15, 0.85)] + [(f, s) for s in (-0.5, 0.5) for f in tries]:
                    y = y0 + (y1 - y0) * f
                    x = x0 + (x1 - x0) * f + side * w
                    clash = sum(_overlap((x, y, w, h), other[1:]) for other in placed + stops)
                    if best is None or clash < best[0]:
                        best = (clash, x, y)
                    if clash == 0:
                        break
                assert best is not None
                placed.append((text, best[1], best[2], w, h))
            out[node] = placed
        return out

    def _stop_rects(self, column: float, row: float) -> list[tuple[str, float, float, float, float]]:
        """Where the stops' labels go, as the values' labels see them: (text, x, y, width, height)."""
        found = []
        for node in self.nodes:
            x, y = self._pos[node]
            for k, text in enumerate(stop_words(node, self._stop_labels)):
                end = (x + 0.38, y - self.half - (0.2 + FAN * k) / row)
                w = (points(text) * 0.8 / 72 + 0.1) / column
                found.append((text, end[0] + 0.06 + w / 2, end[1] + 0.02, w + 0.1, FONT * 0.8 * 1.4 / 72 / row))
        return found

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
                stops.append([(x + 0.3, y - self.half), (x + 0.38, y - self.half - (0.2 + FAN * k) / self.row)])
                words.append(text)
                cuts.append(text != plain and not (counted and k == len(found) - 1))
        if not stops:
            return
        ax.add_collection(LineCollection(stops, colors="#bbbbbb", linewidths=0.8, linestyles=":"))
        ax.scatter([s[1][0] for s in stops], [s[1][1] for s in stops], marker="x", s=16, color="#999999", zorder=2)
        if not self.labelled:
            return
        for (_start, end), text, cut in zip(stops, words, cuts, strict=True):
            ax.text(end[0] + 0.06, end[1] + 0.02, text, fontsize=font * 0.8, color="#a61c00" if cut else "#666666",
                    ha="left", va="center", zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5} if cut else None)

    def _legend(self, fig, size: tuple[float, float], heading: float) -> None:
        """A strip under the heading: each state's box as the graph draws it, and its word."""
        width, height = size
        ax = fig.add_axes((0, 1 - heading / height, 1, LEGEND / height))
        ax.set_axis_off()
        ax.set_xlim(0, width)
        ax.set_ylim(0, LEGEND)
        at = 0.15
        for state in STATES:
            colour, lw, dash = BORDERS[state]
            ax.add_patch(Rectangle((at, 0.1), 0.42, 0.24, facecolor=COLORS[state], edgecolor=colour, linewidth=lw,
                                   linestyle=(0, dash) if dash else "-"))
            word = state_word(state)
            ax.text(at + 0.5, 0.22, word, ha="left", va="center", fontsize=self.small, color=INK)
            at += 0.5 + ems(word) * self.small / 72 + 0.3
        self.legend = ax

    def _heading_lines(self, layout: Layout, title: str | None, notes: tuple[str, ...]) -> list[str]:
        """The lines above the graph: the title with how much is shown, then the notes."""
        first = [title] if title else []
        total = len(layout.graph.nodes)
        if len(self.nodes) < total:
            first.append(_("(showing {shown} of {total} nodes)").format(shown=len(self.nodes), total=total))
        if not self.labelled:
            first.append(_("(too many nodes for readable labels: %backward shows them a few at a time)"))
        extra = []
        if self.place.bands > 1:
            extra.append(_("(folded into {count} columns to fit the screen: read each from the top, left to right; "
                           "an arrow ending in a letter goes on at the same letter)").format(count=self.place.bands))
        if self._steps and not self.values and self.labelled:
            extra.append(_("(values are written on the graph up to {count} boxes: the panel shows them)").format(
                count=VALUES_UP_TO))
        lines = ["  ".join(first)] if first else []
        return lines + list(notes) + [part for e in extra for part in _wrapped(e, NOTE)]

    # --- a step's marks --------------------------------------------------------------------------
    def state_of(self, node: Node, current, done, ready) -> str:
        return "current" if node is current else "done" if node in done else "ready" if node in ready else "waiting"

    def _colors(self, current, done, ready) -> list[str]:
        return [COLORS[self.state_of(n, current, done, ready)] for n in self.nodes]

    def paint(self, current: Node | None = None, done=frozenset(), ready=frozenset()) -> Figure:
        """The figure marked for a step: states, the current node's values, the leaves' .grad."""
        states = [self.state_of(n, current, done, ready) for n in self.nodes]
        self.boxes.set_facecolor([COLORS[s] for s in states])
        if self.states:
            self.boxes.set_edgecolor([BORDERS[s][0] for s in states])
            self.boxes.set_linewidth([BORDERS[s][1] for s in states])
            self.boxes.set_linestyle([(0, BORDERS[s][2]) if BORDERS[s][2] else "solid"  # type: ignore[misc]
                                      for s in states])
        for node, state in zip(self.nodes, states, strict=True):
            if node in self._badges:
                self._badges[node].set_text(state_word(state) if state != "waiting" else "")  # type: ignore[attr-defined]
            if node in self._leaves:
                arrived = state == "done" or state == "current"
                self._leaves[node].set_text(self.leaf_texts[node][arrived])  # type: ignore[attr-defined]
        for text in self._shown_values:
            text.remove()
        self._shown_values = []
        for words, x, y, _w, _h in self._value_labels.get(current, []):
            self._shown_values.append(self._ax.text(
                x, y, words, ha="center", va="center", fontsize=self.small, color=INK, zorder=7, linespacing=1.1,
                bbox={"facecolor": "white", "edgecolor": "#999999", "linewidth": 0.6, "pad": 1.5}))
        return self.figure

    def png(self, current: Node | None = None, done=frozenset(), ready=frozenset(), dpi: int = DPI) -> bytes:
        """The marked figure as PNG bytes, fast: the figure is rendered once with blank boxes, and
        each call paints the step's marks into that rendering (see BandedPng)."""
        if self._png is None:
            self._png = self._render_blank(dpi)
        return self._png.encode(self._marks(current, done, ready))

    @property
    def box_pixels(self) -> list[tuple[int, int, int, int]]:
        """The inside of each shown node's box in the PNG, within its border, as (top, bottom, left,
        right) pixel rows and columns."""
        if self._png is None:
            self._png = self._render_blank(DPI)
        inset = max(round(w * self._dpi / 72) for _c, w, _d in BORDERS.values()) + 1 if self.states else 1
        return [(t + inset, b - inset, left + inset, r - inset) for t, b, left, r in self._rects]

    def _marks(self, current, done, ready) -> list[Mark]:
        """The step's marks, each made once and kept (a click looks them up)."""
        marks: list[Mark] = []
        made = self._made
        self._sprite_set(self._wanted(current, done, ready))  # the texts this step stamps, in one figure
        for i, node in enumerate(self.nodes):
            state = self.state_of(node, current, done, ready)
            keys: list[tuple] = [("fill", i, state)] if state != "waiting" else []
            if self.states:
                keys.append(("border", i, state))
                if state != "waiting" and node in self._badges:
                    keys.append(("badge", i, state))
            if node in self._leaves:
                keys.append(("leaf", i, state in ("done", "current")))
            for key in keys:
                mark = made.get(key)
                if mark is None:
                    mark = made[key] = self._mark(key)
                marks.append(mark)
        for j in range(len(self._value_labels.get(current, []))):
            value = ("value", current, j)
            mark = made.get(value)
            if mark is None:
                mark = made[value] = self._mark(value)
            marks.append(mark)
        return marks

    def _mark(self, key: tuple) -> Mark:
        kind = key[0]
        if kind in ("fill", "border"):
            i, state = key[1], key[2]
            rect = self._rects[i]
            if kind == "fill":
                return fill(rect, COLORS[state], self._png.pixels)  # type: ignore[union-attr]
            colour, width, dash = BORDERS[state]
            px = max(1, round(width * self._dpi / 72))
            return border(rect, colour, px, None if dash is None else
                          tuple(max(1, round(d * width * self._dpi / 72)) for d in dash))  # type: ignore[arg-type]
        to_pixels = self._ax.transData.transform
        height = self._png.pixels.shape[0]  # type: ignore[union-attr]
        if kind == "badge":
            node = self.nodes[key[1]]
            text = state_word(key[2])
            sprite = self._sprite_set([("badge", text)])[("badge", text)]
            (x, y), = to_pixels([self._badge_at(node)])
            return stamp((round(height - y), round(x) - sprite.shape[1]), sprite, ("badge", text))
        if kind == "leaf":
            node = self.nodes[key[1]]
            text = self.leaf_texts[node][key[2]]
            point = self._leaf_at(node)
        else:
            text, px_, py_, _w, _h = self._value_labels[key[1]][key[2]]
            point = (px_, py_)
        sprite = self._sprite_set([(kind, text)])[(kind, text)]
        (x, y), = to_pixels([point])
        return stamp((round(height - y - sprite.shape[0] / 2), round(x - sprite.shape[1] / 2)), sprite, (kind, text))

    def _wanted(self, current, done, ready) -> list[tuple[str, str]]:
        """The texts (kind, text) that the step's marks stamp and that are not rendered yet."""
        wanted = []
        for node in self.nodes:
            state = self.state_of(node, current, done, ready)
            if state != "waiting" and node in self._badges:
                wanted.append(("badge", state_word(state)))
            if node in self._leaves:
                wanted.append(("leaf", self.leaf_texts[node][state in ("done", "current")]))
        wanted += [("value", label[0]) for label in self._value_labels.get(current, [])]
        return [w for w in wanted if w not in self._sprites]

    def prepare(self, stop: Callable[[], bool] = lambda: False, chunk: int = PREPARED_AT_ONCE) -> None:
        """Render every text a step of this drawing may stamp, chunk texts a figure, until stop()
        says to stop: a click then renders none. Opening renders only what its first picture stamps;
        a live stepper calls this between clicks (stepper/windows.py), so the learner does not wait
        for it, and a click that needs a text meanwhile waits at most for one chunk."""
        if self._png is None or self.prepared:
            return
        wanted = [("badge", state_word(s)) for s in STATES if s != "waiting"] if self._badges else []
        wanted += [("leaf", text) for node in self._leaves for text in self.leaf_texts[node]]
        wanted += [("value", label[0]) for labels in self._value_labels.values() for label in labels]
        wanted = [w for w in dict.fromkeys(wanted) if w not in self._sprites]
        for start in range(0, len(wanted), chunk):
            if stop():
                return
            self._sprite_set(wanted[start:start + chunk])
        self.prepared = True

    def _sprite_set(self, wanted: list[tuple[str, str]]) -> dict:
        """The pixels of each (kind, text) wanted, rendered once each, all new ones in one figure:
        a badge's and a leaf's words on a transparent ground, a value on a white label."""
        new = [w for w in dict.fromkeys(wanted) if w not in self._sprites]
        if new:
            with RENDERING:
                self._render_sprites(new)
        return {w: self._sprites[w] for w in wanted}

    @figure_text
    def _render_sprites(self, new: list[tuple[str, str]]) -> None:
        """Render the new texts in one figure, each at whole pixels, and keep their pixels."""
        dpi = self._dpi
        line = self.small * 1.4 * dpi / 72
        heights = [int(line * (text.count("\n") + 1)) + 6 for _k, text in new]
        width = int(max(ems(text) for _k, text in new) * self.small * dpi / 72) + 24
        fig = Figure(figsize=(width / dpi, sum(heights) / dpi), dpi=dpi)
        fig.patch.set_alpha(0)
        placed, top = [], sum(heights)
        for (_kind, text), h in zip(new, heights, strict=True):
            top -= h
            # at whole pixels: a text's pixels are the same whichever others are drawn with it
            placed.append(fig.text(4, top + 3, text, fontsize=self.small, color=INK, ha="left", va="bottom",
                                   linespacing=1.1, transform=IdentityTransform()))
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba())
        renderer = canvas.get_renderer()
        total = pixels.shape[0]
        for key, text_artist in zip(new, placed, strict=True):
            box = text_artist.get_window_extent(renderer)
            r0, r1 = int(total - box.y1) - 1, int(total - box.y0) + 2
            c0, c1 = int(box.x0) - 1, int(box.x1) + 2
            sprite = pixels[max(r0, 0):r1, max(c0, 0):c1].copy()
            if key[0] == "value":
                sprite = _on_label(sprite)
            self._sprites[key] = sprite

    @figure_text  # under the lock, in the language's fonts: a thread may be building another figure
    def _render_blank(self, dpi: int) -> BandedPng:
        self.paint(None)
        self.boxes.set_facecolor(COLORS["waiting"])
        if self.states:
            self.boxes.set_edgecolor("none")  # each state's border is painted with its marks
        for text in [*self._badges.values(), *self._leaves.values()]:
            text.set_text("")  # type: ignore[attr-defined]
        self._dpi = dpi
        self.figure.set_dpi(dpi)
        canvas = FigureCanvasAgg(self.figure)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba()).copy()
        height = pixels.shape[0]
        to_pixels = self._ax.transData.transform
        rects = []
        for node in self.nodes:
            x, y = self._pos[node]
            (left, bottom), (right, top) = to_pixels([(x - 0.46, y - self.half), (x + 0.46, y + self.half)])
            rects.append((round(height - top), round(height - bottom), round(left), round(right)))
        self._rects = rects
        self._made: dict = {}
        self.paint(None)  # the figure as paint() leaves it
        return BandedPng(pixels)

    # --- geometry, for the tests -----------------------------------------------------------------
    def box_rects(self) -> list[tuple[float, float, float, float]]:
        """Each box as (left, bottom, right, top) in the axes' data units."""
        return [(x - 0.46, y - self.half, x + 0.46, y + self.half) for x, y in (self._pos[n] for n in self.nodes)]

    def value_labels(self, current: Node) -> list[tuple[str, float, float, float, float]]:
        """The values written when current is the current node: (text, x, y, width, height)."""
        return list(self._value_labels.get(current, []))


def half_gap(drawing: Drawing) -> float:
    """How far above a root's box its incoming arrow starts (rows)."""
    return drawing.half + drawing.gap * 0.8


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    (ax_, ay, aw, ah), (bx, by, bw, bh) = a, b
    dx = min(ax_ + aw / 2, bx + bw / 2) - max(ax_ - aw / 2, bx - bw / 2)
    dy = min(ay + ah / 2, by + bh / 2) - max(ay - ah / 2, by - bh / 2)
    return max(dx, 0.0) * max(dy, 0.0)


def _on_label(sprite: np.ndarray) -> np.ndarray:
    """A text sprite on a white label with a grey outline (as the static face's bbox)."""
    out = np.empty((sprite.shape[0] + 4, sprite.shape[1] + 4, 4), np.uint8)
    out[...] = (153, 153, 153, 255)
    out[1:-1, 1:-1] = (255, 255, 255, 255)
    alpha = sprite[..., 3:4].astype(np.float32) / 255
    inner = out[2:-2, 2:-2, :3].astype(np.float32)
    out[2:-2, 2:-2, :3] = np.rint(sprite[..., :3] * alpha + inner * (1 - alpha))
    return out


def _wrapped(text: str, width: int) -> list[str]:
    """text in lines of at most width columns, broken at spaces where it has them (a Chinese line
    anywhere between characters).

    >>> _wrapped("aa bb cc", 5)
    ['aa bb', 'cc']
    """
    lines, line = [], ""
    for word in text.split(" "):
        pieces = [word] if columns(word) <= width else list(word)
        for piece in pieces:
            joined = f"{line} {piece}" if line and piece is word else line + piece
            if line and columns(joined) > width:
                lines.append(line)
                line = piece
            else:
                line = joined
    return lines + [line] if line else lines


def _letter(n: int) -> str:
    """A, B, ..., Z, AA, AB, ...: the letters that join an edge's two ends across folded columns."""
    return (_letter(n // 26 - 1) if n >= 26 else "") + chr(ord("A") + n % 26)


def _widened(left: float, right: float, column: float, lines: list[str], legend: float = 0.0) -> tuple[float, float]:
    """The x range (in columns) that also holds the title and notes above the graph (a Chinese line is
    about twice as wide as its English) and the legend: wider on both sides, the columns kept."""
    needed = max([points(line) * TITLE / FONT / 72 + 0.3 for line in lines] + [legend])  # inches
    if needed <= max(column * (right - left), 3.2):
        return left, right
    extra = (needed - column * (right - left)) / column / 2
    return left - extra, right + extra


def draw(layout: Layout, current: Node | None = None, done=frozenset(), ready=frozenset(),
         limit: int = 36, title: str | None = None, stop_labels: dict | None = None,
         notes: tuple[str, ...] = (), trace=None) -> Figure:
    """Draw the graph (or the part of it around current) and return the Figure; with a step's
    nodes (current, done, ready) or a trace, with the stepper's marks."""
    states = current is not None or bool(done) or bool(ready) or trace is not None
    return Drawing(layout, layout.around(current, limit), title, stop_labels, notes, trace=trace,
                   states=states).paint(current, done, ready)
