"""Plain-text formatting shared by every layer: numbers with 4 decimals as PyTorch prints them,
tensors on one short line (big ones summarised), aligned tables, PyTorch's messages on one line.
Deterministic: the same values always give the same characters."""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch

import wcwidth

from .i18n import MESSAGE, _, quote
from .tensors import Summary

DECIMALS = 4


def number(v: float, decimals: int = DECIMALS) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{decimals}f}"
    return "0." + "0" * decimals if text == "-0." + "0" * decimals else text


def fmt(value: Any, limit: int = 8, decimals: int = DECIMALS) -> str:
    """A value as one short line: tensors like PyTorch prints them (4 decimals), big ones summarised.

    >>> fmt(torch.tensor([1/3, 2/3]))
    '[0.3333, 0.6667]'
    """
    if value is None:
        return "None"
    if hasattr(value, "__array__") and not isinstance(value, torch.Tensor):  # a numpy array
        value = torch.as_tensor(value)
    if isinstance(value, Summary):
        shape = "x".join(str(s) for s in value.shape)
        return f"<{shape} {_dtype(value.dtype)}, norm {number(value.norm, decimals)}>"
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.is_complex():
            return f"<{'x'.join(map(str, t.shape))} {_dtype(t.dtype)}>"
        if t.numel() > limit:
            shape = "x".join(str(s) for s in t.shape)
            norm = float(t.double().norm())
            return f"<{shape} {_dtype(t.dtype)}, norm {number(norm, decimals)}>"
        as_int = not (t.is_floating_point() or t.is_complex())
        return _nested(t.tolist(), decimals, as_int)
    if isinstance(value, float):
        return number(value, decimals)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(fmt(v, limit, decimals) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, torch.dtype):
        return _dtype(value)
    return str(value)


def _nested(values: Any, decimals: int, as_int: bool) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, decimals, as_int) for v in values) + "]"
    if as_int or isinstance(values, bool):
        return str(values)
    return number(float(values), decimals)


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def table(headers: list[str], rows: list[list[str]], marks: dict[int, str] | None = None) -> str:
    """An aligned plain-text table, by display width (a Chinese character takes two columns); marks
    puts a one-character marker before chosen rows.

    >>> print(table(["名称", "x"], [["梯度", "1"], ["grad", "22"]]))
    名称  x
    ----  --
    梯度  1
    grad  22
    """
    marks = marks or {}
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(width(r[i]) for r in cells) for i in range(len(headers))]
    gutter = "  " if marks else ""

    def line(row: list[str], mark: str = " ") -> str:
        text = "  ".join(ljust(c, w) for c, w in zip(row, widths, strict=True)).rstrip()
        return (mark + " " + text) if marks else text

    out = [line(cells[0])]
    out.append(gutter + "  ".join("-" * w for w in widths))
    for i, row in enumerate(cells[1:]):
        out.append(line(row, marks.get(i, " ")))
    return "\n".join(out)


def message(err: BaseException) -> str:
    """PyTorch's message up to its hint, on one line (the tail changes between versions), at most
    MESSAGE characters."""
    try:
        text = " ".join(str(err).split())
    except Exception:  # an exception whose __str__ raises is named by its type
        text = type(err).__name__
    return quote(text.split(" Hint:")[0].strip(), MESSAGE)


def width(text: str) -> int:
    """How many columns text takes in a terminal or a monospace font: a Chinese character takes two.

    >>> width("x.grad"), width("梯度")
    (6, 4)
    """
    w = wcwidth.wcswidth(text)
    return len(text) if w < 0 else w


def ljust(text: str, columns: int) -> str:
    """text padded with spaces to columns by display width (``str.ljust`` counts characters)."""
    return text + " " * max(0, columns - width(text))


def listed(items: Iterable[object]) -> str:
    """Items one after the other, as the learner's language separates them in a list.

    >>> listed(["a", "b", 3])
    'a, b, 3'
    """
    # Translators: the separator between the items of a list ("a, b, c"; "x: yes, y: no")
    return _(", ").join(map(str, items))

