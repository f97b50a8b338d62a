"""The implement-a-backward kind of exercise: the answer is a backward (a function or a
torch.autograd.Function subclass), read by running it on the exercise's cases, compared with the
engine and with finite differences, and diagnosed with the mistakes of backward_mistakes.py."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..format import number
from .backward_check import Attempt, Case, Op, engine, numeric_vjp, one_case, run_backward, same_grad
from .backward_mistakes import diagnosers, mistake, same_parts, standard_mistakes
from .checking import NOT_ATTEMPTED, Result, is_placeholder, shape_text
from .exercise import Exercise
from .forms import Form


class BackwardForm(Form):
    """An answer that is a backward; read() runs it on every case (an Attempt)."""

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
                    return (f"On input {i + 1} of {n} ({case.describe(names)}) your gradient for {name} has "
                            f"shape {shape_text(m.shape)}, but {name} has shape {shape_text(r.shape)}: a "
                            "backward returns, for each input, a gradient of exactly that input's shape.")
        wrong = [(i, k) for i, (mine, right) in enumerate(zip(value.grads, expected.grads, strict=True))
                 for k in range(len(names)) if not same_grad(mine[k], right[k])]
        if not wrong:
            failed = [str(i + 1) for i, ok in enumerate(value.fd or ()) if not ok]
            return (f"Your gradients equal the engine's for the grad_output the lab passed, but gradcheck "
                    f"fails on input {', '.join(failed)}: your backward must be linear in grad_output "
                    "(grad_output times something that does not depend on it).")
        i, k = wrong[0]
        case = self.cases[i]
        got: torch.Tensor = value.grads[i][k]
        want: torch.Tensor = expected.grads[i][k]
        at = tuple(int(j) for j in torch.nonzero(~torch.isclose(got, want, 1e-5, 1e-8))[0].tolist())
        fd = numeric_vjp(self.op.fn, case.inputs, case.grad_output)[k]
        cases_wrong = len({c for c, _ in wrong})
        return (f"Your gradient for {names[k]} is wrong on {cases_wrong} of {n} inputs. On input {i + 1} "
                f"({case.describe(names)}), at index {list(at)}: yours is {number(float(got[at]))}, the "
                f"engine's (torch.autograd.grad) is {number(float(want[at]))}, finite differences give "
                f"{number(float(fd[at]))}.")


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

    kind: str = "the backward"
    predicts: bool = False  # the answer is code, not a prediction of numbers

    def _verdict(self, answer) -> Result:
        if returns_blank(self.form, answer):  # type: ignore[arg-type]
            return Result(self.name, NOT_ATTEMPTED, "Not attempted yet: your backward still returns "
                                                    f"____; replace it with the gradient, then {self.example}")
        return super()._verdict(answer)


def backward_exercise(op: Op, cases: list[Case], specific: list[tuple[str, object]], *, example: str,
                      **statement) -> BackwardExercise:
    """Build the exercise: the engine's gradients are the expected answer (confirmed by gradcheck);
    the standard mistakes and the exercise's own (message, wrong backward) pairs are diagnosed.

    >>> from autograd_lab.practice.backward_check import random_cases
    >>> op = Op("2 * x", lambda x: 2 * x, ("x",), lambda inputs, out: inputs)
    >>> ex = backward_exercise(op, random_cases([((3,),), ((2, 2),)]), [], example="ex.check(backward)",
    ...                        intro="", setup="", question="", answer_form="", hints=["h"], solution_text="")
    >>> ex.check(lambda g, x: 2 * g).status, ex.check(lambda g, x: -2 * g).message[:44]
    ('correct', 'Incorrect. The sign of your gradient for x i')
    """
    expected = engine(op, cases)
    mistakes = [mistake(op, cases, message, wrong) for message, wrong in specific]
    mistakes += standard_mistakes(op, cases, expected)
    shapes = "; ".join(" and ".join(shape_text(t.shape) for t in c.inputs) for c in cases)
    praise = (f"Your backward agrees with the engine (torch.autograd.grad) and with finite differences "
              f"(torch.autograd.gradcheck) on {len(cases)} random inputs of shapes {shapes}.")
    return BackwardExercise(form=BackwardForm(op, cases, example), expected=expected,
                            diagnosers=diagnosers(op, expected, mistakes), praise=praise, **statement)

