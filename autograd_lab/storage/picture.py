"""The memory picture: storage blocks S0, S1, ... with their values, every tensor as a row (its name,
offset, shape and stride, its version counter as a badge, the storage it looks onto in words) with
an arrow from the row's edge to where its window starts. Each state carries a mark that survives
greyscale beside its colour: an arrow into the subject's storage is solid and one into a storage of
its own dashed, and says so in the row; a row in the graph is filled and has a thick border; a
version counter's badge names it. A legend under the rows says what each mark means.

Text is body-sized: at least BODY_PT points, which is 11 px at the 80 dpi the lab draws at, and the
picture is shown at its own size (the static face scrolls a wide picture sideways). Arrows into a
block on another row run right in a lane of their own between the rows and the blocks, then along
that lane to the block, so they cross no block and no row. Built on matplotlib.figure.Figure
(never pyplot); its layout is computed here from character counts, never from the fonts' metrics."""
from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.path import Path

from .memory import SHOWN, Memory, Window
from ..contrast import text_on
from ..fonts import figure_text
from ..format import quote, width
from ..i18n import _
from ..names import label

BODY_PT = 10  # every text's size, in points (11.1 px at 80 dpi)
TITLE_PT = 12
IN_GRAPH = "#fdd9a8"
OUT_GRAPH = "#f2f2f2"
GRAPH_EDGE, GRAPH_LW = "#8a4b00", 2.6  # a row in the graph: a thick dark border
PLAIN_EDGE, PLAIN_LW = "#8c8c8c", 0.9
ARROW = "#333333"
SHARED, OWN = "solid", (0, (4, 3))  # the line of an arrow into the subject's storage, into one of its own
REFUSED = "#b00000"
COUNTERS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
            "#7f7f7f"]
X_IN, Y_IN = 0.72, 0.78  # inches per unit across and per row
EM = BODY_PT / 72 / X_IN  # one em of body text, in units across
CHAR = 0.6 * EM  # the width of a column of text (a Chinese character takes two), a little generously
BOX_H, CELL_H = 0.76, 0.6  # the height of a row's box and of a block's cell, in rows
LANE = 0.28  # the distance between two lanes, in units
LEGEND_ROWS = 2.3  # rows under the tensors for the legend
EDIT_ROWS = 1.1  # and for what the edit did, when there was one
WRAP = 3  # lines of the edit's outcome at most


def _wide(text: str, mono: bool = False) -> float:
    """The width of a line of body text, in units across."""
    return width(text) * (0.6 * EM if mono else CHAR)


def storage_word(w: Window, first: Window) -> str:
    """What storage a row looks onto, in words (the mark its arrow's line style repeats)."""
    if w is first:
        return _("storage {block}").format(block=w.block)
    if w.block == first.block:
        return _("shares {block} with {name}").format(block=w.block, name=label(first.label))
    return _("own storage {block}").format(block=w.block)


def _badge(w: Window) -> str:
    return _("no counter") if w.counter is None else f"{w.counter} = {w.version}"


def _geometry(w: Window) -> str:
    return _("offset {offset}, shape {shape}, stride {stride}").format(
        offset=w.offset, shape=list(w.shape), stride=list(w.stride))


