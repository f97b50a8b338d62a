"""Checking a backward the learner wrote, against the engine and against finite differences.

The learner answers with a function ``backward(grad_output, ...)`` or a ``torch.autograd.Function``
subclass. Their backward is run on several seeded random inputs of different shapes, each with a
grad_output that is not all ones (so a forgotten chain-rule factor shows), and compared with what
``torch.autograd.grad`` gives for the real op; ``torch.autograd.gradcheck`` (double precision,
central differences) checks it a second way."""
from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..format import listed, message, quote
from ..i18n import _
from .checking import WrongForm, is_placeholder, safe_repr, shape_text

RTOL, ATOL = 1e-5, 1e-8  # the learner's formula and the engine's differ only by rounding in float64


@dataclass(frozen=True)
class Op:
    """The op whose backward is asked for: its forward ``fn(*inputs)``, the inputs' names, and
    ``passes(inputs, out)``: what the learner's backward gets after grad_output."""

    text: str
    fn: Callable
    names: tuple[str, ...]
    passes: Callable

    def __repr__(self) -> str:
        return f"<op {self.text}>"


@dataclass(frozen=True)
class Case:
    """One input to check on: the op's inputs (float64) and the grad_output arriving from above."""

    inputs: tuple[torch.Tensor, ...]
    grad_output: torch.Tensor

    def describe(self, names) -> str:
        parts = [_("{name} of shape {shape}").format(name=n, shape=shape_text(t.shape))
                 for n, t in zip(names, self.inputs, strict=True)]
        parts.append(_("{name} of shape {shape}").format(name="grad_output", shape=shape_text(self.grad_output.shape)))
        return listed(parts)

    def __repr__(self) -> str:
        return f"<case {' '.join(shape_text(t.shape) for t in self.inputs)}>"


def random_cases(shapes: list[tuple], seed: int = 0, low: float = -2.0, high: float = 2.0, out=None) -> list[Case]:
    """Seeded cases: one per entry of shapes (a tuple of input shapes); values uniform in [low, high),
    grad_output of the output's shape, each entry 0.5 to 2 in size with a random sign.

    >>> [c.inputs[0].shape for c in random_cases([((3,),), ((2, 4),)])]
    [torch.Size([3]), torch.Size([2, 4])]
    """
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for input_shapes in shapes:
        inputs = tuple(torch.rand(s, generator=gen, dtype=torch.double) * (high - low) + low for s in input_shapes)
        shape = (out(*inputs) if out else torch.broadcast_tensors(*inputs)[0]).shape
        size = torch.rand(shape, generator=gen, dtype=torch.double) * 1.5 + 0.5
        sign = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0).double()
        cases.append(Case(inputs, size * sign))
    return cases


@dataclass(frozen=True)
class Attempt:
    """What one backward gave on every case: grads[case][input]; fd[case] whether gradcheck passed
    (None when not run, as for the known wrong answers)."""

    grads: tuple[tuple[torch.Tensor, ...], ...]
    fd: tuple[bool, ...] | None = None

    def __repr__(self) -> str:
        return f"<attempt on {len(self.grads)} cases>"


def leaves(case: Case) -> tuple[torch.Tensor, ...]:
    """Fresh leaves that require grad, holding the case's inputs."""
    return tuple(t.clone().requires_grad_() for t in case.inputs)


def engine(op: Op, cases: list[Case]) -> Attempt:
    """What torch.autograd.grad gives for the real op on every case, confirmed by gradcheck.

    >>> op = Op("x * 2", lambda x: x * 2, ("x",), lambda inputs, out: inputs)
    >>> engine(op, random_cases([((2,),)])).grads[0][0].shape
    torch.Size([2])
    """
    rows = []
    for case in cases:
        ins = leaves(case)
        rows.append(tuple(g.detach() for g in torch.autograd.grad(op.fn(*ins), ins, case.grad_output)))
        if not torch.autograd.gradcheck(op.fn, leaves(case), raise_exception=False):
            raise AssertionError(f"the engine and finite differences disagree on {op.text}")
    return Attempt(tuple(rows), (True,) * len(cases))


