"""The words inside the graph figure: a node's name wrapped between its CamelCase words, the
learner's name under it, the module it belongs to, how wide a line is at the figure's font, the
words at a node's stops, the values written on edges and in a leaf's box, and the states' words."""
from __future__ import annotations

import re
from functools import lru_cache

from matplotlib.textpath import TextPath

import torch

from ..format import fmt, width as columns
from ..graph import Node
from ..i18n import N_, _
from ..names import label

# Node names in points. PNGs are made at 80 dpi and shown one pixel per CSS pixel, so 13 points are
# 14.4 px: as large as the body text of JupyterLab and Notebook 7 (14 px).
FONT = 13.0
WRAP = 16  # characters per line of a node's name; lines break between the words of its CamelCase
STOPS_DRAWN = 3  # stops drawn per node; the last one counts the rest
NUMBERS = 4  # a value of up to this many numbers is written as numbers; a bigger one as shape and norm
VALUE_LINE = 28  # columns of a value's line on the figure: a longer value breaks after a comma, once
EMPTY = "____"  # what has not arrived yet: the lab's blank, as in the exercises
# A state's word, written in its box (the border tells the state too, and the colour)
STATE_WORDS = {"done": N_("done"), "current": N_("now"), "ready": N_("ready"), "waiting": N_("waiting")}
STATE_SYMBOLS = {"done": "\u2713 ", "current": "\u25b6 ", "ready": "\u25cb ", "waiting": ""}


def node_lines(node: Node, group: str | None = None) -> list[str]:
    """The lines written in a node's box: its name, wrapped between words, then the learner's name
    (each shortened when long: names.label), then the module it belongs to, when told."""
    return (wrap_name(label(node.name)) + ([label(node.label)] if node.label else [])
            + ([_("in {module}").format(module=label(group))] if group else []))


def state_word(state: str) -> str:
    """The word in a box of that state, after its symbol ('done' with a check mark)."""
    return STATE_SYMBOLS[state] + _(STATE_WORDS[state])


def value_text(value) -> str:
    """A gradient as the figure writes it: up to NUMBERS numbers as numbers (4 decimals, as the
    panel), a bigger tensor as its shape and norm (format.fmt, tensors.Summary); in at most two
    lines.

    >>> value_text(torch.tensor([1 / 3, 2 / 3]))
    '[0.3333, 0.6667]'
    >>> value_text(torch.ones(2, 3))
    '<2x3 float32, norm 2.4495>'
    >>> print(value_text(torch.tensor([-1 / 3, 1 / 3, -2.0, 2.0])))
    [-0.3333, 0.3333,
     -2.0000, 2.0000]
    """
    if isinstance(value, torch.Tensor) and (value.layout != torch.strided or value.device.type == "meta"):
        text = "<{shape} {dtype}>".format(shape="x".join(map(str, value.shape)) or "1",
                                          dtype=str(value.dtype).replace("torch.", ""))
    else:
        text = fmt(value, limit=NUMBERS)
    if columns(text) <= VALUE_LINE or ", " not in text:
        return text
    cuts = [m.end() for m in re.finditer(", ", text)]
    cut = min(cuts, key=lambda at: abs(at - len(text) / 2))
    return text[:cut].rstrip() + "\n " + text[cut:]


def leaf_line(before, after, arrived: bool) -> str:
    """What a leaf's box says of its .grad: before -> after, the blank until the gradient arrives."""
    return ".grad " + value_text(before).replace("\n", "") + " \u2192 " + (
        value_text(after).replace("\n", "") if arrived else EMPTY)


# advance widths of DejaVu Sans, in ems, for the characters values are written with
_ADVANCE = dict.fromkeys("0123456789", 0.636) | dict.fromkeys(".,: ", 0.318) | dict.fromkeys("[]()", 0.39) | {
    "-": 0.361, "<": 0.838, ">": 0.838, "_": 0.5, "e": 0.615, "x": 0.592, "\u2192": 0.838}


def ems(text: str) -> float:
    """Width of the widest line of text in ems of its font, from the glyphs' advances (no rendering;
    an unknown letter counts 0.7, a wide character 1.0). An estimate on the wide side, to place the
    values' labels apart.

    >>> round(ems("[0.5]"), 2)
    2.37
    """
    return max(sum(_ADVANCE.get(c, 1.0 if columns(c) > 1 else 0.7) for c in line) for line in text.split("\n"))


def wrap_name(name: str, width: int = WRAP) -> list[str]:
    """A node name in lines of at most width characters, broken only between its CamelCase words
    (a single longer word keeps its own line).

    >>> wrap_name("BinaryCrossEntropyWithLogitsBackward0")
    ['BinaryCross', 'EntropyWith', 'LogitsBackward0']
    >>> wrap_name("AccumulateGrad")
    ['AccumulateGrad']
    """
    lines: list[str] = []
    for word in re.findall(r"[A-Z]?[^A-Z]+|[A-Z]+(?![^A-Z])", name) or [name]:
        if lines and len(lines[-1]) + len(word) <= width:
            lines[-1] += word
        else:
            lines.append(word)
    return lines


@lru_cache(maxsize=4096)
def points(line: str) -> float:
    """Width of a line of text at FONT points, in points (from the glyphs' outlines; no rendering).
    Cached: the same op names come back in every window, and outlining one costs milliseconds."""
    return TextPath((0, 0), line, size=FONT).get_extents().width




def stop_words(node: Node, labels: dict) -> list[str]:
    """What is written at each of a node's stops: at most STOPS_DRAWN, the last one counting the rest."""
    positions = node.stops
    plain = _("stop")
    words = [labels.get((node, p), plain) for p in positions[:STOPS_DRAWN]]
    if len(positions) > STOPS_DRAWN:
        words[-1] = _("and {count} more stops").format(count=len(positions) - STOPS_DRAWN + 1)
    return words


def clip(text: str, width: int) -> str:
    """text cut to width columns, ending in '...' when cut (a Chinese character takes two columns).

    >>> clip("abcdefgh", 6), clip("梯度梯度梯度", 8)
    ('abc...', '梯度...')
    """
    if columns(text) <= width:
        return text
    kept = ""
    for char in text:
        if columns(kept + char) > width - 3:
            break
        kept += char
    return kept + "..."
