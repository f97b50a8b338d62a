"""The Jacobian of an output with respect to an input, as one tensor, from a graph already built
(one torch.autograd.grad per element of the output) or from a function (one run of it under
torch.func.vjp, its pullback vectorised over the rows, as torch.func.jacrev does), and
the vector-Jacobian product v @ J beside what backward(v) would accumulate.

Nothing of the learner's changes:

- no .grad is written: torch.autograd.grad returns gradients instead of adding them to .grad, and
  what a grad() call still writes (the .grad of tensors that retain_grad(), however they are held)
  is set aside and put back by the stepper's guard (stepper/guard.py), found in the same one pass
  over the kernel's objects; a backward that the learner's hook starts inside is caught and what it
  writes put back;
- the learner's hooks run, as in any backward (J is what autograd computes with them), once per
  row, and how often each ran is told;
- module buffers and the random state (torch's CPU generator, each initialised CUDA device's,
  Python's random and numpy's) are put back, so f's dropout or batch norm moves nothing.

J is bounded before anything is computed (MAX_OUTPUTS rows for the graph form, MAX_ENTRIES
numbers for both), and so is the peak while it is: the graph form writes each row into J as it
comes (J and one row alive), the function form computes its rows in chunks of about CHUNK_ENTRIES
numbers written into J as they come."""
from __future__ import annotations

import contextlib
import gc
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress

import torch

from ..errors import LabInputError
from ..format import message
from ..graph import Graph, snapshot
from ..i18n import _, ngettext
from ..stepper.guard import (Found, NestedBackward, SetAside, find, held_interrupts, learner_code_may_run,
                             subclasses)
from ..stepper.hooks import HookFailed, LearnerHooks

# one grad() call per output element: past this many the loop is slow and the matrix unreadable
MAX_OUTPUTS = 4096
# the most numbers J may hold: 4,194,304 (2 ** 22), 16 MiB in float32, 32 MiB in float64
MAX_ENTRIES = 2 ** 22
# the function form computes this many numbers of J at a time (rows per chunk: this over the columns)
CHUNK_ENTRIES = 2 ** 16

# the engine below torch.autograd.grad, so that a backward started by learner code inside it is
# caught (a grad() call made inside the mode that catches them would switch the mode off)
_ENGINE = getattr(torch.autograd.Variable, "_execution_engine", None)


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
    calls: int | None = None  # the torch.autograd.grad calls made through the graph; None: of a function
    in_is_leaf: bool = True
    # the learner's hooks that ran: (how the lab names the hook, runs for the rows of J, runs for backward(v))
    hooks: tuple = ()
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
            return _("one run of {f} under torch.func.vjp, its pullback vectorised over the rows (as "
                     "torch.func.jacrev does)").format(f=self.out_label.split("(")[0])
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
    torch.autograd.grad(y, x, e_i), e_i one-hot, with retain_graph=True so the graph survives. The
    learner's hooks on the way run once per row (J is what autograd computes with them) and are
    counted in .hooks.

    Bounded before anything runs: at most 4,096 rows (MAX_OUTPUTS, one backward each) and at most
    4,194,304 numbers in J (MAX_ENTRIES: 16 MiB in float32, 32 MiB in float64). Each row is written
    into J as it comes, so J and one row are alive at a time.

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
    _bounded(y.numel(), x.numel(), x.dtype, _("Take some of its rows, e.g. jacobian({y}[:10], {x}), or ask "
                                              "for v @ J alone: {y}.backward(v) computes it without J."
                                              ).format(y=y_label, x=x_label))
    weights = _weights(v, y, y_label)
    rows, cols = y.numel(), x.numel()
    if y is x:  # no graph: J is the identity
        matrix = torch.eye(rows, dtype=x.dtype, device=x.device)
        return _with_vjp(Jacobian(matrix, tuple(y.shape), tuple(x.shape), y_label, x_label, 0, x.is_leaf),
                         weights, None if weights is None else weights.detach().clone())
    with _random_state(), _guest(snapshot(y), names or {}, y_label) as engine:
        matrix = torch.zeros(rows, cols, dtype=x.dtype, device=x.device)
        for i in range(rows):
            if engine.interrupted:
                break  # Ctrl-C: raised once everything is put back
            e_i = torch.zeros(rows, dtype=y.dtype, device=y.device)
            e_i[i] = 1
            matrix[i] = engine.grad(y, x, e_i.reshape(y.shape), y_label, x_label).reshape(-1)
            del e_i
        in_rows = len(engine.ran)
        backward_grad = None
        if weights is not None and not engine.interrupted:
            backward_grad = engine.grad(y, x, weights, y_label, x_label)
        hooks = _counted(engine.ran, in_rows)
    jac = Jacobian(matrix, tuple(y.shape), tuple(x.shape), y_label, x_label, rows, x.is_leaf, hooks)
    return _with_vjp(jac, weights, backward_grad)


