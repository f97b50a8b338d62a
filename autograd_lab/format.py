"""Plain-text formatting shared by every layer: numbers as PyTorch prints them (its default 4 decimals),
tensors on one short line (big ones summarised), aligned tables, PyTorch's messages on one line.
Deterministic: the same values always give the same characters."""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import torch

import wcwidth

from .i18n import MESSAGE, _, quote
from .tensors import Summary

DECIMALS = 4


def number(v: float | complex, decimals: int = DECIMALS) -> str:
    """One number as PyTorch prints it alone, as a 0-d tensor (a float in the learner's values).

    >>> number(1 / 3), number(1.5e-06), number(6.0), number(3)
    ('0.3333', '1.5000e-06', '6.', '3')
    """
    if isinstance(v, (bool, int)):
        return str(v)
    if isinstance(v, complex):
        return complex_numbers([v], decimals)[0]
    return numbers([float(v)], decimals)[0]


def numbers(values: list[float], decimals: int = DECIMALS) -> list[str]:
    """Floats as PyTorch prints them together in one tensor, with its default print options (4
    decimals) whatever the learner set, and without its padding. The whole tensor switches to
    scientific notation when its nonzero finite values span more than a factor of 1000, or one is
    above 1e8 or below 1e-4; a tensor whose values are all whole numbers prints them as ``6.``.

    >>> numbers([1.5e-06, 6.0]), numbers([0.5, 2.0]), numbers([0.0, 6.0, float("nan")])
    (['1.5000e-06', '6.0000e+00'], ['0.5000', '2.0000'], ['0.', '6.', 'nan'])
    """
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if not finite:  # zeros, nan and inf only
        return [f"{v:.0f}" + ("." if math.isfinite(v) else "") for v in values]
    whole = all(v == math.ceil(v) for v in values if math.isfinite(v) and v != 0)
    low, high = min(finite), max(finite)
    if high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4:
        return [f"{v:.{decimals}e}" for v in values]
    if whole:
        return [f"{v:.0f}" + ("." if math.isfinite(v) else "") for v in values]
    return [f"{v:.{decimals}f}" for v in values]


def complex_numbers(values: list[complex], decimals: int = DECIMALS) -> list[str]:
    """Complex numbers as PyTorch prints them together: the real parts formatted as one tensor, the
    imaginary parts as another, joined as ``a+bj``.

    >>> complex_numbers([2 - 4j, 0.5j])
    ['2.-4.0000j', '0.+0.5000j']
    """
    reals = numbers([v.real for v in values], decimals)
    imags = numbers([v.imag for v in values], decimals)
    return [r + ("" if i[0] in "+-" else "+") + i + "j" for r, i in zip(reals, imags, strict=True)]


def fmt(value: Any, limit: int = 8, decimals: int = DECIMALS) -> str:
    """A value as one short line: tensors as PyTorch prints them (the same notation for the whole
    tensor, 4 decimals), big ones summarised.

    >>> fmt(torch.tensor([1/3, 2/3])), fmt(torch.tensor([1.5e-06, 6.0])), fmt(torch.tensor([1, 2]))
    ('[0.3333, 0.6667]', '[1.5000e-06, 6.0000e+00]', '[1, 2]')
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
        if t.numel() > limit:
            shape = "x".join(str(s) for s in t.shape)
            norm = float(t.double().norm()) if not t.is_complex() else float(t.abs().double().norm())
            return f"<{shape} {_dtype(t.dtype)}, norm {number(norm, decimals)}>"
        if t.is_complex():
            t = t.resolve_conj().resolve_neg()
            flat = complex_numbers([complex(v) for v in t.reshape(-1).tolist()], decimals)
        elif t.is_floating_point():
            flat = numbers([float(v) for v in t.reshape(-1).tolist()], decimals)
        else:  # integers and bools
            flat = [str(v) for v in t.reshape(-1).tolist()]
        return _nested(list(t.shape), iter(flat))
    if isinstance(value, (float, complex)):
        return number(value, decimals)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(fmt(v, limit, decimals) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, torch.dtype):
        return _dtype(value)
    return str(value)


def _nested(shape: list[int], flat: Iterator[str]) -> str:
    """The formatted values of a tensor of this shape, nested in brackets as its rows are."""
    if not shape:
        return next(flat)
    return "[" + ", ".join(_nested(shape[1:], flat) for _ in range(shape[0])) + "]"


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

