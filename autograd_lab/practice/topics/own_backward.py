"""Exercises that ask for a backward: tanh, sigmoid, x * y, a broadcasting add, a mean over a
dimension and micrograd's neuron tanh(w . x + b). The learner writes a function or a
torch.autograd.Function subclass; the lab runs it on seeded random inputs of several shapes and
compares it with the engine and with finite differences (see backward_exercise.py). The sentences
are in own_backward.toml, a table per task."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ...i18n import _
from ...words import words_of
from ..backward_check import Op, random_cases
from ..backward_exercise import BackwardExercise, backward_exercise
from ..registry import register
from .common import stated

W = words_of(__name__)


def _at_output(fn):
    """The wrong backward that takes the op's derivative at its output: the engine's gradient of
    fn evaluated at out instead of at x."""
    def backward(grad_output, x, out):
        with torch.enable_grad():
            o = out.detach().clone().requires_grad_()
            return torch.autograd.grad(fn(o), o, grad_output)[0]
    return backward


def solution_code(name: str, args: str, body: tuple[str, ...], forward_args: str, forward: tuple[str, ...],
                  backward: tuple[str, ...]) -> tuple[str, str]:
    """A task's solution as a function {name}_backward(grad_output, args) with the lines of body,
    and as a torch.autograd.Function subclass My{Name} with the lines of forward and backward.

    >>> print(solution_code("neg", "x", ("return -grad_output",), "x", ("return -x",), ("return -grad_output",))[1])
    class MyNeg(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return -x
    <BLANKLINE>
        @staticmethod
        def backward(ctx, grad_output):
            return -grad_output
    """
    def lines(block: tuple[str, ...], indent: int) -> str:
        return "\n".join(" " * indent + line for line in block)
    return (f"def {name}_backward(grad_output, {args}):\n{lines(body, 4)}",
            f"class My{name.capitalize()}(torch.autograd.Function):\n    @staticmethod\n"
            f"    def forward(ctx, {forward_args}):\n{lines(forward, 8)}\n\n    @staticmethod\n"
            f"    def backward(ctx, grad_output):\n{lines(backward, 8)}")


@dataclass(frozen=True)
class Task:
    """One implement-a-backward exercise as data, registered under name (lesson 09): the op, the
    exercise's own mistakes (message, wrong backward, what a first such mistake is asked), the input
    shapes it is checked on (values drawn from span), the solution as a function and as a
    torch.autograd.Function subclass (the function's first line is the signature asked for) and the
    hints that are code alone. The sentences (title, intro, returns, hints, diagnoses, asks) are the
    table of its name in own_backward.toml; the messages are the English ones, translated when the exercise is built."""

    name: str
    op: Op
    specific: list[tuple[str, object, str]]
    shapes: list[tuple]
    code: tuple[str, str]
    code_hints: tuple[str, ...] = ()
    span: tuple[float, float] = (-2.0, 2.0)

    def build(self, seed=None) -> BackwardExercise:
        """The exercise on seeded random inputs (seed None is seed 0)."""
        cases = random_cases(self.shapes, seed or 0, *self.span, out=self.op.fn)
        specific = [(_(message), wrong, _(ask) if ask else "") for message, wrong, ask in self.specific]
        ex = backward_exercise(self.op, cases, specific, **self._statement())
        ex.seed = seed
        return ex

    def _statement(self) -> dict:
        t, common = W[self.name], W["common"]
        function, function_class = self.code
        signature = function.split(":")[0].removeprefix("def ")
        name = signature.split("(")[0]
        returns = t("returns")
        setup = f"def {signature}:\n    # {returns}\n    return ____"
        solution = (f"{function}\n\nex.check({name})\n\n" + common("or_as_function")
                    + f"\n\n{function_class}\n\nex.check({function_class.split('(')[0].split()[-1]})")
        return stated(t, setup=setup,
                      question=common("question").format(op=self.op.text, args=", ".join(self.op.names)),
                      answer_form=common("answer_form").format(signature=signature, returns=returns),
                      # the hints that are code alone (return ...) have no translation and stay as they are
                      hints=[*t.all("hints"), *self.code_hints], solution_text=solution, example=f"ex.check({name})")


ELEMENTWISE = [((3,),), ((2, 4),), ((2, 3, 2),)]


@dataclass(frozen=True)
class Elementwise:
    """An element-wise op of torch (the task backward_{op}) whose backward is written with its
    output: local is the gradient it returns as code, slope the same as a function of
    (grad_output, out). Its two mistakes of its own are the derivative taken at the output
    (diagnosis at_output) and x used where out is wanted (uses_x)."""

    name: str
    local: str
    slope: Callable

    def code(self) -> tuple[str, str]:
        """The solution as a function and as a torch.autograd.Function subclass."""
        op = self.name.removeprefix("backward_")
        return solution_code(op, "x, out", (f"return {self.local}",), "x",
                             (f"out = torch.{op}(x)", "ctx.save_for_backward(out)", "return out"),
                             ("out, = ctx.saved_tensors", f"return {self.local}"))

    def task(self) -> Task:
        op = self.name.removeprefix("backward_")
        fn, d, ask = getattr(torch, op), W[self.name]["diagnoses"], W[self.name]["asks"]
        specific = [(d["at_output"], _at_output(fn), ask["at_output"]),
                    (d["uses_x"], lambda g, x, out: self.slope(g, x), ask["uses_x"])]
        return Task(self.name, Op(f"torch.{op}(x)", fn, ("x",), lambda inputs, out: (inputs[0], out)),
                    specific, ELEMENTWISE, self.code(), (f"return {self.local}",))


TANH_OP = Elementwise("backward_tanh", "grad_output * (1 - out**2)", lambda g, v: g * (1 - v**2))
SIGMOID_OP = Elementwise("backward_sigmoid", "grad_output * out * (1 - out)", lambda g, v: g * v * (1 - v))
TANH, SIGMOID = TANH_OP.code(), SIGMOID_OP.code()


def _inputs(inputs, out):
    """What the backward of a task is given besides grad_output: the op's inputs."""
    return inputs


MUL = solution_code("mul", "x, y", ("return grad_output * y, grad_output * x",), "x, y",
                    ("ctx.save_for_backward(x, y)", "return x * y"),
                    ("x, y = ctx.saved_tensors", "return grad_output * y, grad_output * x"))
MUL_TASK = Task("backward_mul", Op("x * y", torch.mul, ("x", "y"), _inputs),
                [(W["backward_mul"]["diagnoses"]["input_itself"], lambda g, x, y: (g * x, g * y),
                  W["backward_mul"]["asks"]["input_itself"])],
                [((3,), (3,)), ((2, 3), (2, 3)), ((4, 2), (4, 2))], MUL, ("return grad_output * y, grad_output * x",))

ADD = solution_code("add", "x, b", ("return grad_output, grad_output.sum_to_size(*b.shape)",), "x, b",
                    ("ctx.b_shape = b.shape", "return x + b"),
                    ("return grad_output, grad_output.sum_to_size(*ctx.b_shape)",))
ADD_TASK = Task("backward_broadcast_add", Op("x + b", torch.add, ("x", "b"), _inputs),
                [(W["backward_broadcast_add"]["diagnoses"]["mean_for_b"],
                  lambda g, x, b: (g, g.reshape(-1, b.shape[-1]).mean(0)), "")],
                [((2, 3), (3,)), ((4, 2), (2,)), ((2, 3, 4), (4,))], ADD)

MEAN = solution_code("mean", "x", ("return grad_output.unsqueeze(1).expand_as(x) / x.shape[1]",), "x",
                     ("ctx.x_shape = x.shape", "return x.mean(dim=1)"),
                     ("n = ctx.x_shape[1]", "return grad_output.unsqueeze(1).expand(ctx.x_shape) / n"))
MEAN_WRONG = W["backward_mean"]["diagnoses"]
MEAN_TASK = Task("backward_mean", Op("x.mean(dim=1)", lambda x: x.mean(dim=1), ("x",), _inputs),
                 [(MEAN_WRONG["no_division"], lambda g, x: g.unsqueeze(1).expand_as(x).clone(), ""),
                  (MEAN_WRONG["numel"], lambda g, x: g.unsqueeze(1).expand_as(x) / x.numel(), "")],
                 [((2, 3),), ((4, 2),), ((2, 3, 4),)], MEAN,
                 ("return grad_output.unsqueeze(1).expand_as(x) / x.shape[1]",))

NEURON = solution_code("neuron", "w, x, b, out",
                       ("local = grad_output * (1 - out**2)", "return local * x, local * w, local"), "w, x, b",
                       ("out = torch.tanh((w * x).sum() + b)", "ctx.save_for_backward(w, x, out)", "return out"),
                       ("w, x, out = ctx.saved_tensors", "local = grad_output * (1 - out**2)",
                        "return local * x, local * w, local"))


def _neuron(w, x, b):
    return torch.tanh((w * x).sum() + b)


NEURON_WRONG, NEURON_ASK = W["backward_neuron"]["diagnoses"], W["backward_neuron"]["asks"]
NEURON_TASK = Task(
    "backward_neuron",
    Op("torch.tanh((w * x).sum() + b)", _neuron, ("w", "x", "b"), lambda inputs, out: (*inputs, out)),
    [(NEURON_WRONG["no_tanh_factor"], lambda g, w, x, b, out: (g * x, g * w, g), NEURON_ASK["no_tanh_factor"]),
     (NEURON_WRONG["pre_activation"],
      lambda g, w, x, b, out: tuple(g * (1 - ((w * x).sum() + b)**2) * t for t in (x, w, torch.ones_like(b))),
      NEURON_ASK["pre_activation"]),
     (NEURON_WRONG["at_output"],
      lambda g, w, x, b, out: tuple(g * (1 - torch.tanh(out)**2) * t for t in (x, w, torch.ones_like(b))),
      NEURON_ASK["at_output"]),
     (NEURON_WRONG["wrong_vector"],
      lambda g, w, x, b, out: (g * (1 - out**2) * w, g * (1 - out**2) * x, g * (1 - out**2)),
      NEURON_ASK["wrong_vector"])],
    [((3,), (3,), ()), ((4,), (4,), ()), ((5,), (5,), ())], NEURON,
    ("local = grad_output * (1 - out**2); return local * x, local * w, local",), span=(-1.0, 1.0))

#: every implement-a-backward task, in the order lesson 09 asks for them
TASKS = (TANH_OP.task(), SIGMOID_OP.task(), MUL_TASK, ADD_TASK, MEAN_TASK, NEURON_TASK)
for _task in TASKS:
    register(_task.name, W[_task.name]["title"], lesson=9)(_task.build)
