"""The memory picture: storage blocks S0, S1, ... with their values, every tensor as a labelled window
onto its block (offset, shape, stride) with an arrow to where the window starts, version counters
drawn beside the tensors as badges (one colour per counter: a shared counter is one colour), and
what is in the graph filled in orange. Built on matplotlib.figure.Figure (never pyplot)."""
from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from .memory import SHOWN, Memory
from ..fonts import figure_text
from ..i18n import _
from ..names import label

IN_GRAPH = "#fdd9a8"
OUT_GRAPH = "#eeeeee"
COUNTERS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
            "#7f7f7f"]
LABEL_W, BADGE_X, BLOCK_X, CELL = 4.6, 4.9, 7.2, 0.95


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
    rows = len(mem.windows)
    cells = max(len(b.values) + (2 if b.size > len(b.values) else 0) for b in mem.blocks)
    width = max(BLOCK_X + CELL * (cells + 0.5), 12.5)
    fig = Figure(figsize=(width * 0.95, 0.62 * rows + 1.9))
    ax = fig.add_subplot()
    ax.set_xlim(-0.1, width)
    ax.set_ylim(-2.0, rows)
    ax.axis("off")
    ax.set_title(title or _("Memory of {name} and its copies").format(name=label(mem.windows[0].label)), loc="left",
                 fontsize=11)
    first_row: dict[str, int] = {}
    for i, w in enumerate(mem.windows):
        first_row.setdefault(w.block, i)
    for block in mem.blocks:
        _block(ax, block, rows - 1 - first_row[block.name])
    for i, w in enumerate(mem.windows):
        y = rows - 1 - i
        _window(ax, w, y)
        target_y = rows - 1 - first_row[w.block]
        cell = min(w.offset, SHOWN - 1)
        # from below, land on the cell's lower edge, so arrows to a shared block stay apart
        edge = target_y if target_y == y else target_y - 0.32
        ax.annotate("", xy=(BLOCK_X + CELL * (cell + 0.5) if target_y != y else BLOCK_X, edge),
                    xytext=(BADGE_X + 1.5, y), arrowprops=dict(
                        arrowstyle="->", color="#555555", lw=0.8,
                        connectionstyle="arc3,rad=0.0" if target_y == y else "arc3,rad=-0.15"))
    _legend(ax, mem)
    return fig


def _block(ax, block, y):
    ax.text(BLOCK_X - 0.1, y + 0.3, block.name, ha="right", va="bottom", fontsize=9, fontweight="bold")
    for j, value in enumerate(block.values):
        ax.add_patch(Rectangle((BLOCK_X + CELL * j, y - 0.3), CELL, 0.6, facecolor="white",
                               edgecolor="#333333", lw=1))
        ax.text(BLOCK_X + CELL * (j + 0.5), y, value, ha="center", va="center", fontsize=7)
    if block.size > len(block.values):
        ax.text(BLOCK_X + CELL * (len(block.values) + 0.2), y, _("... {size} in all").format(size=block.size),
                va="center", fontsize=7)


def _window(ax, w, y):
    ax.add_patch(FancyBboxPatch((0, y - 0.3), LABEL_W, 0.6, boxstyle="round,pad=0.02",
                                facecolor=IN_GRAPH if w.in_graph else OUT_GRAPH, edgecolor="#999999"))
    ax.text(0.1, y + 0.1, label(w.label), va="center", fontsize=9, family="monospace")
    ax.text(0.1, y - 0.17, _("offset {offset}, shape {shape}, stride {stride}").format(
        offset=w.offset, shape=list(w.shape), stride=list(w.stride)), va="center", fontsize=7, color="#444444")
    if w.counter is None:
        ax.text(BADGE_X, y, _("no counter"), va="center", fontsize=7, color="#777777")
        return
    color = COUNTERS[int(w.counter[1:]) % len(COUNTERS)]
    ax.text(BADGE_X, y, f"{w.counter} = {w.version}", va="center", fontsize=8, color="white",
            bbox=dict(boxstyle="round,pad=0.25", facecolor=color, edgecolor=color))


def _legend(ax, mem):
    ax.add_patch(Rectangle((0, -1.05), 0.4, 0.35, facecolor=IN_GRAPH, edgecolor="#999999"))
    ax.text(0.5, -0.87, _("in the graph: a gradient flows back through it"), va="center", fontsize=8)
    ax.text(BADGE_X, -0.87, _("V0 = n: version counter and its value; one colour = one shared counter"),
            va="center", fontsize=8)
    if mem.edited:
        after = (_("After {edit} (refused by PyTorch: {message})") if mem.refused
                 else _("After {edit} (applied)"))
        ax.text(0, -1.6, after.format(edit=mem.edited, message=mem.refused), va="center", fontsize=9,
                color="#b00000")
