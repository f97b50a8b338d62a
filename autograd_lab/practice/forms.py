"""Numeric answer forms: a tensor of values, several named tensors at once, and a gradient given
as a function of x (a lambda or a formula string read with sympy). Each form reads an answer
(raising WrongForm when it cannot), compares it with a target within the printed tolerance, and
says what kind of mistake a wrong value looks like without showing the expected values."""
from __future__ import annotations

import math

import sympy
import torch
from sympy.parsing.sympy_parser import (convert_xor, implicit_multiplication_application,
                                        parse_expr, standard_transformations)

from ..tensors import close
from .checking import WrongForm, near, read_tensor, shape_text


class Form:
    """How one kind of answer is read and compared. takes_text: the widget passes typed text as is."""

    takes_text = False
    example = "ex.check(answer)"

    def read(self, answer):
        raise NotImplementedError

    def same(self, value, target) -> bool:
        return value == target

    def explain(self, value, expected) -> str | None:
        return None


class TensorForm(Form):
    """Numbers compared entry by entry; `what` names the quantity (e.g. "x.grad")."""

    def __init__(self, what: str = "x.grad", of: str = "x"):
        self.what, self.of = what, of
        self.example = f"ex.check({what})"

    def read(self, answer):
        return read_tensor(answer, self.what)

    def same(self, value, target) -> bool:
        return close(value, target)

    def explain(self, value, expected) -> str | None:
        if tuple(value.shape) != tuple(expected.shape):
            if value.numel() == 1 and expected.numel() > 1:
                return (f"You gave a single number, but {self.what} has one entry per element of "
                        f"{self.of}, shape {shape_text(expected.shape)}: a gradient has the shape of "
                        "the tensor it belongs to, it is not added up.")
            return (f"Your answer has shape {shape_text(value.shape)}, but {self.what} has shape "
                    f"{shape_text(expected.shape)}: a gradient has the shape of the tensor it belongs to.")
        if expected.abs().max() > 0 and close(-value, expected):
            return ("Every sign is flipped. backward() computes the derivative of the output with "
                    "respect to the input, not a step downhill: no minus sign comes in.")
        if near(value, expected):
            return ("Close, but not to 4 decimals: the values were rounded too early. Copy the 4 "
                    "decimals PyTorch prints, or pass the tensor itself.")
        scale = _constant_ratio(value, expected)
        if scale is not None:
            return ("Your answer is the gradient times a constant: look again at the constant "
                    "factors, the factor the power rule brings down and the 1/n of a mean.")
        return None


def _constant_ratio(value, expected):
    e = expected.double()
    if e.numel() < 2 or (e == 0).any():
        return None
    ratio = value.double() / e
    if (ratio - ratio[(0,) * ratio.dim()]).abs().max() < 1e-3 and abs(float(ratio.flatten()[0]) - 1) > 1e-3:
        return float(ratio.flatten()[0])
    return None


class PartsForm(Form):
    """Several answers at once, as a tuple in the stated order or a dict by name."""

    def __init__(self, parts: list[tuple[str, Form]]):
        self.parts = parts
        self.labels = [label for label, _ in parts]
        self.example = "ex.check((" + ", ".join(self.labels) + "))"

    def read(self, answer):
        if isinstance(answer, dict):
            keys = {_key(k): v for k, v in answer.items()}
            missing = [label for label in self.labels if _key(label) not in keys]
            if missing:
                raise WrongForm(f"Your dict has no entry for {', '.join(missing)}; give one per part: "
                                f"{', '.join(self.labels)}.")
            answer = [keys[_key(label)] for label in self.labels]
        if not isinstance(answer, (tuple, list)) or len(answer) != len(self.parts):
            raise WrongForm(f"Give {len(self.parts)} answers together, as a tuple in this order: "
                            f"{'; '.join(self.labels)}.")
        values = []
        for (label, form), part in zip(self.parts, answer, strict=False):
            try:
                values.append(form.read(part))
            except WrongForm as err:
                raise WrongForm(f"For {label}: {err}") from None
        return tuple(values)

    def same(self, value, target) -> bool:
        return all(form.same(v, t) for (_, form), v, t in zip(self.parts, value, target, strict=False))

    def explain(self, value, expected) -> str | None:
        for (label, form), v, e in zip(self.parts, value, expected, strict=False):
            if not form.same(v, e):
                why = form.explain(v, e)
                return f"{label} is not right yet." + (f" {why}" if why else "")
        return None


