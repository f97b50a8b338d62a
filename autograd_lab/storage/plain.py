"""Plain strings for the storage report's own repr: values with 4 decimals as PyTorch prints them,
PyTorch's messages cut to their first sentence, and an aligned table. (The model layer may not use
the rendering helpers in autograd_lab.text, so the few lines it needs live here.)"""
from __future__ import annotations

import math

import torch

LIMIT = 8


def value(v) -> str:
    """A tensor or array as one short line.

    >>> value(torch.tensor([2., 4.]))
    '[2.0000, 4.0000]'
    """
    if v is None:
        return "None"
    t = torch.as_tensor(v).detach().cpu()
    if t.is_complex():
        return f"<{_shape(t)} {_dtype(t)}>"
    if t.numel() > LIMIT:
        return f"<{_shape(t)} {_dtype(t)}, norm {_number(float(t.double().norm()))}>"
    return _nested(t.double().tolist())


def _nested(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return _number(values)


def _number(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.4f}"
    return "0.0000" if text == "-0.0000" else text


def _shape(t) -> str:
    return "x".join(str(s) for s in t.shape) or "scalar"


def _dtype(t) -> str:
    return str(t.dtype).replace("torch.", "")


def yes_no(flag) -> str:
    """True/False/None as the table shows them (None: the question does not apply)."""
    return "-" if flag is None else ("yes" if flag else "no")


def message(err: BaseException) -> str:
    """PyTorch's message up to its hint, on one line (the tail changes between versions)."""
    text = " ".join(str(err).split())
    return text.split(" Hint:")[0].strip()


def table(headers: list[str], rows: list[list[str]]) -> str:
    """An aligned plain-text table."""
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row):
        return "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])