@figure_text
def picture(mem: Memory, title: str | None = None) -> Figure:
    """Draw a Memory as a Figure.

    >>> import torch
    >>> from autograd_lab.storage.experiments import build_report as compare_storage
    >>> from autograd_lab.storage.memory import memory
    >>> x = torch.tensor([1., 2.])
    >>> picture(memory(x, compare_storage(x, name="x"))).axes[0].get_title(loc="left")
    'Memory of x and its copies'
    """
    windows, first = mem.windows, mem.windows[0]
    rows = len(windows)
    left = max(max(_wide(label(w.label), mono=True), _wide(_geometry(w))) for w in windows)
    right = max(max(_wide(_badge(w)) + 0.3, _wide(storage_word(w, first))) for w in windows)
    row_w = 0.15 + left + 0.45 + right + 0.15
    badge_x = 0.15 + left + 0.45
    first_row: dict[str, int] = {}
    for i, w in enumerate(windows):
        first_row.setdefault(w.block, i)
    routes = _routes(mem, first_row)
    lanes = max((lane for lane, _ in routes.values()), default=-1) + 1
    block_x = row_w + 0.5 + LANE * lanes + 0.3
    longest = max((width(v) for b in mem.blocks for v in b.values), default=1)
    cell = max(1.0, longest * CHAR + 0.3)
    cells = max(len(b.values) for b in mem.blocks)
    more = max((_wide(_("... {size} in all").format(size=b.size)) + 0.3 for b in mem.blocks
                if b.size > len(b.values)), default=0.0)
    legend = _legend_width(mem)
    span = max(block_x + cell * cells + more, legend) + 0.2
    below = LEGEND_ROWS + (EDIT_ROWS if mem.edited else 0.0)
    height = rows + below
    fig = Figure(figsize=(span * X_IN, height * Y_IN + 0.5))
    ax = fig.add_axes((0.0, 0.0, 1.0, height * Y_IN / (height * Y_IN + 0.5)))
    ax.set_xlim(-0.1, span - 0.1)
    ax.set_ylim(-below + 0.5, rows - 0.5)
    ax.axis("off")
    ax.set_title(title or _("Memory of {name} and its copies").format(name=label(first.label)), loc="left",
                 fontsize=TITLE_PT, pad=6, x=0.01)
    for block in mem.blocks:
        _block(ax, block, rows - 1 - first_row[block.name], block_x, cell)
    joined: dict[int, float] = {}  # lane -> the row whose arrow runs along it farthest
    for i, w in reversed(list(enumerate(windows))):
        y = rows - 1 - i
        _row(ax, w, first, y, row_w, badge_x)
        lane, end = routes[i]
        shared = w.block == first.block
        target_y = rows - 1 - first_row[w.block]
        path = _path(y, target_y, row_w, block_x, cell, lane, end)
        ax.add_patch(_arrow(path, shared, gid="row arrow"))
        if lane >= 0 and y != target_y and joined.get(lane, y) != y:  # a dot: joins a lane, not a crossing
            ax.plot([row_w + 0.5 + LANE * lane], [y], marker="o", markersize=4.5, color=ARROW)
        joined.setdefault(lane, y)
    _legend(ax, mem, first, span)
    return fig


def _routes(mem: Memory, first_row: dict) -> dict[int, tuple[int, int | None]]:
    """For each row: its lane (-1: a straight arrow along the row) and the cell its arrow lands on
    from below (None: the block's left edge, where a window at offset 0 starts). Rows that land on
    the same place share a lane, so their arrows join into one; the lane of a longer run is further
    right, so no arrow crosses another."""
    blocks = {b.name: b for b in mem.blocks}
    ends = {}
    for i, w in enumerate(mem.windows):
        drawn = len(blocks[w.block].values)
        ends[i] = min(w.offset, SHOWN - 1, drawn - 1) if w.offset and drawn else None
    reach: dict[tuple, int] = {}  # (block, cell) -> the farthest row that goes there by a lane
    for i, w in enumerate(mem.windows):
        if i != first_row[w.block] or ends[i] is not None:
            key = (w.block, ends[i])
            reach[key] = max(reach.get(key, i), i)
    order = sorted(reach, key=lambda k: (reach[k] - first_row[k[0]], reach[k]))
    lane_of = {key: n for n, key in enumerate(order)}
    return {i: (lane_of.get((w.block, ends[i]), -1), ends[i]) for i, w in enumerate(mem.windows)}


def _path(y: float, target_y: float, row_w: float, block_x: float, cell: float, lane: int,
          end: int | None) -> Path:
    """The arrow's way, from the middle of its row's right edge to where its window starts."""
    if lane < 0:
        return Path([(row_w, y), (block_x, y)])
    x = row_w + 0.5 + LANE * lane
    if end is None:
        return Path([(row_w, y), (x, y), (x, target_y), (block_x, target_y)])
    below = target_y - CELL_H / 2 - 0.12 - 0.05 * lane  # the gap under the block
    at = block_x + cell * (end + 0.5)
    return Path([(row_w, y), (x, y), (x, below), (at, below), (at, target_y - CELL_H / 2)])


def _arrow(path: Path, shared: bool, gid: str = "legend") -> FancyArrowPatch:
    return FancyArrowPatch(path=path, arrowstyle="-|>", mutation_scale=14, color=ARROW, lw=1.3,
                           linestyle=SHARED if shared else OWN, joinstyle="miter", capstyle="butt", gid=gid)


def _block(ax, block, y, x0, cell):
    ax.text(x0, y + CELL_H / 2 + 0.06, block.name, ha="left", va="bottom", fontsize=BODY_PT, fontweight="bold")
    for j, value in enumerate(block.values):
        ax.add_patch(Rectangle((x0 + cell * j, y - CELL_H / 2), cell, CELL_H, facecolor="white",
                               edgecolor="#333333", lw=1))
        ax.text(x0 + cell * (j + 0.5), y, value, ha="center", va="center", fontsize=BODY_PT)
    if block.size > len(block.values):
        ax.text(x0 + cell * len(block.values) + 0.2, y, _("... {size} in all").format(size=block.size),
                va="center", fontsize=BODY_PT)


