"""The Jacobian of an output with respect to an input, as one tensor, from a graph already built
(one torch.autograd.grad per element of the output) or from a function (torch.func.jacrev), and
the vector-Jacobian product v @ J beside what backward(v) would accumulate.

Nothing of the learner's is written: torch.autograd.grad returns gradients instead of adding them to
.grad, and what a grad() call still writes (the .grad of tensors that retain_grad(), however they
are held), module buffers and the random state are set aside and put back by the stepper's guard
(stepper/guard.py, guest())."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

from ..errors import LabInputError
from ..i18n import _, ngettext
from ..graph import snapshot
from ..stepper.guard import guest

# one grad() call per output element: past this many the loop is slow and the matrix unreadable
MAX_OUTPUTS = 4096


@dataclass(eq=False)
class Jacobian:
    """J[i, j] = d y_i / d x_j, with y and x flattened; .matrix holds it, .tensor has the shape
    y.shape + x.shape. With weights v: .vjp is v @ J (shaped like x) and .backward_grad what
    y.backward(v) adds into x.grad, computed by the engine without J."""

    matrix: torch.Tensor
    out_shape: tuple
    in_shape: tuple
    out_label: str = "y"
    in_label: str = "x"
    calls: int | None = None  # the torch.autograd.grad calls made through the graph; None: torch.func.jacrev
    in_is_leaf: bool = True
    v: torch.Tensor | None = field(default=None, repr=False)
    vjp: torch.Tensor | None = field(default=None, repr=False)
    backward_grad: torch.Tensor | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        rows, cols = self.matrix.shape
        return f"<Jacobian d{self.out_label}/d{self.in_label}: {rows} x {cols}>"

    @property
    def how(self) -> str:
        """How J was computed, in the current language."""
        if self.calls is None:
            return "torch.func.jacrev"
        return ngettext("one torch.autograd.grad per element of {y} ({n} call, retain_graph=True)",
                        "one torch.autograd.grad per element of {y} ({n} calls, retain_graph=True)",
                        self.calls).format(y=self.out_label, n=self.calls)

    @property
    def shape(self) -> tuple:
        return tuple(self.matrix.shape)

    @property
    def tensor(self) -> torch.Tensor:
        """J shaped y.shape + x.shape, as torch.autograd.functional.jacobian returns it."""
        return self.matrix.reshape(*self.out_shape, *self.in_shape)

    @property
    def is_diagonal(self) -> bool:
        """True for a square J with nothing off its diagonal (an element-wise operation)."""
        rows, cols = self.matrix.shape
        return rows == cols and bool((self.matrix - torch.diag(torch.diagonal(self.matrix))).eq(0).all())

    @property
    def nonzero(self) -> int:
        return int(self.matrix.ne(0).sum())


def of_graph(y: torch.Tensor, x: torch.Tensor, v=None, names: Mapping | None = None,
             y_label: str = "y", x_label: str = "x") -> Jacobian:
    """The Jacobian of y with respect to x through the graph that computed y: row i is
    torch.autograd.grad(y, x, e_i), e_i one-hot, with retain_graph=True so the graph survives.

    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> of_graph(x ** 2, x).matrix.diagonal()
    tensor([2., 4., 6.])
    """
    _check_tensor(y, y_label, "output")
    _check_tensor(x, x_label, "input")
    if y.grad_fn is None and y is not x:
        raise LabInputError(_("{y} has no grad_fn: autograd recorded no graph for it, so there is "
                              "nothing to differentiate. Compute it from {x} (which must have "
                              "requires_grad=True), or pass a function: jacobian(lambda t: ..., {x})."
                              ).format(y=y_label, x=x_label))
    if not x.requires_grad:
        raise LabInputError(_("{x} does not require grad, so no graph leads back to it. Create it "
                              "with requires_grad=True and compute {y} again, or pass a function: "
                              "jacobian(lambda t: ..., {x}).").format(y=y_label, x=x_label))
    if y.numel() > MAX_OUTPUTS:
        raise LabInputError(_("{y} has {count} elements: one backward per element is too many "
                              "to wait for. Take a slice, e.g. jacobian({y}[:10], {x}).").format(
                                  y=y_label, x=x_label, count=y.numel()))
    weights = _weights(v, y, y_label)
    with guest(snapshot(y), nested=False):
        rows = []
        for i in range(y.numel()):
            e_i = torch.zeros(y.numel(), dtype=y.dtype, device=y.device)
            e_i[i] = 1
            rows.append(_grad(y, x, e_i.reshape(y.shape), y_label, x_label).reshape(-1))
        matrix = torch.stack(rows) if rows else y.new_zeros(0, x.numel())
        backward_grad = None if weights is None else _grad(y, x, weights, y_label, x_label)
    jac = Jacobian(matrix.detach(), tuple(y.shape), tuple(x.shape), y_label, x_label, y.numel(), x.is_leaf)
    return _with_vjp(jac, weights, backward_grad)


def of_function(f: Callable, x: torch.Tensor, v=None, f_label: str = "f", x_label: str = "x") -> Jacobian:
    """The Jacobian of f at x, by torch.func.jacrev (reverse mode, vectorised over the rows); x is
    read, never changed.

    >>> W = torch.tensor([[1., 2.], [3., 4.]])
    >>> of_function(lambda t: W @ t, torch.ones(2)).matrix
    tensor([[1., 2.],
            [3., 4.]])
    """
    _check_tensor(x, x_label, "input")
    point = x.detach().clone()
    try:
        jac = torch.func.jacrev(f)(point)
    except (RuntimeError, TypeError, ValueError) as err:
        raise LabInputError(_("{f}({x}) could not be differentiated by torch.func.jacrev: {error}. Pass a "
                              "function of one tensor that returns one tensor, e.g. jacobian(lambda t: t ** 2, "
                              "{x}).").format(f=f_label, x=x_label, error=" ".join(str(err).split())[:200])
                            ) from None
    if not isinstance(jac, torch.Tensor):
        raise LabInputError(_("{f} must return one tensor, it returned a {type}. "
                              "E.g. jacobian(lambda t: (t ** 2).sum(dim=0), {x}).").format(
                                  f=f_label, type=type(jac).__name__, x=x_label))
    out_shape = tuple(jac.shape[:jac.dim() - x.dim()])
    matrix = jac.reshape(_numel(out_shape), x.numel()).detach()
    y_label = f"{f_label}({x_label})"
    weights, backward_grad = None, None
    if v is not None:
        start = point.clone().requires_grad_(True)
        y = f(start)
        weights = _weights(v, y, y_label)
        backward_grad = _grad(y, start, weights, y_label, x_label)
    return _with_vjp(Jacobian(matrix, out_shape, tuple(x.shape), y_label, x_label), weights, backward_grad)


def _with_vjp(jac: Jacobian, weights, backward_grad) -> Jacobian:
    if weights is not None:
        jac.v = weights.detach()
        jac.vjp = (weights.detach().reshape(-1).to(jac.matrix.dtype) @ jac.matrix).reshape(jac.in_shape)
        jac.backward_grad = backward_grad.detach()
    return jac


def _grad(y, x, weights, y_label, x_label) -> torch.Tensor:
    try:
        (g,) = torch.autograd.grad(y, x, weights, retain_graph=True, allow_unused=True)
    except RuntimeError as err:
        if "second time" in str(err):
            raise LabInputError(_("{y}'s graph was already freed by a backward(): compute {y} "
                                  "again, then ask for its Jacobian.").format(y=y_label)) from None
        raise
    if g is None:
        raise LabInputError(_("{y} does not depend on {x}: no path of the graph leads from "
                              "{y} back to {x}. Pass the tensor {y} was computed from.").format(y=y_label, x=x_label))
    return g


def _weights(v, y: torch.Tensor, y_label: str):
    if v is None:
        return None
    try:
        weights = torch.as_tensor(v, dtype=y.dtype, device=y.device)
    except (TypeError, ValueError, RuntimeError):
        raise LabInputError(_("v must be a tensor shaped like {y}, got {type}. "
                              "E.g. v=torch.ones_like({y}).").format(y=y_label, type=type(v).__name__)) from None
    if weights.shape != y.shape:
        raise LabInputError(_("v has shape {shape} but {y} has shape {y_shape}: "
                              "one weight per element of {y}, e.g. v=torch.ones_like({y}).").format(
                                  shape=tuple(weights.shape), y=y_label, y_shape=tuple(y.shape)))
    return weights


def _check_tensor(t, label: str, role: str) -> None:
    """role: "output" or "input"."""
    if not isinstance(t, torch.Tensor):
        if role == "output":
            sentence = _("the output {label} is a {type}, not a tensor. Pass tensors, e.g. jacobian(y, x) "
                         "with x = torch.tensor([1., 2., 3.], requires_grad=True) and y = x ** 2.")
        else:
            sentence = _("the input {label} is a {type}, not a tensor. Pass tensors, e.g. jacobian(y, x) "
                         "with x = torch.tensor([1., 2., 3.], requires_grad=True) and y = x ** 2.")
        raise LabInputError(sentence.format(label=label, type=type(t).__name__))
    if not t.is_floating_point():
        # complex outputs have two real Jacobians (Wirtinger derivatives): not what this view teaches
        raise LabInputError(_("{label} holds {dtype} numbers; the Jacobian view takes real floating point "
                              "tensors, e.g. {label}.double().").format(
                                  label=label, dtype=str(t.dtype).replace("torch.", "")))


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


