"""The one rule for numbers a learner types, used by the exercises and by the stepper's predictions:
a number is right when it is within half a unit of the last decimal place written (for a typed
float, the last digit of its shortest repr; for text, as written) and gives at least three
significant digits, or when it is exact (2, or 2/3 in a formula). Within the digits written but
with fewer than three significant digits it is "close", and so is a number cut off at its last digit
instead of rounded (0.666 for 2/3: "round, do not cut"). A tensor's entries count with the digits
of their shortest repr in their own dtype, plus that dtype's rounding."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import torch

from ..i18n import N_

RIGHT, CLOSE, WRONG = "right", "close", "wrong"
#: why an answer is close: too few significant digits, or cut off instead of rounded
FEW_DIGITS, CUT = "too_few_digits", "cut"
#: what the stepper's prediction box says of a number cut off: the whole verdict, and the part after its word
CUT_VERDICT, CUT_REASON = N_("close: round, do not cut"), N_("round, do not cut")
MIN_DIGITS = 3
CUT_DIGITS = 2  # a number cut off at its last digit is told so when it has at least this many


@dataclass(frozen=True)
class Numbers:
    """Numbers as the learner gave them: values (float64), the half unit of the last decimal place
    written for each (0 when exact) and the significant digits written (a large count when exact)."""

    values: torch.Tensor
    half: torch.Tensor
    digits: torch.Tensor
    eps: float = 0.0  # rounding of the dtype the numbers were stored in
    note: str = ""  # "decimals": a formula written with rounded decimal constants
    variant: torch.Tensor | None = None  # a function's values on a second set of inputs

    @property
    def shape(self):
        return self.values.shape

    def __repr__(self) -> str:
        return f"Numbers({self.values.tolist()})"


EXACT = 10**6


class Written(float):
    """A number as a learner typed it into an answer box: its value as a float, and what was written,
    a Decimal (keeping the digits: 0.6670 claims four decimals) or an exact Fraction (1/3); its repr
    is the text typed.

    >>> Written(Decimal("0.6670"), "0.6670"), typed(Written(Fraction(1, 3), "1/3"))
    (0.6670, (0.3333333333333333, 0.0, 1000000))
    """

    written: Decimal | Fraction
    text: str

    def __new__(cls, written: Decimal | Fraction, text: str):
        self = super().__new__(cls, float(written))
        self.written, self.text = written, text
        return self

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _from_decimal(d: Decimal) -> tuple[float, float, int]:
    _, digits, exponent = d.as_tuple()
    exponent = int(exponent)
    written = "".join(map(str, digits)).lstrip("0")
    significant = len(written) or 1  # leading zeros do not count
    try:
        half = 0.5 * 10.0**exponent
    except OverflowError:  # beyond a float: reading says so before judging
        half = float("inf")
    return float(d), half, significant


def typed(v) -> tuple[float, float, int]:
    """(value, half unit of the last place written, significant digits) of one number.

    >>> typed(0.667)
    (0.667, 0.0005, 3)
    >>> typed(2)
    (2.0, 0.5, 1)
    """
    if isinstance(v, Written):
        v = v.written
    if isinstance(v, Fraction):
        return float(v), 0.0, EXACT  # 1/3 typed is exactly a third
    if isinstance(v, Decimal):
        return _from_decimal(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return _from_decimal(Decimal(v))
    if v != v or v in (float("inf"), float("-inf")):
        return float(v), 0.0, EXACT  # reading reports nan and inf in words
    return _from_decimal(Decimal(repr(float(v))))


def shortest(v: float, dtype: torch.dtype) -> Decimal:
    """The shortest decimal that reads back as v in dtype (what the learner most likely typed)."""
    import numpy as np

    np_type: type = {torch.float16: np.float16, torch.float32: np.float32}.get(dtype, np.float64)
    return Decimal(np.format_float_positional(np_type(v), unique=True, trim="0"))


def numbers(nested, eps: float = 0.0) -> Numbers:
    """Numbers from nested lists of Python numbers or Decimals (what read_numbers produces)."""
    flat: list = []

    def walk(x):
        if isinstance(x, (list, tuple)):
            return [walk(e) for e in x]
        flat.append(typed(x))
        return len(flat) - 1

    index = walk(nested)
    if any(f[1] == 0.0 and f[2] == EXACT for f in flat):
        # a fraction typed (1/3) is exact: it matches a value stored in float32 to that dtype's rounding
        eps = max(eps, float(torch.finfo(torch.float32).eps))
    values = torch.tensor(_shape_like(index, [f[0] for f in flat]), dtype=torch.float64)
    half = torch.tensor(_shape_like(index, [f[1] for f in flat]), dtype=torch.float64)
    digits = torch.tensor(_shape_like(index, [f[2] for f in flat]), dtype=torch.int64)
    return Numbers(values, half, digits, eps)


def _shape_like(index, flat):
    if isinstance(index, list):
        return [_shape_like(i, flat) for i in index]
    return flat[index]


def from_tensor(t: torch.Tensor) -> Numbers:
    """A tensor's entries with the digits of their shortest repr in its dtype."""
    t = t.detach().cpu()
    if not t.is_floating_point():
        return numbers(t.tolist())
    eps = float(torch.finfo(t.dtype).eps)
    if t.dtype == torch.float64:
        return numbers(t.tolist(), eps)
    values = t.float().tolist() if t.dtype == torch.bfloat16 else t.tolist()
    dtype = torch.float32 if t.dtype == torch.bfloat16 else t.dtype
    return numbers(_map(values, lambda v: shortest(v, dtype)), eps)


