"""The text and HTML faces of a Jacobian: the whole matrix up to 12 x 12, a corner and a summary
beyond, its shape read as one row per output element and one column per input element, and v @ J
beside what backward(v) accumulates."""
from __future__ import annotations

import torch

from ..format import fmt, number, table
from ..text import esc, html_table, pre

READABLE = 12  # rows and columns shown whole
CORNER = 6  # rows and columns shown of a bigger matrix


def text(jac) -> str:
    lines = [heading(jac), f"computed with {jac.how}; nothing was written to any .grad"]
    lines.append(table(*_grid(jac)))
    lines.extend(facts(jac))
    return "\n".join(lines)


def html(jac) -> str:
    headers, rows = _grid(jac)
    parts = [f"<p><b>{esc(heading(jac))}</b><br>computed with {esc(jac.how)}; nothing was written to "
             f"any <code>.grad</code></p>", html_table(headers, rows)]
    parts.append(pre("\n".join(facts(jac))))
    return '<div class="agl-jacobian">' + "".join(parts) + "</div>"


def heading(jac) -> str:
    rows, cols = jac.shape
    return (f"Jacobian d{jac.out_label}/d{jac.in_label}: {rows} x {cols}, one row per element of "
            f"{jac.out_label} (shape {_shape(jac.out_shape)}), one column per element of {jac.in_label} "
            f"(shape {_shape(jac.in_shape)})")


def facts(jac) -> list[str]:
    rows, cols = jac.shape
    out = []
    if rows > READABLE or cols > READABLE:
        out.append(f"shown: the top-left {min(rows, CORNER)} x {min(cols, CORNER)} corner; the whole "
                   f"matrix is .matrix ({rows * cols} numbers, norm {number(float(jac.matrix.double().norm()))})")
    if jac.is_diagonal and rows > 1:
        out.append(f"diagonal: {jac.out_label}[i] depends on {jac.in_label}[i] alone (an element-wise "
                   f"operation); the diagonal is {fmt(jac.matrix.diagonal())}")
    else:
        out.append(f"non-zero entries: {jac.nonzero} of {rows * cols}")
    if jac.v is not None:
        same = torch.allclose(jac.vjp.double(), jac.backward_grad.double(), rtol=1e-5, atol=1e-6)
        engine = (f"{jac.out_label}.backward(v) adds into {jac.in_label}.grad" if jac.in_is_leaf
                  else f"{jac.out_label}.backward(v) sends to {jac.in_label}")
        width = len(engine)
        out.append(f"{'v'.ljust(width)} = {fmt(jac.v)}")
        out.append(f"{'v @ J'.ljust(width)} = {fmt(jac.vjp)}")
        out.append(f"{engine} = {fmt(jac.backward_grad)}")
        out.append("the same: backward(v) computes v @ J without building J" if same
                   else "they differ")
    return out


def _grid(jac):
    rows, cols = jac.shape
    show_r = rows if rows <= READABLE else CORNER
    show_c = cols if cols <= READABLE else CORNER
    cells = [[number(float(v)) for v in jac.matrix[i, :show_c].tolist()] for i in range(show_r)]
    width = max((len(c) for row in cells for c in row), default=1)
    headers = [""] + [_index(jac.in_label, jac.in_shape, j) for j in range(show_c)]
    body = [[_index(jac.out_label, jac.out_shape, i)] + [c.rjust(width) for c in row]
            for i, row in enumerate(cells)]
    if show_c < cols:
        headers.append("...")
        for row in body:
            row.append("...")
    if show_r < rows:
        body.append(["..."] * len(headers))
    return headers, body


def _index(label: str, shape: tuple, flat: int) -> str:
    if not shape:
        return label
    idx = []
    for size in reversed(shape):
        idx.append(flat % size)
        flat //= size
    return f"{label}[{','.join(str(i) for i in reversed(idx))}]"


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
