"""The words inside the graph figure: a node's name wrapped between its CamelCase words, the
learner's name under it, how wide a line is at the figure's font, and the words at a node's stops."""
from __future__ import annotations

import re
from functools import lru_cache

from matplotlib.textpath import TextPath

from ..format import width as columns
from ..graph import Node
from ..i18n import _
from ..names import label

# Node names in points. PNGs are made at 80 dpi and shown one pixel per CSS pixel, so 13 points are
# 14.4 px: as large as the body text of JupyterLab and Notebook 7 (14 px).
FONT = 13.0
WRAP = 16  # characters per line of a node's name; lines break between the words of its CamelCase
STOPS_DRAWN = 3  # stops drawn per node; the last one counts the rest


def node_lines(node: Node) -> list[str]:
    """The lines written in a node's box: its name, wrapped between words, then the learner's name
    (each shortened when long: names.label)."""
    return wrap_name(label(node.name)) + ([label(node.label)] if node.label else [])


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