def _key(name) -> str:
    return str(name).replace(".grad", "").strip()


class FunctionForm(Form):
    """A gradient as a function of x: a callable (``lambda x: ...``) or a formula string in x (and
    n, the number of elements), compared with torch's gradient on several sample inputs."""

    takes_text = True
    example = 'ex.check(lambda x: ...) or ex.check("formula in x")'

    def __init__(self, samples: torch.Tensor, what: str = "dz/dx"):
        self.samples, self.what = samples, what
        self.numbers = TensorForm(what)

    def read(self, answer):
        if isinstance(answer, str) and answer.strip().startswith("lambda"):
            try:
                answer = eval(answer, {"torch": torch, "math": math})  # the learner's own lambda
            except Exception as err:
                raise WrongForm(f"Cannot read this lambda ({type(err).__name__}: {err}).") from None
        if isinstance(answer, str):
            return self._formula(answer)
        if not callable(answer) or isinstance(answer, torch.Tensor):
            raise WrongForm("This exercise asks for the gradient as a function of x, not for numbers: "
                            'give lambda x: ... or a formula string such as "x + 1".')
        rows = []
        for x in self.samples:
            try:
                out = answer(x.clone())
            except Exception as err:
                raise WrongForm(f"Calling your function on a tensor x of shape {shape_text(x.shape)} "
                                f"raised {type(err).__name__}: {err}") from None
            rows.append(read_tensor(out, "The value of your function").double())
        if len({tuple(r.shape) for r in rows}) > 1:
            raise WrongForm("Your function returns different shapes for different inputs.")
        return torch.stack(rows)

    def _formula(self, text: str):
        x, n = sympy.Symbol("x"), self.samples.shape[-1]
        transforms = (*standard_transformations, implicit_multiplication_application, convert_xor)
        try:
            expr = parse_expr(text, local_dict={"x": x, "n": sympy.Integer(n)}, transformations=transforms)
        except Exception as err:
            raise WrongForm(f"Cannot read the formula '{text}' ({type(err).__name__}).") from None
        if not isinstance(expr, sympy.Expr):
            raise WrongForm(f"'{text}' is not a formula in x.")
        others = sorted(str(s) for s in expr.free_symbols if s != x)
        if others:
            raise WrongForm(f"The formula uses {', '.join(others)}; write it with x (one element of the "
                            "input) and numbers, or n for the number of elements.")
        try:
            values = [[complex(expr.subs(x, float(v)).evalf()) for v in row] for row in self.samples]
        except (TypeError, ValueError, ZeroDivisionError):
            raise WrongForm(f"The formula '{text}' cannot be evaluated at every x.") from None
        if any(abs(v.imag) > 1e-12 for row in values for v in row):
            raise WrongForm(f"The formula '{text}' gives complex numbers for some x.")
        return read_tensor([[v.real for v in row] for row in values], self.what)

    def same(self, value, target) -> bool:
        return close(value, target)

    def explain(self, value, expected) -> str | None:
        if tuple(value.shape) != tuple(expected.shape):
            return (f"For an input x of shape {shape_text(expected.shape[1:])} your function gives "
                    f"shape {shape_text(value.shape[1:])}; the gradient has one entry per element of x "
                    "(a formula string is applied to each element).")
        return self.numbers.explain(value, expected)
