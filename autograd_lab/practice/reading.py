"""Reading a numeric answer in any reasonable form (numbers, lists, text as PyTorch prints it, a
numpy array, a tensor) into Numbers that keep the digits the learner wrote; an answer that cannot
be read raises WrongForm saying what to give instead."""
from __future__ import annotations

import re

import torch

from ..i18n import N_, _
from .checking import WrongForm
from .digits import Numbers, from_tensor, numbers, parse_text, shortest


def none_message(what: str) -> str:
    # Translators: {what} is the quantity asked for, such as x.grad or "The gradient"
    return _("Your answer is None. {what} is None when read from a tensor that is not a leaf "
             "(such as y or z), from a tensor created without requires_grad=True, or before "
             "backward() has run. Read .grad of the leaf itself, after calling backward().").format(what=what)


def read_numbers(answer, what: str = N_("The gradient")) -> Numbers:
    """The answer as Numbers; raises WrongForm saying what is wrong with its form. `what` names the
    quantity (x.grad, or a phrase marked N_(), translated here).

    >>> read_numbers("[0.6670, 2]").half.tolist()
    [5e-05, 0.5]
    """
    what = _(what)
    if answer is None:
        raise WrongForm(none_message(what))
    if isinstance(answer, bool):
        raise WrongForm(_("Your answer is {answer}, a truth value; {what} is made of numbers.").format(
            answer=answer, what=what))
    if isinstance(answer, str):
        return _finite(numbers(_parse_printed(answer)))
    if callable(answer) and not isinstance(answer, torch.Tensor):
        raise WrongForm(_("Your answer is a function; this exercise asks for numbers (a list, a number or text)."))
    if isinstance(answer, torch.Tensor):
        return _finite(from_tensor(_checked(answer)))
    if type(answer).__module__ == "numpy":
        return _finite(from_tensor(_checked(_from_numpy(answer))))
    try:
        return _finite(numbers(_plain(answer)))
    except (TypeError, ValueError, RuntimeError):
        raise WrongForm(_("Cannot read a {type} as numbers: give a list of numbers, "
                          "a single number, or the text PyTorch printed.").format(type=type(answer).__name__)) from None


def _checked(t: torch.Tensor) -> torch.Tensor:
    if t.device.type != "cpu":
        raise WrongForm(_("Your tensor is on device '{device}', but the exercise's tensors live on "
                          "the CPU: pass answer.cpu().").format(device=t.device))
    if not t.is_floating_point():
        raise WrongForm(_("Your tensor has dtype {dtype}, but a gradient is always a floating-point tensor: "
                          "compute it with float tensors, or give a list of numbers.").format(
                              dtype=str(t.dtype).replace("torch.", "")))
    return t.detach()


def _from_numpy(a) -> torch.Tensor:
    kind = getattr(getattr(a, "dtype", None), "kind", "f")
    if kind not in "fiu":
        raise WrongForm(_("Your array has dtype {dtype}; give real numbers.").format(dtype=a.dtype))
    return torch.from_numpy(a.astype("float64") if kind in "iu" else a.copy())


def _plain(value):
    """Lists and tuples of numbers (or of 0-d tensors) as nested Python numbers."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, torch.Tensor):
        t = _checked(value)
        if t.dtype == torch.float64:
            return t.tolist()
        dtype = torch.float32 if t.dtype == torch.bfloat16 else t.dtype
        return _map(t.float().tolist() if t.dtype == torch.bfloat16 else t.tolist(), lambda v: shortest(v, dtype))
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise TypeError(type(value).__name__)
    if type(value).__module__ == "numpy":
        return value.item() if getattr(value, "ndim", 1) == 0 else _from_numpy(value).tolist()
    if isinstance(value, int):
        return value
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


_PRINTED_TENSOR = re.compile(r"tensor\((.*?)(?:,\s*(?:dtype|requires_grad|grad_fn|device)=.*)?\)\s*$", re.S)


def _parse_printed(text: str):
    """Read what PyTorch prints ('tensor([0.6667, 1.3333], dtype=torch.float64)') or a plain list."""
    body = text.strip()
    found = _PRINTED_TENSOR.search(body)
    if found:
        body = found.group(1)
    try:
        return parse_text(body)
    except (ValueError, SyntaxError):
        raise WrongForm(_("Cannot read this text as numbers: give a list of numbers, or the text PyTorch "
                          "printed.")) from None
