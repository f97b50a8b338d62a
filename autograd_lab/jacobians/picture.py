"""The Jacobian as a picture: one coloured cell per entry (rows: elements of the output, columns:
elements of the input), zero white, so the pattern (a diagonal, a full block) shows at any size. A
matrix small enough to read (READABLE rows and columns, as the text face shows it whole) carries its
numbers in the cells, each in black or white, whichever contrasts more with its cell; the index ticks
are whole numbers, and a colour bar reads the colours."""
from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..contrast import text_on
from ..fonts import figure_text
from ..i18n import _
from .faces import READABLE

NUMBER_PT = 9  # the size of the numbers in the cells (10 px at the 80 dpi the lab draws at)
SMALLEST_PT = 7  # the numbers never shrink below this; they drop a digit first
WIDEST = 6.0  # inches: the widget shows the picture at most 480 px wide (6 in at 80 dpi)
TALLEST = 6.0
PLAIN_CELL = 0.35  # inches per cell without numbers
# inches around the cells: index ticks and label on the left, colour bar on the right, title, x label
AROUND_W, AROUND_H = 2.1, 1.1
DIGIT_EM = 0.64  # the width of a digit of DejaVu Sans, in ems (its widest number character)


def cell_text(v: float, digits: int = 3) -> str:
    """An entry as a cell shows it: a few significant digits, an exponent written short.

    >>> [cell_text(v) for v in (0.0, -0.0, 2.0, -0.26546, 1234.5, 1.5e-05, float("nan"))]
    ['0', '0', '2', '-0.265', '1.23e3', '1.5e-5', 'nan']
    """
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    text = f"{v:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def _layout(data, rows: int, cols: int) -> tuple[float, int, float] | None:
    """(inches per cell, significant digits, font size) for numbers in the cells, or None when the
    matrix is too big to read them."""
    if rows > READABLE or cols > READABLE or not data.size:
        return None
    room = min((WIDEST - AROUND_W) / cols, (TALLEST - AROUND_H) / rows)
    for digits in (3, 2):
        longest = max(len(cell_text(float(v), digits)) for v in data.flat)
        cell = longest * DIGIT_EM * NUMBER_PT / 72 + 0.12
        if cell <= room:
            return max(cell, 0.42), digits, float(NUMBER_PT)
    size = max(SMALLEST_PT, (room - 0.08) * 72 / (longest * DIGIT_EM))
    # past SMALLEST_PT the cells grow instead: wider than the widget, shown whole in the static face
    return max(room, longest * DIGIT_EM * size / 72 + 0.08), 2, min(float(NUMBER_PT), size)


@figure_text
def picture(jac) -> Figure:
    rows, cols = jac.shape
    data = jac.matrix.detach().double().cpu().numpy()
    finite = np.abs(data[np.isfinite(data)])
    top = float(finite.max()) if finite.size else 1.0
    numbers = _layout(data, rows, cols)
    cell = numbers[0] if numbers else PLAIN_CELL
    fig = Figure(figsize=(AROUND_W + cols * cell if numbers else min(AROUND_W + cols * cell, 7),
                         AROUND_H + rows * cell if numbers else min(AROUND_H + rows * cell, TALLEST)),
                 layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(data, cmap="RdBu_r", vmin=-top or -1.0, vmax=top or 1.0, interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label(_("d{y}[row] / d{x}[column]").format(y=jac.out_label, x=jac.in_label), fontsize=9)
    bar.ax.tick_params(labelsize=8)
    for axis, count in ((ax.xaxis, cols), (ax.yaxis, rows)):
        if count <= READABLE:
            axis.set_ticks(range(count))
        else:
            axis.set_major_locator(MaxNLocator(nbins=8, integer=True, min_n_ticks=2))
    ax.tick_params(labelsize=9)
    if numbers:
        digits, size = numbers[1:]
        for (i, j), v in zip(((i, j) for i in range(rows) for j in range(cols)), data.flat, strict=True):
            fill = (1.0, 1.0, 1.0) if v != v else tuple(image.cmap(image.norm(v)))  # nan: not drawn, the white page
            ax.text(j, i, cell_text(float(v), digits), ha="center", va="center", fontsize=size, color=text_on(fill))
    ax.set_xlabel(_("element of {x}").format(x=jac.in_label))
    ax.set_ylabel(_("element of {y}").format(y=jac.out_label))
    ax.set_title(f"d{jac.out_label}/d{jac.in_label}: {rows} x {cols}", fontsize=10)
    return fig
