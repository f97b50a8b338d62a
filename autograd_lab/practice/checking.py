"""What a check can say and how numbers are compared: the placeholder ``____`` that marks an
untouched answer, the three outcomes, reading a numeric answer in any reasonable form into a
float64 tensor, and the tolerance (values copied from what PyTorch prints, 4 decimals, and nothing
looser)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import torch

CORRECT, INCORRECT, NOT_ATTEMPTED = "correct", "incorrect", "not attempted"


class Placeholder:
    """The blank in an exercise notebook: ``ex.check(____)`` reports "not attempted".

    Arithmetic on the blank stays the blank, so ``2 * ____`` is still unanswered.

    >>> ____
    ____
    """

    def __repr__(self) -> str:
        return "____"

    def _blank(self, *args, **kwargs):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _blank
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __matmul__ = _blank
    __call__ = __getitem__ = _blank

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


____ = Placeholder()


def is_placeholder(answer, depth: int = 3) -> bool:
    """True when the answer is the blank, or a tuple, list or dict still holding one."""
    if isinstance(answer, Placeholder):
        return True
    if depth and isinstance(answer, (tuple, list, set, frozenset)):
        return any(is_placeholder(a, depth - 1) for a in answer)
    if depth and isinstance(answer, dict):
        return any(is_placeholder(a, depth - 1) for a in answer.values())
    return False


@dataclass(frozen=True)
class Result:
    """The verdict of one check: ``status`` is "correct", "incorrect" or "not attempted".

    A result shown in a notebook cell reads as its message.

    >>> Result("mean_square", CORRECT, "Correct.").correct
    True
    """

    exercise: str
    status: str
    message: str

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return self.message


class WrongForm(Exception):
    """The answer is not of a form the exercise can read; the message says which form it wants."""


def none_message(what: str) -> str:
    return (f"Your answer is None. {what} is None when read from a tensor that is not a leaf "
            "(such as y or z), from a tensor created without requires_grad=True, or before "
            "backward() has run. Read .grad of the leaf itself, after calling backward().")


def read_tensor(answer, what: str = "The gradient") -> torch.Tensor:
    """The answer as a float CPU tensor (float64 unless the learner gave another float dtype);
    raises WrongForm saying what is wrong with its form.

    >>> read_tensor([0.6667, 1.3333, 2])
    tensor([0.6667, 1.3333, 2.0000], dtype=torch.float64)
    """
    if answer is None:
        raise WrongForm(none_message(what))
    if isinstance(answer, bool):
        raise WrongForm(f"Your answer is {answer}, a truth value; {what} is made of numbers.")
    if isinstance(answer, str):
        answer = _parse_printed(answer)
    if callable(answer) and not isinstance(answer, torch.Tensor):
        raise WrongForm("Your answer is a function; this exercise asks for numbers (a tensor, a list or a number).")
    if isinstance(answer, torch.Tensor):
        return _from_tensor(answer)
    if type(answer).__module__ == "numpy":
        return _from_numpy(answer)
    try:
        values = torch.tensor(_plain(answer), dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise WrongForm(f"Cannot read a {type(answer).__name__} as numbers: give a tensor, "
                        "a list of numbers or a single number.") from None
    return _finite(values)


def _from_tensor(t: torch.Tensor) -> torch.Tensor:
    if t.device.type != "cpu":
        raise WrongForm(f"Your tensor is on device '{t.device}', but the exercise's tensors live on "
                        "the CPU: pass answer.cpu().")
    if not t.is_floating_point():
        raise WrongForm(f"Your tensor has dtype {str(t.dtype).replace('torch.', '')}, but a gradient "
                        "is always a floating-point tensor: compute it with float tensors, or give a "
                        "list of numbers.")
    # keep the learner's dtype: the tolerance allows for its rounding (float16 cannot hold 4 decimals)
    return _finite(t.detach().clone())


def _from_numpy(a) -> torch.Tensor:
    kind = getattr(getattr(a, "dtype", None), "kind", "f")
    if kind not in "fiu":
        raise WrongForm(f"Your array has dtype {a.dtype}; give real numbers.")
    return _finite(torch.tensor(a.tolist(), dtype=torch.float64))


def _plain(value):
    """Lists and tuples of numbers (or of 0-d tensors) as nested Python floats."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, torch.Tensor):
        return _from_tensor(value).tolist()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise TypeError(type(value).__name__)
    if type(value).__module__ == "numpy":
        return _from_numpy(value).tolist()
    return float(value)


def _finite(t: torch.Tensor) -> torch.Tensor:
    if torch.isnan(t).any():
        raise WrongForm("Your answer contains nan. A nan appears when something like 0/0, inf - inf "
                        "or the square root of a negative number was computed; no entry of this "
                        "gradient is undefined.")
    if torch.isinf(t).any():
        raise WrongForm("Your answer contains inf; every entry of this gradient is a finite number.")
    return t


_PRINTED_TENSOR = re.compile(r"tensor\((.*?)(?:,\s*(?:dtype|requires_grad|grad_fn|device)=.*)?\)\s*$", re.S)


def _parse_printed(text: str):
    """Read what PyTorch prints ('tensor([0.6667, 1.3333], dtype=torch.float64)') or a plain list."""
    body = text.strip()
    found = _PRINTED_TENSOR.search(body)
    if found:
        body = found.group(1)
    try:
        return ast.literal_eval(body)
    except (ValueError, SyntaxError):
        raise WrongForm("Cannot read this text as numbers: pass the tensor itself, a list of numbers, "
                        "or the text PyTorch printed.") from None


def near(value: torch.Tensor, expected: torch.Tensor) -> bool:
    """Right to two or three decimals but not to four: rounded too early."""
    if tuple(value.shape) != tuple(expected.shape):
        return False
    gap = (value.double() - expected.double()).abs()
    return bool((gap <= 5e-3 + 5e-3 * expected.double().abs()).all())


def shape_text(shape) -> str:
    dims = tuple(shape)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
