"""What several topics build the same way: the x most prediction exercises start from, and the
exercises that predict x.grad, a pair of tensors, or yes/no answers where one case is the surprise.
Each helper fills the form, the expected answer and the fields that follow from them; the topic
gives the rest of the statement (Exercise's fields) as keywords."""
from __future__ import annotations

import torch

from ..checking import shape_text
from ..choices import FlagsForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ..run import tensor_code, variant_values

COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}


def x_line(seed) -> str:
    """The line that makes x = [1, 2, 3] (a float64 leaf that requires grad), or the seed's own values.

    >>> x_line(None)
    'x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)'
    """
    return tensor_code("x", variant_values(seed, [1.0, 2.0, 3.0]))


def x_grad(expected: torch.Tensor, **statement) -> Exercise:
    """Predict x.grad, torch's value expected; unless the statement says otherwise the question is
    "What is x.grad?" and the answer a float tensor of x's shape.

    >>> ex = x_grad(torch.tensor([2.0]), intro="", setup="", hints=[], solution_text="")
    >>> ex.answer_form, ex.check([2.0]).status
    ("x.grad: a float tensor with x's shape (1,)", 'correct')
    """
    statement.setdefault("question", "What is x.grad?")
    statement.setdefault("answer_form", f"x.grad: a float tensor with x's shape {shape_text(expected.shape)}")
    return Exercise(form=TensorForm("x.grad"), expected=expected, **statement)


def tensor_pair(first: tuple[str, str, torch.Tensor], second: tuple[str, str, torch.Tensor],
                diagnosers: list[Diagnoser], **statement) -> Exercise:
    """Predict two tensors at once, each given as (its label, the tensor it belongs to, torch's
    value), answered as a pair in that order; the first known mistake is the two swapped.

    >>> ex = tensor_pair(("g", "x", torch.tensor([1.0])), ("x.grad", "x", torch.tensor([2.0])), [],
    ...                  intro="", setup="", question="", hints=[], solution_text="")
    >>> ex.answer_form, ex.check(([2.0], [1.0])).message
    ('the pair (g, x.grad), each a tensor of shape (1,)', 'Incorrect. You swapped the two: g first, then x.grad.')
    """
    (a, a_of, a_value), (b, b_of, b_value) = first, second
    swapped = Diagnoser(f"You swapped the two: {a} first, then {b}.", (b_value, a_value))
    return Exercise(form=PartsForm([(a, TensorForm(a, a_of)), (b, TensorForm(b, b_of))]),
                    expected=(a_value, b_value), diagnosers=[swapped, *diagnosers],
                    answer_form=f"the pair ({a}, {b}), each a tensor of shape {shape_text(a_value.shape)}",
                    **statement)


def flags(keys: list[str], expected: tuple[bool, ...], at: int, about_it: str, about_rest: str,
          **statement) -> Exercise:
    """Yes/no answers, one per key in order, where the case at index `at` is the surprise: a wrong
    answer there is told about_it, a wrong answer to any other about_rest.

    >>> ex = flags(["a", "b"], (True, False), 1, "B is no.", "A is yes.", intro="", setup="",
    ...            question="", hints=[], solution_text="")
    >>> ex.answer_form, ex.check("yes, yes").message
    ('two yes/no answers in the order (a, b)', 'Incorrect. B is no.')
    """
    count = COUNTS[len(keys)]
    diagnosers = [
        Diagnoser(about_it, when=lambda v: v[at] != expected[at]),
        Diagnoser(about_rest, when=lambda v: any(v[i] != expected[i] for i in range(len(keys)) if i != at)),
    ]
    return Exercise(form=FlagsForm(keys), expected=expected, diagnosers=diagnosers, kind=f"the {count} yes/no answers",
                    answer_form=f"{count} yes/no answers in the order ({', '.join(keys)})", **statement)
