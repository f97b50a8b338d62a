"""Colour contrast as WCAG 2.1 measures it, for the lab's pictures: the relative luminance of an sRGB
colour, the contrast ratio of two colours (1 to 21), and the text colour (black or white) that reads
best on a given fill. Text needs 4.5:1, a mark that carries meaning 3:1."""
from __future__ import annotations

from collections.abc import Sequence

TEXT = 4.5  # the contrast text needs against what it is drawn on
MARK = 3.0  # the contrast a graphical mark that carries meaning needs


def _channel(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(rgb: Sequence[float]) -> float:
    """The relative luminance of an sRGB colour given as numbers from 0 to 1 (alpha ignored).

    >>> luminance((1, 1, 1)), luminance((0, 0, 0))
    (1.0, 0.0)
    """
    r, g, b = (_channel(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(first: float, second: float) -> float:
    """The contrast ratio of two relative luminances, the lighter over the darker (1 to 21).

    >>> round(ratio(1.0, 0.0), 1)
    21.0
    """
    light, dark = max(first, second), min(first, second)
    return (light + 0.05) / (dark + 0.05)


def contrast(first: Sequence[float], second: Sequence[float]) -> float:
    """The contrast ratio of two sRGB colours.

    >>> round(contrast((1, 1, 1), (0.5, 0.5, 0.5)), 2)
    3.98
    """
    return ratio(luminance(first), luminance(second))


def text_on(fill: Sequence[float]) -> str:
    """Black or white, whichever contrasts more with fill (at least 4.58:1 for any fill).

    >>> text_on((0.1, 0.2, 0.6)), text_on((1.0, 0.9, 0.7))
    ('white', 'black')
    """
    return "white" if contrast(fill, (1, 1, 1)) > contrast(fill, (0, 0, 0)) else "black"