def _row(ax, w, first, y, row_w, badge_x):
    ax.add_patch(FancyBboxPatch((0, y - BOX_H / 2), row_w, BOX_H, boxstyle="round,pad=0,rounding_size=0.08",
                                facecolor=IN_GRAPH if w.in_graph else OUT_GRAPH,
                                edgecolor=GRAPH_EDGE if w.in_graph else PLAIN_EDGE,
                                lw=GRAPH_LW if w.in_graph else PLAIN_LW, gid="row"))
    ax.text(0.15, y + 0.17, label(w.label), va="center", fontsize=BODY_PT, family="monospace")
    ax.text(0.15, y - 0.17, _geometry(w), va="center", fontsize=BODY_PT, color="#333333")
    ax.text(badge_x, y - 0.17, storage_word(w, first), va="center", fontsize=BODY_PT, color="#333333")
    if w.counter is None:
        ax.text(badge_x, y + 0.17, _("no counter"), va="center", fontsize=BODY_PT, color="#555555")
        return
    _counter(ax, badge_x + 0.1, y + 0.17, w.counter, w.version)


def _counter(ax, x, y, counter, version):
    color = COUNTERS[int(counter[1:]) % len(COUNTERS)]
    ax.text(x, y, f"{counter} = {version}", va="center", fontsize=BODY_PT, color=text_on(_rgb(color)),
            bbox=dict(boxstyle="round,pad=0.25", facecolor=color, edgecolor=color))


def _rgb(color: str) -> tuple[float, float, float]:
    return tuple(int(color[k:k + 2], 16) / 255 for k in (1, 3, 5))  # type: ignore[return-value]


def _legend_words(mem: Memory, first: Window) -> list[str]:
    name = label(first.label)
    return [_("in the graph: a gradient flows back through it"),
            _("V0 = n: version counter and its value; one colour = one shared counter"),
            _("solid: looks onto the storage of {name}").format(name=name),
            _("dashed: a storage of its own (a copy)")]


def _legend_width(mem: Memory) -> float:
    graph, counter, solid, dashed = _legend_words(mem, mem.windows[0])
    return 1.0 + max(_wide(graph), _wide(solid)) + 0.8 + 1.0 + max(_wide(counter), _wide(dashed))


def _wrap(text: str, columns: int) -> list[str]:
    """text in lines of at most columns (by display width: a Chinese character takes two), broken at
    spaces (so the lines joined by spaces give the text back), a word wider than a line cut; at most
    WRAP lines, the middle of a longer text left out (format.quote).

    >>> _wrap("one two three four", 9)
    ['one two', 'three', 'four']
    """
    text = quote(text, columns * WRAP // 2) if width(text) > columns * WRAP else text
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        while width(word) > columns:
            if line:
                lines.append(line)
                line = ""
            cut = max(k for k in range(1, len(word) + 1) if width(word[:k]) <= columns)
            lines.append(word[:cut])
            word = word[cut:]
        if line and width(line) + 1 + width(word) > columns:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return lines[:WRAP]


def _legend(ax, mem, first, span):
    graph, counter, solid, dashed = _legend_words(mem, first)
    second = 1.0 + max(_wide(graph), _wide(solid)) + 0.8
    y = -0.95
    ax.add_patch(FancyBboxPatch((0, y - 0.2), 0.8, 0.4, boxstyle="round,pad=0,rounding_size=0.06",
                                facecolor=IN_GRAPH, edgecolor=GRAPH_EDGE, lw=GRAPH_LW))
    ax.text(1.0, y, graph, va="center", fontsize=BODY_PT)
    ax.text(second, y, counter, va="center", fontsize=BODY_PT)
    y = -1.5
    ax.add_patch(_arrow(Path([(0, y), (0.8, y)]), shared=True))
    ax.text(1.0, y, solid, va="center", fontsize=BODY_PT)
    ax.add_patch(_arrow(Path([(second, y), (second + 0.8, y)]), shared=False))
    ax.text(second + 1.0, y, dashed, va="center", fontsize=BODY_PT)
    if mem.edited:
        after = (_("After {edit} (refused by PyTorch: {message})") if mem.refused
                 else _("After {edit} (applied)"))
        lines = _wrap(after.format(edit=mem.edited, message=mem.refused), max(40, int((span - 0.3) / CHAR)))
        ax.text(0, -2.0, "\n".join(lines), va="top", fontsize=BODY_PT, color=REFUSED, linespacing=1.2)