def _map(x, f):
    return [_map(e, f) for e in x] if isinstance(x, list) else f(x)


def exact(values: torch.Tensor) -> Numbers:
    """Numbers that are exact by construction (a formula or a function evaluated by the lab)."""
    v = values.detach().double()
    return Numbers(v, torch.zeros_like(v), torch.full(v.shape, EXACT, dtype=torch.int64))


def _entries(given: Numbers, truth: torch.Tensor):
    """(exact, within, enough, cut) entry by entry; cut: the true value cut off (not rounded) at the
    last decimal place written, with at least CUT_DIGITS significant digits."""
    t = truth.detach().double().cpu()
    slop = (max(given.eps, 2.3e-16) / 2) * t.abs() + 1e-300
    gap = (given.values - t).abs()
    exact = gap <= slop * 4
    within = gap <= given.half * (1 + 1e-9) + slop
    enough = given.digits >= MIN_DIGITS
    unit = 2 * given.half
    safe = torch.where(unit > 0, unit, torch.ones_like(unit))
    kept = torch.floor(t.abs() / safe * (1 + 1e-12) + 1e-9) * safe * torch.sign(t)
    cut = ((unit > 0) & (given.digits >= CUT_DIGITS) & (given.values * t >= 0)
           & ((given.values - kept).abs() <= safe * 1e-6 + slop) & ~within)
    return exact, within, enough, cut


def judge(given: Numbers, truth: torch.Tensor) -> str:
    """right, close or wrong, entry by entry (the worst entry decides).

    >>> judge(numbers([0.667]), torch.tensor([2 / 3], dtype=torch.double))
    'right'
    >>> third = torch.tensor([2 / 3], dtype=torch.double)
    >>> judge(numbers([0.67]), third), judge(numbers([0.666]), third)
    ('close', 'close')
    """
    if tuple(given.values.shape) != tuple(truth.shape):
        return WRONG
    exact, within, enough, cut = _entries(given, truth)
    if bool((exact | (within & enough)).all()):
        return RIGHT
    if bool((exact | within | cut).all()):
        return CLOSE
    return WRONG


def close_reason(given: Numbers, truth: torch.Tensor) -> str:
    """Why a close answer is close: CUT when an entry is cut off instead of rounded, else FEW_DIGITS.

    >>> close_reason(numbers([0.666, 1.33]), torch.tensor([2 / 3, 4 / 3], dtype=torch.double))
    'cut'
    """
    if tuple(given.values.shape) != tuple(truth.shape):
        return FEW_DIGITS
    return CUT if bool(_entries(given, truth)[3].any()) else FEW_DIGITS


def within(given: Numbers, value: torch.Tensor) -> bool:
    """The learner's numbers agree with value to the digits they wrote (a known mistake matches)."""
    return judge(given, value) != WRONG
