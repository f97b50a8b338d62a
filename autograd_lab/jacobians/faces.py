"""The text and HTML faces of a Jacobian: the whole matrix up to 12 x 12, a corner and a summary
beyond, its shape read as one row per output element and one column per input element, and v @ J
beside what backward(v) accumulates."""
from __future__ import annotations

import torch

from ..format import fmt, ljust, number, numbers, quote, table, width
from ..i18n import _, ngettext
from ..text import esc, html_table, pre

READABLE = 12  # rows and columns shown whole
CORNER = 6  # rows and columns shown of a bigger matrix
HOOKS_TOLD = 5  # the learner's hooks named, each with how often it ran; more are counted


def text(jac) -> str:
    lines = [heading(jac), _("computed with {how}; nothing was written to any {grad}").format(how=jac.how,
                                                                                               grad=".grad")]
    lines.extend(hooks(jac))
    lines.append(table(*_grid(jac)))
    lines.extend(facts(jac))
    return "\n".join(lines)


def html(jac) -> str:
    headers, rows = _grid(jac)
    how = _("computed with {how}; nothing was written to any {grad}").format(how=esc(jac.how),
                                                                             grad="<code>.grad</code>")
    told = "".join(f"<br>{esc(line)}" for line in hooks(jac))
    parts = [f"<p><b>{esc(heading(jac))}</b><br>{how}{told}</p>", html_table(headers, rows)]
    parts.append(pre("\n".join(facts(jac))))
    return '<div class="agl-jacobian">' + "".join(parts) + "</div>"


def heading(jac) -> str:
    rows, cols = jac.shape
    return _("Jacobian d{y}/d{x}: {rows} x {cols}, one row per element of {y} (shape {y_shape}), "
             "one column per element of {x} (shape {x_shape})").format(
                 y=jac.out_label, x=jac.in_label, rows=rows, cols=cols, y_shape=_shape(jac.out_shape),
                 x_shape=_shape(jac.in_shape))


def hooks(jac) -> list[str]:
    """The learner's hooks that ran while J was computed, each with how often (at most HOOKS_TOLD
    by name, the rest counted)."""
    rows = jac.shape[0]
    out = []
    for what, in_rows, in_v in jac.hooks[:HOOKS_TOLD]:
        hook = quote(what, 120)
        runs = in_rows + in_v
        if in_rows == rows and in_v == 0:
            out.append(ngettext("{hook} ran {n} time, once per row of J: J is what autograd computes with it",
                                "{hook} ran {n} times, once per row of J: J is what autograd computes with it",
                                runs).format(hook=hook, n=runs))
        elif in_rows == rows and in_v == 1:
            out.append(ngettext("{hook} ran {n} time, once per row of J and once for backward(v): J and "
                                "backward(v) are what autograd computes with it",
                                "{hook} ran {n} times, once per row of J and once for backward(v): J and "
                                "backward(v) are what autograd computes with it", runs).format(hook=hook, n=runs))
        else:
            out.append(ngettext("{hook} ran {n} time: {rows_runs} while the {rows} rows of J were computed, "
                                "{v_runs} for backward(v); J is what autograd computes with it",
                                "{hook} ran {n} times: {rows_runs} while the {rows} rows of J were computed, "
                                "{v_runs} for backward(v); J is what autograd computes with it", runs).format(
                                    hook=hook, n=runs, rows_runs=in_rows, rows=rows, v_runs=in_v))
    more = len(jac.hooks) - HOOKS_TOLD
    if more > 0:
        out.append(ngettext("and {n} more hook of yours ran", "and {n} more hooks of yours ran", more).format(n=more))
    return out


def facts(jac) -> list[str]:
    rows, cols = jac.shape
    out = []
    if rows > READABLE or cols > READABLE:
        out.append(_("shown: the top-left {rows} x {cols} corner; the whole matrix is .matrix ({count} numbers, "
                     "norm {norm})").format(rows=min(rows, CORNER), cols=min(cols, CORNER), count=rows * cols,
                                            norm=number(float(jac.matrix.double().norm()))))
    if jac.is_diagonal and rows > 1:
        out.append(_("diagonal: {y}[i] depends on {x}[i] alone (an element-wise operation); the diagonal is "
                     "{diagonal}").format(y=jac.out_label, x=jac.in_label, diagonal=fmt(jac.matrix.diagonal())))
    else:
        out.append(_("non-zero entries: {nonzero} of {count}").format(nonzero=jac.nonzero, count=rows * cols))
    if jac.v is not None:
        same = torch.allclose(jac.vjp.double(), jac.backward_grad.double(), rtol=1e-5, atol=1e-6)
        engine = (_("{y}.backward(v) adds into {x}.grad") if jac.in_is_leaf
                  else _("{y}.backward(v) sends to {x}")).format(y=jac.out_label, x=jac.in_label)
        columns = width(engine)
        out.append(f"{ljust('v', columns)} = {fmt(jac.v)}")
        out.append(f"{ljust('v @ J', columns)} = {fmt(jac.vjp)}")
        out.append(f"{engine} = {fmt(jac.backward_grad)}")
        out.append(_("the same: backward(v) computes v @ J without building J") if same
                   else _("they differ"))
    return out


def _grid(jac):
    rows, cols = jac.shape
    show_r = rows if rows <= READABLE else CORNER
    show_c = cols if cols <= READABLE else CORNER
    # the shown part as torch prints one tensor: the same notation for all of its numbers
    flat = numbers([float(v) for v in jac.matrix[:show_r, :show_c].double().reshape(-1).tolist()])
    cells = [flat[i * show_c:(i + 1) * show_c] for i in range(show_r)]
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