def numeric_vjp(fn: Callable, inputs, grad_output: torch.Tensor, eps: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """grad_output times the Jacobian of fn, by central differences in float64 (no autograd).

    >>> numeric_vjp(lambda x: x**2, (torch.tensor([3.0], dtype=torch.double),), torch.ones(1, dtype=torch.double))
    (tensor([6.0000], dtype=torch.float64),)
    """
    inputs = [t.detach().clone().double() for t in inputs]
    out = []
    for t in inputs:
        g = torch.zeros_like(t)
        flat, gflat = t.view(-1), g.view(-1)
        for i in range(flat.numel()):
            keep = float(flat[i])
            flat[i] = keep + eps
            up = float((fn(*inputs) * grad_output).sum())
            flat[i] = keep - eps
            down = float((fn(*inputs) * grad_output).sum())
            flat[i] = keep
            gflat[i] = (up - down) / (2 * eps)
        out.append(g)
    return tuple(out)


def is_function_class(answer) -> bool:
    return inspect.isclass(answer) and issubclass(answer, torch.autograd.Function)


def _wrapped(op: Op, backward: Callable):
    """A Function whose forward is the real op and whose backward is the learner's function,
    so that gradcheck can run it."""

    class Yours(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            out = op.fn(*inputs)
            ctx.save_for_backward(*inputs, out)
            return out

        @staticmethod
        def backward(ctx, grad_output):
            *inputs, out = ctx.saved_tensors
            return _as_tuple(backward(grad_output, *op.passes(tuple(inputs), out)), len(inputs))

    return Yours


def _as_tuple(result, count: int) -> tuple:
    if isinstance(result, torch.Tensor) and count == 1:
        return (result,)
    if not isinstance(result, (tuple, list)):
        if count == 1:
            raise WrongForm(_("Your backward returned a {type}; return one tensor, the gradient for the "
                              "input.").format(type=type(result).__name__))
        raise WrongForm(_("Your backward returned a {type}; return a tuple of {count} tensors, one gradient per "
                          "input, in order.").format(type=type(result).__name__, count=count))
    if len(result) != count:
        raise WrongForm(_("Your backward returned {n} values; return {count}, one gradient per input, in "
                          "order.").format(n=len(result), count=count))
    return tuple(result)


def _gradcheck(fn: Callable, case: Case) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(torch.autograd.gradcheck(fn, leaves(case), raise_exception=False))
    except Exception:  # the engine refused the gradient (a wrong shape, a wrong count): not passed
        return False


def one_case(op: Op, answer, case: Case) -> tuple:
    """The learner's gradients on one case, as returned (in the Function's case by calling its
    backward on the node itself, so the engine does not quietly sum a wrong shape)."""
    g = case.grad_output.clone()
    if is_function_class(answer):
        out = answer.apply(*leaves(case))
        if not isinstance(out, torch.Tensor) or out.grad_fn is None:
            raise WrongForm(_("Your Function's forward must return one tensor (its apply() gave no graph)."))
        if tuple(out.shape) != tuple(op.fn(*case.inputs).shape) or not torch.allclose(
                out.detach().double(), op.fn(*case.inputs), RTOL, ATOL):
            raise WrongForm(_("Your Function's forward does not compute {op}: check forward first.").format(
                op=op.text))
        return _as_tuple(answer.backward(out.grad_fn, g), len(case.inputs))
    inputs = tuple(t.clone() for t in case.inputs)
    return _as_tuple(answer(g, *op.passes(inputs, op.fn(*inputs))), len(case.inputs))


def run_backward(op: Op, answer, cases: list[Case], finite_differences: bool = True) -> Attempt:
    """Run a backward (function or Function subclass) on every case; WrongForm when it cannot run."""
    if not (callable(answer) and not isinstance(answer, torch.Tensor)):
        raise WrongForm(_("This exercise asks for a backward, not for numbers: give your function "
                          "(its name, without calling it) or your torch.autograd.Function subclass."))
    rows, fd = [], []
    for i, case in enumerate(cases):
        try:
            with torch.no_grad() if not is_function_class(answer) else _nothing():
                result = one_case(op, answer, case)
        except WrongForm:
            raise
        except Exception as err:
            raise WrongForm(_("Your backward raised {error} on input {i} of {n} ({case}): {message}").format(
                error=type(err).__name__, i=i + 1, n=len(cases), case=case.describe(op.names),
                message=message(err))) from None
        if any(is_placeholder(r) for r in result):
            raise WrongForm(_("Your backward still returns ____."))
        for name, r in zip(op.names, result, strict=True):
            if not isinstance(r, torch.Tensor):
                raise WrongForm(_("Your backward returned {value} as the gradient for {name}; return a "
                                  "tensor.").format(value=quote(safe_repr(r)), name=name))
        rows.append(tuple(r.detach().double() for r in result))
        if finite_differences:
            fd.append(_gradcheck(answer.apply if is_function_class(answer) else _wrapped(op, answer).apply, case))
    return Attempt(tuple(rows), tuple(fd) if finite_differences else None)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def same_grad(a: torch.Tensor, b: torch.Tensor) -> bool:
    return tuple(a.shape) == tuple(b.shape) and bool(torch.allclose(a, b, RTOL, ATOL))