def of_function(f: Callable, x: torch.Tensor, v=None, f_label: str = "f", x_label: str = "x") -> Jacobian:
    """The Jacobian of f at x, in reverse mode vectorised over the rows (torch.func.vjp, then vmap
    over one-hot rows, as torch.func.jacrev does); x is read, never changed. f runs once, on a copy
    of x: J is bounded before it is computed, at most 4,194,304 numbers (MAX_ENTRIES: 16 MiB in
    float32, 32 MiB in float64), and its rows are computed in chunks of about CHUNK_ENTRIES numbers,
    each written into J as it comes. backward(v) runs the engine on the graph of that same run (the
    copy requires grad). Module buffers (a batch norm's statistics) and the random state (dropout)
    are put back.

    >>> W = torch.tensor([[1., 2.], [3., 4.]])
    >>> of_function(lambda t: W @ t, torch.ones(2)).matrix
    tensor([[1., 2.],
            [3., 4.]])
    """
    _check_tensor(x, x_label, "input")
    y_label = f"{f_label}({x_label})"
    with held_interrupts(), SetAside(_every_module(), buffers=True), _random_state():
        start = x.detach().clone().requires_grad_(True)

        def once(t):
            try:
                out = f(t)
            except Exception as err:
                raise _Raised(err) from None
            if not isinstance(out, torch.Tensor):
                raise LabInputError(_("{f} must return one tensor, it returned a {type}. "
                                      "E.g. jacobian(lambda t: (t ** 2).sum(dim=0), {x}).").format(
                                          f=f_label, type=type(out).__name__, x=x_label))
            _check_tensor(out, y_label, "output")
            return out
        try:
            ran = torch.func.vjp(once, start)  # f's one run: its output and its pullback
        except _Raised as raised:
            err = raised.err
            if _TRANSFORMED in str(err):  # torch.func refused something f does (retain_grad, say)
                raise _not_differentiable(f_label, x_label, err) from None
            raise LabInputError(_("{f}({x}) raised {error}: {message}. Fix {f} and ask again; nothing of yours "
                                  "was changed.").format(f=f_label, x=x_label, error=type(err).__name__,
                                                         message=message(err))) from None
        except LabInputError:
            raise
        except Exception as err:
            raise _not_differentiable(f_label, x_label, err) from None
        y, pullback = ran[0], ran[1]
        rows, cols = y.numel(), x.numel()
        _bounded(rows, cols, y.dtype, _("Take some of its rows, e.g. jacobian(lambda t: {f}(t)[:10], {x}), or "
                                        "ask for v @ J alone with torch.func.vjp, which never builds J.").format(
                                            f=f_label, x=x_label))
        out_shape = tuple(y.shape)
        weights = _weights(v, y, y_label)
        try:
            matrix = _rows(pullback, y, rows, cols, max(1, CHUNK_ENTRIES // max(rows, cols, 1)))
        except LabInputError:
            raise
        except Exception as err:
            raise _not_differentiable(f_label, x_label, err) from None
        backward_grad = None
        if weights is not None:
            if y.grad_fn is None:
                raise LabInputError(_("{y} does not depend on {x}: no path of the graph leads from "
                                      "{y} back to {x}. Pass the tensor {y} was computed from.").format(
                                          y=y_label, x=x_label))
            with _guest(snapshot(y), {}, y_label) as engine:
                backward_grad = engine.grad(y, start, weights, y_label, x_label)
    return _with_vjp(Jacobian(matrix, out_shape, tuple(x.shape), y_label, x_label), weights, backward_grad)


class _Raised(Exception):
    """What f raised in its run under torch.func.vjp, told apart from torch.func's own errors."""

    def __init__(self, err: Exception):
        super().__init__(str(err))
        self.err = err


#: how torch.func's errors raised from inside a transformed function (retain_grad(), .item() under
#: vmap, ...) begin to explain themselves
_TRANSFORMED = "being transformed"


def _not_differentiable(f_label: str, x_label: str, err: Exception) -> LabInputError:
    return LabInputError(_("{f}({x}) could not be differentiated by torch.func.jacrev: {error}. Compute "
                           "y = {f}({x}) yourself, with {x} requiring grad, and ask jacobian(y, {x}): that "
                           "goes through the graph, one backward per row.").format(
                               f=f_label, x=x_label, error=message(err)))


def _rows(pullback, y: torch.Tensor, rows: int, cols: int, chunk: int) -> torch.Tensor:
    """J from f's pullback (torch.func.vjp's), chunk one-hot rows at a time (vmap), each chunk
    written into J as it comes: J and one chunk of rows and of their one-hot vectors are alive at a
    time."""
    matrix = None
    with torch.no_grad():
        for first in range(0, rows, chunk):
            count = min(chunk, rows - first)
            ones = torch.zeros(count, rows, dtype=y.dtype, device=y.device)
            ones[torch.arange(count), torch.arange(first, first + count)] = 1
            (part,) = torch.vmap(pullback)(ones.reshape(count, *y.shape))
            if matrix is None:
                matrix = torch.empty(rows, cols, dtype=part.dtype, device=part.device)
            matrix[first:first + count] = part.reshape(count, cols)
            del ones, part
    if matrix is None:  # an empty output: J has no rows
        matrix = torch.empty(0, cols, dtype=y.dtype, device=y.device)
    return matrix


def _bounded(rows: int, cols: int, dtype: torch.dtype, instead: str) -> None:
    """Refuse a J of more than MAX_ENTRIES numbers, before anything of it is computed."""
    count = rows * cols
    if count <= MAX_ENTRIES:
        return
    size = count * torch.empty(0, dtype=dtype).element_size()
    raise LabInputError(_("J would be {rows} x {cols}: {count} numbers ({size} MiB), more than the {limit} "
                          "(16 MiB in float32) the Jacobian view builds. {instead}").format(
                              rows=rows, cols=cols, count=f"{count:,}", size=f"{size / 2 ** 20:,.0f}",
                              limit=f"{MAX_ENTRIES:,}", instead=instead))


def _with_vjp(jac: Jacobian, weights, backward_grad) -> Jacobian:
    if weights is not None:
        jac.v = weights.detach()
        jac.vjp = (weights.detach().reshape(-1).to(jac.matrix.dtype) @ jac.matrix).reshape(jac.in_shape)
        jac.backward_grad = backward_grad.detach()
    return jac


class _Engine:
    """One engine run at a time on the learner's graph, inside _guest: grad() is torch.autograd.grad,
    or, when learner code may run inside the engine, the engine itself under NestedBackward (a
    backward that code starts is caught and what it writes put back). ran: the learner's hooks
    that ran, in order; interrupted: a Ctrl-C arrived while the lab's own code ran."""

    def __init__(self, aside: SetAside | None, ran: list, held):
        self.aside, self.ran, self.held = aside, ran, held

    @property
    def interrupted(self) -> bool:
        return self.held is not None and self.held.pending

    def grad(self, y, x, weights, y_label, x_label) -> torch.Tensor:
        try:
            if self.aside is None or _ENGINE is None:
                (g,) = torch.autograd.grad(y, x, weights, retain_graph=True, allow_unused=True)
            else:
                with NestedBackward(self.aside):
                    (g,) = _ENGINE.run_backward((y,), (weights,), True, False, (x,), True, False)
        except HookFailed as err:
            raise LabInputError(_("{failure}. Fix the hook or remove it (h.remove() on the handle register_hook "
                                  "returned); nothing of yours was changed.").format(failure=message(err))) from None
        except RuntimeError as err:
            if "second time" in str(err):
                raise LabInputError(_("{y}'s graph was already freed by a backward(): compute {y} "
                                      "again, then ask for its Jacobian.").format(y=y_label)) from None
            raise LabInputError(_("autograd could not compute the gradient of {y} with respect to {x}: "
                                  "{error}").format(y=y_label, x=x_label, error=message(err))) from None
        if g is None:
            raise LabInputError(_("{y} does not depend on {x}: no path of the graph leads from "
                                  "{y} back to {x}. Pass the tensor {y} was computed from.").format(
                                      y=y_label, x=x_label))
        return g


@contextlib.contextmanager
def _guest(graph: Graph, names: Mapping, y_label: str) -> Iterator[_Engine]:
    """The stepper's guard around engine runs on graph (guard.guest, with what %jacobian needs
    beside it): find once, set aside the retained grads, the random state and, when learner code
    may run inside the engine, every module buffer; the learner's hooks wrapped to be counted (the
    same objects put back); Ctrl-C held while the lab's own code runs. A graph through a selective
    activation checkpoint (one backward allowed) is refused: J would use that backward up."""
    with held_interrupts() as held:
        found = find(graph)
        if found.selective:
            raise LabInputError(_("{y} goes through a selective activation checkpoint, which lets exactly one "
                                  "backward through: the Jacobian's backward per row would use it up. Ask for "
                                  "the Jacobian of the same computation without the checkpoint.").format(y=y_label))
        node_dicts = _node_hook_dicts(graph)
        learner = learner_code_may_run(graph, found, bool(node_dicts))
        with SetAside(found, buffers=learner) as aside, \
                LearnerHooks(graph, found.hooked, names, node_dicts) as hooks:
            yield _Engine(aside if learner else None, hooks.ran, held)


def _noop(*args):
    return None


def _node_hook_dicts(graph: Graph) -> list:
    """(node, its dict of post- or pre-hooks, None) for each node with hooks of the learner's: a
    node's hook dicts are seen only by registering a hook, removed at once."""
    out = []
    for fn in graph.fns:
        for register in (fn.register_hook, fn.register_prehook):
            probe = register(_noop)
            hooks = probe.hooks_dict_ref()
            probe.remove()
            if hooks:
                out.append((graph.node_of(fn), hooks, None))
    return out


def _counted(ran: list, in_rows: int) -> tuple:
    """(hook, runs for the rows of J, runs for backward(v)) in the order the hooks first ran."""
    rows = Counter(what for _node, what in ran[:in_rows])
    more = Counter(what for _node, what in ran[in_rows:])
    order = dict.fromkeys(what for _node, what in ran)
    return tuple((what, rows[what], more[what]) for what in order)


def _every_module() -> Found:
    """Every module of the kernel, for their buffers (f may be one, or use one, in any way): one pass
    over the objects the garbage collector tracks, filtered by type as guard.find filters them."""
    kinds = subclasses(torch.nn.Module)
    objects = gc.get_objects()
    modules = list(compress(objects, map(kinds.__contains__, map(type, objects))))
    del objects
    return Found([], [], modules, {}, False, False)


@contextlib.contextmanager
def _random_state() -> Iterator[Callable[[], None]]:
    """The random state as it is now put back on exit: torch's CPU generator, each CUDA device's
    when CUDA is initialised, Python's random and numpy's (when numpy is loaded). Yields rewind(),
    which puts it back at once (a second run of f then draws what the first drew)."""
    cpu = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    python = random.getstate()
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state() if numpy is not None else None

    def rewind() -> None:
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
        random.setstate(python)
        if numpy is not None:
            numpy.random.set_state(numpy_state)

    try:
        yield rewind
    finally:
        rewind()


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

