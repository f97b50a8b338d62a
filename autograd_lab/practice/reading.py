"""Reading a numeric answer in any reasonable form (numbers, lists, text as PyTorch prints it, a
numpy array, a tensor) into Numbers that keep the digits the learner wrote; an answer that cannot
be read raises WrongForm saying what to give instead."""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import torch

from ..format import quote
from ..i18n import N_, _
from .checking import WrongForm
from .digits import Numbers, Written, from_tensor, numbers, shortest
from .typed import Name, name_message, read_typed, too_large


def none_message(what: str) -> str:
    # Translators: {what} is the quantity asked for, such as x.grad or "The gradient"
    return _("Your answer is None. {what} is None when read from a tensor that is not a leaf "
             "(such as y or z), from a tensor created without requires_grad=True, or before "
             "backward() has run. Read .grad of the leaf itself, after calling backward().").format(what=what)


LIMIT = 10_000  # numbers read in one answer: an exercise's answer has a few
DEPTH = 16      # nested lists in one answer


def read_numbers(answer, what: str = N_("The gradient")) -> Numbers:
    """The answer as Numbers; raises WrongForm saying what is wrong with its form. `what` names the
    quantity (x.grad, or a phrase marked N_(), translated here). Text is read by the box's reader
    (typed.py), never run; every size is bounded before it is read.

    >>> read_numbers("[0.6670, 2]").half.tolist()
    [5e-05, 0.5]
    """
    what = _(what)
    if answer is None:
        raise WrongForm(none_message(what))
    if isinstance(answer, bool):
        raise WrongForm(_("Your answer is {answer}, a truth value; {what} is made of numbers.").format(
            answer=answer, what=what))
    if isinstance(answer, Name):
        raise WrongForm(name_message(answer, "ex.check({value})"))
    if isinstance(answer, str):
        value = read_typed(answer)
        if isinstance(value, str):
            raise _not_text_of_numbers()
        return _finite(numbers(_plain(value)))
    if callable(answer) and not isinstance(answer, torch.Tensor):
        raise WrongForm(_("Your answer is a function; this exercise asks for numbers (a list, a number or text)."))
    if isinstance(answer, torch.Tensor):
        return _finite(from_tensor(_checked(answer)))
    if _numpy(answer):
        return _finite(from_tensor(_checked(_from_numpy(answer))))
    try:
        return _finite(numbers(_plain(answer)))
    except WrongForm:
        raise
    except Exception:  # whatever the object does when read (its __float__ raising included)
        raise WrongForm(_("Cannot read a {type} as numbers: give a list of numbers, "
                          "a single number, or the text PyTorch printed.").format(
                              type=quote(type(answer).__name__, 60))) from None


def _not_text_of_numbers() -> WrongForm:
    return WrongForm(_("Cannot read this text as numbers: give a list of numbers, or the text PyTorch printed."))


def _numpy(value) -> bool:
    return type(value).__module__.split(".")[0] == "numpy"


def _checked(t: torch.Tensor) -> torch.Tensor:
    if t.numel() > LIMIT:
        raise _too_many(t.numel())
    if t.device.type != "cpu":
        raise WrongForm(_("Your tensor is on device '{device}', but the exercise's tensors live on "
                          "the CPU: pass answer.cpu().").format(device=t.device))
    if not t.is_floating_point():
        raise WrongForm(_("Your tensor has dtype {dtype}, but a gradient is always a floating-point tensor: "
                          "compute it with float tensors, or give a list of numbers.").format(
                              dtype=str(t.dtype).replace("torch.", "")))
    if t.layout != torch.strided:  # a sparse tensor: its numbers, read as a dense one
        try:
            return t.detach().to_dense()
        except (RuntimeError, NotImplementedError):
            raise WrongForm(_("Cannot read this {layout} tensor as numbers: give a list of numbers, or "
                              "answer.to_dense().").format(layout=str(t.layout).replace("torch.", ""))) from None
    return t.detach()


def _too_many(count: int) -> WrongForm:
    return WrongForm(_("Your answer holds {count} numbers; the lab reads at most {limit}, and the answer here has "
                       "far fewer: give just the numbers asked for.").format(count=count, limit=LIMIT))


def _from_numpy(a) -> torch.Tensor:
    import numpy as np

    a = np.asarray(a)  # a numpy scalar (np.float64(...)) as a 0-d array
    if a.size > LIMIT:
        raise _too_many(int(a.size))
    kind = a.dtype.kind
    if kind == "c":
        raise _complex()
    if kind not in "fiu":
        raise WrongForm(_("Your array has dtype {dtype}; give real numbers.").format(dtype=quote(a.dtype, 40)))
    return torch.from_numpy(a.astype("float64") if kind in "iu" else a.copy())


def _complex() -> WrongForm:
    return WrongForm(_("Your answer holds a complex number; a gradient here is made of real numbers."))


class _Count:
    n = 0


def _plain(value, depth: int = 0, seen: _Count | None = None):
    """Lists and tuples of numbers (or of 0-d tensors) as nested Python numbers, the digits typed kept;
    bounded in depth and count."""
    seen = seen or _Count()
    if depth > DEPTH:
        raise WrongForm(_("Your answer is nested more than {depth} levels deep; a gradient here has far fewer "
                          "dimensions.").format(depth=DEPTH))
    if isinstance(value, (list, tuple)):
        seen.n += len(value)
        if seen.n > LIMIT:
            raise _too_many(seen.n)
        return [_plain(v, depth + 1, seen) for v in value]
    if isinstance(value, torch.Tensor):
        t = _checked(value)
        seen.n += t.numel()
        if seen.n > LIMIT:
            raise _too_many(seen.n)
        if t.dtype == torch.float64:
            return t.tolist()
        dtype = torch.float32 if t.dtype == torch.bfloat16 else t.dtype
        return _map(t.float().tolist() if t.dtype == torch.bfloat16 else t.tolist(), lambda v: shortest(v, dtype))
    return _scalar(value)


def _scalar(value):
    """One number of an answer, the digits typed kept; a name, a word or a container is not one."""
    if isinstance(value, Name):
        raise WrongForm(name_message(value, "ex.check({value})"))
    if isinstance(value, (bool, str, bytes, bytearray, memoryview, set, frozenset, dict, range)) or value is None:
        raise TypeError(type(value).__name__)
    if isinstance(value, Written):
        return value
    if isinstance(value, complex):
        raise _complex()
    if _numpy(value):
        t = _from_numpy(value)
        return t.item() if t.dim() == 0 else t.tolist()
    if isinstance(value, int):
        if value.bit_length() > 1024:
            raise too_large(_("a whole number of {bits} bits").format(bits=value.bit_length()))
        return value
    if isinstance(value, Decimal):
        if value.is_finite() and value and value.adjusted() > 308:
            raise too_large(quote(value, 40))
        return value
    if isinstance(value, Fraction):
        return Written(value, quote(value, 40))
    return float(value)


def _map(x, f):
    return [_map(e, f) for e in x] if isinstance(x, list) else f(x)


def _finite(n: Numbers) -> Numbers:
    if torch.isnan(n.values).any():
        raise WrongForm(_("Your answer contains nan. A nan appears when something like 0/0, inf - inf "
                          "or the square root of a negative number was computed; no entry of this "
                          "gradient is undefined."))
    if torch.isinf(n.values).any():
        raise WrongForm(_("Your answer contains inf; every entry of this gradient is a finite number."))
    return n
