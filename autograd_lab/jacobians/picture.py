"""The Jacobian as a picture: one coloured cell per entry (rows: elements of the output, columns:
elements of the input), zero white, so the pattern (a diagonal, a full block) shows at any size."""
from __future__ import annotations

from matplotlib.figure import Figure

from ..fonts import figure_text
from ..i18n import _


@figure_text
def picture(jac) -> Figure:
    rows, cols = jac.shape
    fig = Figure(figsize=(min(2.4 + cols * 0.35, 7), min(1.5 + rows * 0.35, 6)), layout="constrained")
    ax = fig.add_subplot()
    data = jac.matrix.detach().double().cpu().numpy()
    top = float(abs(data).max()) if data.size else 1.0
    image = ax.imshow(data, cmap="RdBu_r", vmin=-top or -1.0, vmax=top or 1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_xlabel(_("element of {x}").format(x=jac.in_label))
    ax.set_ylabel(_("element of {y}").format(y=jac.out_label))
    ax.set_title(f"d{jac.out_label}/d{jac.in_label}: {rows} x {cols}", fontsize=9)
    return fig
