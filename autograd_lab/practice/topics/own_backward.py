"""Exercises that ask for a backward: tanh, sigmoid, x * y, a broadcasting add, a mean over a
dimension and micrograd's neuron tanh(w . x + b). The learner writes a function or a
torch.autograd.Function subclass; the lab runs it on seeded random inputs of several shapes and
compares it with the engine and with finite differences (see backward_exercise.py)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ...i18n import N_, _
from ..backward_check import Op, random_cases
from ..backward_exercise import BackwardExercise, backward_exercise
from ..registry import register

QUESTION = N_("Write the backward of {op}. Write it as a function, or as a torch.autograd.Function subclass "
              "(forward(ctx, {args}) computing {op}, backward(ctx, grad_output)): ex.check(YourFunction).")


def _at_output(fn):
    """The wrong backward that takes the op's derivative at its output: the engine's gradient of
    fn evaluated at out instead of at x."""
    def backward(grad_output, x, out):
        with torch.enable_grad():
            o = out.detach().clone().requires_grad_()
            return torch.autograd.grad(fn(o), o, grad_output)[0]
    return backward


@dataclass(frozen=True)
class Task:
    """One implement-a-backward exercise as data, registered under name and title at place: the op,
    the exercise's own mistakes (message, wrong backward), hints, the input shapes it is checked on
    (values drawn from span), what the backward returns, the intro, and the solution as a function
    and as a torch.autograd.Function subclass (the function's first line is the signature asked for).
    The texts are the English sentences (marked N_), translated when the exercise is built."""

    name: str
    title: str
    place: int
    op: Op
    specific: list[tuple[str, object]]
    hints: list[str]
    shapes: list[tuple]
    returns: str
    intro: str
    code: tuple[str, str]
    span: tuple[float, float] = (-2.0, 2.0)

    def build(self, seed=None) -> BackwardExercise:
        """The exercise on seeded random inputs (seed None is seed 0)."""
        cases = random_cases(self.shapes, seed or 0, *self.span, out=self.op.fn)
        specific = [(_(message), wrong) for message, wrong in self.specific]
        ex = backward_exercise(self.op, cases, specific, **self._statement())
        ex.seed = seed
        return ex

    def _statement(self) -> dict:
        function, function_class = self.code
        signature = function.split(":")[0].removeprefix("def ")
        name = signature.split("(")[0]
        returns = _(self.returns)
        setup = f"def {signature}:\n    # {returns}\n    return ____"
        solution = (f"{function}\n\nex.check({name})\n\n" + _("Or as a torch.autograd.Function:")
                    + f"\n\n{function_class}\n\nex.check({function_class.split('(')[0].split()[-1]})")
        return dict(intro=_(self.intro), setup=setup,
                    question=_(QUESTION).format(op=self.op.text, args=", ".join(self.op.names)),
                    answer_form=_("your function {signature} ({returns}), or a torch.autograd.Function "
                                  "subclass").format(signature=signature, returns=returns),
                    # the hints that are code alone (return ...) have no translation and stay as they are
                    hints=[_(hint) for hint in self.hints], solution_text=solution, example=f"ex.check({name})")


ELEMENTWISE = [((3,),), ((2, 4),), ((2, 3, 2),)]


@dataclass(frozen=True)
class Elementwise:
    """An element-wise op of torch whose backward is written with its output: local is the gradient
    it returns as code, slope the same as a function of (grad_output, out); its title, the texts for
    the two mistakes of its own (the derivative taken at the output; x used where out is wanted, with
    the derivative worked out), the first two hints, what the backward returns and the intro."""

    op: str
    place: int
    local: str
    slope: Callable
    title: str
    at_output: str
    uses_x: str
    hints: tuple[str, str]
    returns: str
    intro: str

    def code(self) -> tuple[str, str]:
        """The solution as a function and as a torch.autograd.Function subclass."""
        return (f"def {self.op}_backward(grad_output, x, out):\n    return {self.local}",
                f"class My{self.op.capitalize()}(torch.autograd.Function):\n    @staticmethod\n"
                f"    def forward(ctx, x):\n        out = torch.{self.op}(x)\n        ctx.save_for_backward(out)\n"
                f"        return out\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
                f"        out, = ctx.saved_tensors\n        return {self.local}")

    def task(self) -> Task:
        fn = getattr(torch, self.op)
        op = Op(f"torch.{self.op}(x)", fn, ("x",), lambda inputs, out: (inputs[0], out))
        specific = [(self.at_output, _at_output(fn)), (self.uses_x, lambda g, x, out: self.slope(g, x))]
        return Task(f"backward_{self.op}", self.title, self.place, op, specific,
                    [*self.hints, f"return {self.local}"], ELEMENTWISE, self.returns, self.intro, self.code())


TANH_OP = Elementwise(
    "tanh", 910, "grad_output * (1 - out**2)", lambda g, v: g * (1 - v**2), N_("Write the backward of tanh"),
    N_("You took tanh's derivative at the output: 1 - tanh(out)**2 is the slope of tanh at out, but the "
       "slope is wanted at the input x. Since out = tanh(x), the slope at x is 1 - out**2."),
    N_("You used x where the formula wants the output: d tanh(x)/dx = 1 - tanh(x)**2 = 1 - out**2, not "
       "1 - x**2. (In a Function, ctx.save_for_backward() what backward needs, and unpack ctx.saved_tensors in "
       "the same order.)"),
    (N_("d tanh(x)/dx = 1 - tanh(x)**2, and tanh(x) is out, which backward is given."),
     N_("backward returns grad_output times the local derivative (the chain rule), element by element.")),
    N_("out = torch.tanh(x); return the gradient for x"),
    N_("out = torch.tanh(x), element by element. The backward gets grad_output (dL/dout, the shape of out), "
       "the input x and the output out, and returns dL/dx."))
SIGMOID_OP = Elementwise(
    "sigmoid", 920, "grad_output * out * (1 - out)", lambda g, v: g * v * (1 - v),
    N_("Write the backward of sigmoid"),
    N_("You took sigmoid's derivative at the output: sigmoid(out) * (1 - sigmoid(out)) is the slope at "
       "out, but it is wanted at x. Since out = sigmoid(x), the slope at x is out * (1 - out)."),
    N_("You used x where the formula wants the output: the derivative is sigmoid(x) * (1 - sigmoid(x)) = "
       "out * (1 - out), not x * (1 - x). (In a Function, ctx.save_for_backward() what backward needs, and "
       "unpack ctx.saved_tensors in the same order.)"),
    (N_("sigmoid(x) = 1 / (1 + exp(-x)); its derivative can be written with sigmoid(x) itself."),
     N_("d sigmoid(x)/dx = sigmoid(x) * (1 - sigmoid(x)) = out * (1 - out). Then the chain rule.")),
    N_("out = torch.sigmoid(x); return the gradient for x"),
    N_("out = torch.sigmoid(x), element by element. The backward gets grad_output, the input x and the "
       "output out, and returns dL/dx."))
TANH, SIGMOID = TANH_OP.code(), SIGMOID_OP.code()


MUL = ("def mul_backward(grad_output, x, y):\n    return grad_output * y, grad_output * x",
       "class MyMul(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n"
       "        ctx.save_for_backward(x, y)\n        return x * y\n\n    @staticmethod\n"
       "    def backward(ctx, grad_output):\n        x, y = ctx.saved_tensors\n"
       "        return grad_output * y, grad_output * x")


MUL_TASK = Task(
    "backward_mul", N_("Write the backward of x * y"), 930,
    Op("x * y", torch.mul, ("x", "y"), lambda inputs, out: inputs),
    [(N_("For {inputs} you multiplied by the input itself: d(x * y)/dx = y and d(x * y)/dy = x, so the "
         "gradient for x is grad_output * y and the one for y is grad_output * x. (In a Function, "
         "ctx.save_for_backward() what backward needs, and unpack ctx.saved_tensors in the same order.)"),
      lambda g, x, y: (g * x, g * y))],
    [N_("Two inputs, two gradients: return them as a pair, (gradient for x, gradient for y)."),
     N_("d(x * y)/dx = y (y is a constant then), and d(x * y)/dy = x. Then the chain rule."),
     "return grad_output * y, grad_output * x"],
    [((3,), (3,)), ((2, 3), (2, 3)), ((4, 2), (4, 2))],
    N_("out = x * y; return (gradient for x, gradient for y)"),
    N_("out = x * y, element by element, x and y of the same shape. The backward returns one gradient per "
       "input."),
    MUL)


ADD = ("def add_backward(grad_output, x, b):\n    return grad_output, grad_output.sum_to_size(*b.shape)",
       "class MyAdd(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, b):\n"
       "        ctx.b_shape = b.shape\n        return x + b\n\n    @staticmethod\n"
       "    def backward(ctx, grad_output):\n        return grad_output, grad_output.sum_to_size(*ctx.b_shape)")


ADD_TASK = Task(
    "backward_broadcast_add", N_("Write the backward of a broadcasting add"), 940,
    Op("x + b", torch.add, ("x", "b"), lambda inputs, out: inputs),
    [(N_("For b you averaged grad_output over the broadcast dimensions. Each copy of b counted fully in "
         "the output, so their gradients add up: sum, not mean."),
      lambda g, x, b: (g, g.reshape(-1, b.shape[-1]).mean(0)))],
    [N_("The gradient for x is easy: d(x + b)/dx is 1, so x gets grad_output unchanged."),
     N_("b has shape (m,) but was added to every row of x: each entry of b got used once per row. "
        "A value used several times collects the sum of their gradients."),
     N_("return grad_output, grad_output.sum_to_size(*b.shape)   (or grad_output.reshape(-1, b.shape[0]).sum(0))")],
    [((2, 3), (3,)), ((4, 2), (2,)), ((2, 3, 4), (4,))],
    N_("out = x + b, b broadcast over x's rows; return (gradient for x, gradient for b)"),
    N_("out = x + b where x has shape (..., m) and b shape (m,): b is broadcast, added to every row of x. "
       "grad_output has the shape of out."),
    ADD)


MEAN = ("def mean_backward(grad_output, x):\n    return grad_output.unsqueeze(1).expand_as(x) / x.shape[1]",
        "class MyMean(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.x_shape = x.shape\n        return x.mean(dim=1)\n\n    @staticmethod\n"
        "    def backward(ctx, grad_output):\n        n = ctx.x_shape[1]\n"
        "        return grad_output.unsqueeze(1).expand(ctx.x_shape) / n")


MEAN_TASK = Task(
    "backward_mean", N_("Write the backward of a mean over a dimension"), 950,
    Op("x.mean(dim=1)", lambda x: x.mean(dim=1), ("x",), lambda inputs, out: inputs),
    [(N_("You forgot to divide by n: the mean divides by the number of entries it averages, x.shape[1], "
         "and so does its gradient."), lambda g, x: g.unsqueeze(1).expand_as(x).clone()),
     (N_("You divided by x.numel(), the number of all entries; the mean over dim 1 averages x.shape[1] "
         "of them, and only those share each output."), lambda g, x: g.unsqueeze(1).expand_as(x) / x.numel())],
    [N_("out = x.mean(dim=1) drops dimension 1, so grad_output has x's shape without dimension 1. "
        "Each entry of x took part in one output, with weight 1 / x.shape[1]."),
     N_("Put dimension 1 back with grad_output.unsqueeze(1), then spread it over x's shape with "
        ".expand_as(x) (or let broadcasting do it)."),
     "return grad_output.unsqueeze(1).expand_as(x) / x.shape[1]"],
    [((2, 3),), ((4, 2),), ((2, 3, 4),)],
    N_("out = x.mean(dim=1); return the gradient for x"),
    N_("out = x.mean(dim=1): x has 2 or 3 dimensions, and the mean runs over dimension 1."),
    MEAN)


NEURON = ("def neuron_backward(grad_output, w, x, b, out):\n    local = grad_output * (1 - out**2)\n"
          "    return local * x, local * w, local",
          "class MyNeuron(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, w, x, b):\n"
          "        out = torch.tanh((w * x).sum() + b)\n        ctx.save_for_backward(w, x, out)\n"
          "        return out\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
          "        w, x, out = ctx.saved_tensors\n        local = grad_output * (1 - out**2)\n"
          "        return local * x, local * w, local")


def _neuron(w, x, b):
    return torch.tanh((w * x).sum() + b)


NEURON_TASK = Task(
    "backward_neuron", N_("Write the backward of a neuron, tanh(w . x + b)"), 960,
    Op("torch.tanh((w * x).sum() + b)", _neuron, ("w", "x", "b"), lambda inputs, out: (*inputs, out)),
    [(N_("The factor from tanh is missing: out = tanh(n) with n = w . x + b, so every gradient carries "
         "tanh'(n) = 1 - out**2 (micrograd: self.grad += (1 - t**2) * out.grad)."),
      lambda g, w, x, b, out: (g * x, g * w, g)),
     (N_("You used the pre-activation n = w . x + b in 1 - n**2; tanh'(n) = 1 - tanh(n)**2 = 1 - out**2: "
         "the formula wants the output. (In a Function, ctx.save_for_backward() what backward needs, and unpack "
         "ctx.saved_tensors in the same order.)"),
      lambda g, w, x, b, out: tuple(g * (1 - ((w * x).sum() + b)**2) * t for t in (x, w, torch.ones_like(b)))),
     (N_("You took tanh's derivative at the output, 1 - tanh(out)**2; the slope is wanted at n = w . x + b, "
         "where it is 1 - out**2."),
      lambda g, w, x, b, out: tuple(g * (1 - torch.tanh(out)**2) * t for t in (x, w, torch.ones_like(b)))),
     (N_("For {inputs} you multiplied by the wrong vector: d(w . x)/dw = x and d(w . x)/dx = w. (In a Function, "
         "ctx.save_for_backward() what backward needs, and unpack ctx.saved_tensors in the same order.)"),
      lambda g, w, x, b, out: (g * (1 - out**2) * w, g * (1 - out**2) * x, g * (1 - out**2)))],
    [N_("Go backwards through two steps: n = (w * x).sum() + b, then out = tanh(n). First dL/dn."),
     N_("dL/dn = grad_output * (1 - out**2). Then n is a sum: dn/dw_i = x_i, dn/dx_i = w_i, dn/db = 1."),
     "local = grad_output * (1 - out**2); return local * x, local * w, local"],
    [((3,), (3,), ()), ((4,), (4,), ()), ((5,), (5,), ())],
    N_("out = torch.tanh((w * x).sum() + b); return the gradients for w, x and b"),
    N_("micrograd's classic: one neuron, out = tanh(w . x + b), with w and x vectors and b a number (a 0-d "
       "tensor). grad_output is a number too."),
    NEURON, span=(-1.0, 1.0))

for _task in (TANH_OP.task(), SIGMOID_OP.task(), MUL_TASK, ADD_TASK, MEAN_TASK, NEURON_TASK):
    register(_task.name, _task.title, _task.place)(_task.build)
