"""The implement-a-backward kind of exercise: the answer is a backward (a function or a
torch.autograd.Function subclass), read by running it on the exercise's cases, compared with the
engine and with finite differences, and diagnosed with the mistakes of backward_mistakes.py."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..format import number
from ..i18n import N_, _
from .backward_check import Attempt, Case, Op, engine, numeric_vjp, one_case, run_backward, same_grad
from .backward_mistakes import diagnosers, mistake, same_parts, standard_mistakes
from .checking import NOT_ATTEMPTED, Result, is_placeholder, shape_text
from .exercise import Exercise
from .forms import Form


class BackwardForm(Form):
    """An answer that is a backward; read() runs it on every case (an Attempt)."""

    takes_function = True

    def __init__(self, op: Op, cases: list[Case], example: str):
        self.op, self.cases, self.example = op, cases, example

    def read(self, answer) -> Attempt:
        return run_backward(self.op, answer, self.cases)

    def same(self, value, target) -> bool:
        return (same_parts(value, target, range(len(self.op.names)))
                and (target.fd is None or value.fd == target.fd))

    def explain(self, value: Attempt, expected: Attempt) -> str | None:
        n, names = len(self.cases), self.op.names
        for i, (case, mine, right) in enumerate(zip(self.cases, value.grads, expected.grads, strict=True)):
            for name, m, r in zip(names, mine, right, strict=True):
                if tuple(m.shape) != tuple(r.shape):
                    return _("On input {i} of {n} ({case}) your gradient for {name} has shape {shape}, but {name} "
                             "has shape {wanted}: a backward returns, for each input, a gradient of exactly that "
                             "input's shape.").format(i=i + 1, n=n, case=case.describe(names), name=name,
                                                      shape=shape_text(m.shape), wanted=shape_text(r.shape))
        wrong = [(i, k) for i, (mine, right) in enumerate(zip(value.grads, expected.grads, strict=True))
                 for k in range(len(names)) if not same_grad(mine[k], right[k])]
        if not wrong:
            failed = [str(i + 1) for i, ok in enumerate(value.fd or ()) if not ok]
            return _("Your gradients equal the engine's for the grad_output the lab passed, but gradcheck "
                     "fails on input {inputs}: your backward must be linear in grad_output "
                     "(grad_output times something that does not depend on it).").format(inputs=", ".join(failed))
        i, k = wrong[0]
        case = self.cases[i]
        got: torch.Tensor = value.grads[i][k]
        want: torch.Tensor = expected.grads[i][k]
        at = tuple(int(j) for j in torch.nonzero(~torch.isclose(got, want, 1e-5, 1e-8))[0].tolist())
        fd = numeric_vjp(self.op.fn, case.inputs, case.grad_output)[k]
        cases_wrong = len({c for c, _ in wrong})
        return _("Your gradient for {name} is wrong on {wrong} of {n} inputs. On input {i} ({case}), at index "
                 "{index}: yours is {yours}, the engine's (torch.autograd.grad) is {engine}, finite differences "
                 "give {fd}.").format(name=names[k], wrong=cases_wrong, n=n, i=i + 1, case=case.describe(names),
                                      index=list(at), yours=number(float(got[at])),
                                      engine=number(float(want[at])), fd=number(float(fd[at])))


def returns_blank(form: BackwardForm, answer) -> bool:
    """Whether a backward still returns the placeholder ____ (or fails only because of it)."""
    if not callable(answer) or isinstance(answer, torch.Tensor):
        return False
    try:
        return any(is_placeholder(r) for r in one_case(form.op, answer, form.cases[0]))
    except Exception as err:
        return "Placeholder" in str(err) or "____" in str(err)


@dataclass
class BackwardExercise(Exercise):
    """An exercise whose answer is a backward; a backward that still returns ____ is not attempted."""

    kind: str = N_("the backward")
    predicts: bool = False  # the answer is code, not a prediction of numbers

    def _verdict(self, answer) -> Result:
        if returns_blank(self.form, answer):  # type: ignore[arg-type]
            return Result(self.name, NOT_ATTEMPTED, _("Not attempted yet: your backward still returns ____; "
                                                      "replace it with the gradient, then {example}").format(
                                                          example=self.example))
        return super()._verdict(answer)


def backward_exercise(op: Op, cases: list[Case], specific: list[tuple], *, example: str,
                      **statement) -> BackwardExercise:
    """Build the exercise: the engine's gradients are the expected answer (confirmed by gradcheck);
    the standard mistakes and the exercise's own (message, wrong backward[, ask]) are diagnosed.

    >>> from autograd_lab.practice.backward_check import random_cases
    >>> op = Op("2 * x", lambda x: 2 * x, ("x",), lambda inputs, out: inputs)
    >>> ex = backward_exercise(op, random_cases([((3,),), ((2, 2),)]), [], example="ex.check(backward)",
    ...                        intro="", setup="", question="", answer_form="", hints=["h"], solution_text="")
    >>> ex.check(lambda g, x: 2 * g).status, ex.check(lambda g, x: -2 * g).message[:44]
    ('correct', 'Incorrect. The sign of your gradient for x i')
    """
    expected = engine(op, cases)
    mistakes = [mistake(op, cases, *given) for given in specific]
    mistakes += standard_mistakes(op, cases, expected)
    shapes = "; ".join(_shapes([shape_text(t.shape) for t in c.inputs]) for c in cases)
    praise = _("Your backward agrees with the engine (torch.autograd.grad) and with finite differences "
               "(torch.autograd.gradcheck) on {n} random inputs of shapes {shapes}.").format(n=len(cases),
                                                                                            shapes=shapes)
    return BackwardExercise(form=BackwardForm(op, cases, example), expected=expected,
                            diagnosers=diagnosers(op, expected, mistakes), praise=praise, **statement)


def _shapes(shapes: list[str]) -> str:
    """'(3,)', or '(2, 3) and (3,)' for the inputs of one case."""
    listed = shapes[0]
    for shape in shapes[1:]:
        # Translators: the shapes of one case's inputs, e.g. "(2, 3) and (3,)"
        listed = _("{earlier} and {last}").format(earlier=listed, last=shape)
    return listed

