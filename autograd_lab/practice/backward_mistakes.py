"""The usual mistakes in a hand-written backward, each computed as the gradients it would give, and
turned into diagnosers that name it only when the learner's backward gives exactly those gradients
on every input checked (and the mistake differs from the right answer on at least two of them, so
a coincidence of numbers is never named)."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import torch

from ..format import listed
from ..i18n import N_, _
from .backward_check import Attempt, Case, Op, leaves, run_backward, same_grad
from .exercise import Diagnoser

SIGN = N_("The sign of your gradient for {inputs} is flipped, on every input checked. backward returns "
           "grad_output times d(out)/d(input), with no minus sign: stepping downhill is the optimizer's "
           "job, not backward's.")
CHAIN = N_("Your gradient for {inputs} is what it would be if grad_output were all ones: you forgot to "
           "multiply by grad_output, the gradient arriving from above. The chain rule: the gradient for "
           "an input is grad_output times the local derivative. (The lab checks with a grad_output that "
           "is not all ones; only the very top of a backward() from a scalar loss gets ones.)")
BROADCAST = N_("Your gradient for {inputs} has the output's shape, not its own. {inputs} was broadcast in "
               "the forward: each of its entries was used once per row of the output, so their gradients "
               "add up. Sum over the broadcast dimensions, back to the input's shape "
               "(grad.sum_to_size(*{inputs}.shape) does it). Inside a torch.autograd.Function the engine "
               "happens to sum such a gradient for you, but a backward should return each input's own shape.")
#: what a first such mistake is told: the step to re-think, without the code that does it
BROADCAST_ASK = N_("Your gradient for {inputs} has the output's shape, not its own: {inputs} was broadcast in the "
                   "forward, each of its entries used once per row of the output. What does an entry used "
                   "several times collect from those uses, and what shape must its gradient have?")
CONFIRMATIONS = 2  # a mistake is named only if it differs from the right answer on this many inputs


@dataclass(frozen=True)
class Mistake:
    """A known wrong backward: its message ({inputs} is filled with the inputs it concerns; translated
    when the diagnosers are made, so an N_() constant will do), the gradients it gives on the
    exercise's cases, and `ask`, what a first such mistake is told ("" to say the message at once)."""

    message: str
    attempt: Attempt
    ask: str = ""

    def __repr__(self) -> str:
        return f"<mistake {self.message[:40]!r}>"


def mistake(op: Op, cases: list[Case], message: str, backward, ask: str = "") -> Mistake:
    """A mistake written as a wrong backward with the learner's signature.

    >>> from autograd_lab.practice.backward_check import random_cases
    >>> op = Op("x * 2", lambda x: x * 2, ("x",), lambda inputs, out: inputs)
    >>> mistake(op, random_cases([((2,),)]), "Halved.", lambda g, x: g).attempt.grads[0][0].shape
    torch.Size([2])
    """
    return Mistake(message, run_backward(op, backward, cases, finite_differences=False), ask)


def _engine_with(op: Op, case: Case, grad_output, expand: int | None = None) -> tuple:
    ins = list(leaves(case))
    if expand is not None:  # that input as the output-shaped copy the forward really used
        shape = torch.broadcast_shapes(*(t.shape for t in case.inputs))
        ins[expand] = case.inputs[expand].expand(shape).clone().requires_grad_()
    return tuple(g.detach() for g in torch.autograd.grad(op.fn(*ins), ins, grad_output))


def standard_mistakes(op: Op, cases: list[Case], expected: Attempt) -> list[Mistake]:
    """The mistakes any backward can make, computed by the engine: the sign flipped, grad_output
    left out (the engine's gradient for an all-ones grad_output) and, for inputs the forward
    broadcast, the gradient left in the output's shape."""
    found = [Mistake(SIGN, Attempt(tuple(tuple(-g for g in row) for row in expected.grads))),
             Mistake(CHAIN, Attempt(tuple(_engine_with(op, c, torch.ones_like(c.grad_output)) for c in cases)))]
    for k in range(len(op.names)):
        if any(c.inputs[k].numel() < c.grad_output.numel() for c in cases):
            rows = tuple(tuple(_engine_with(op, c, c.grad_output, expand=k)[j] if j == k else g
                               for j, g in enumerate(row)) for c, row in zip(cases, expected.grads, strict=True))
            found.append(Mistake(BROADCAST, Attempt(rows), BROADCAST_ASK))
    return found


def same_parts(value: Attempt, target: Attempt, parts) -> bool:
    """Whether two attempts give the same gradients for the given inputs on every case."""
    return len(value.grads) == len(target.grads) and all(
        same_grad(v[k], t[k]) for v, t in zip(value.grads, target.grads, strict=True) for k in parts)


def _names(names: list[str]) -> str:
    """'x', 'x and y', 'x, y and z'.

    >>> _names(["x", "y", "z"])
    'x, y and z'
    """
    if len(names) == 1:
        return names[0]
    # Translators: the last two names of a list of inputs ("x, y and z"); {earlier} may hold several
    return _("{earlier} and {last}").format(earlier=listed(names[:-1]), last=names[-1])


def diagnosers(op: Op, expected: Attempt, mistakes: list[Mistake]) -> list[Diagnoser]:
    """One diagnoser per mistake and per group of inputs it gets wrong, the biggest groups first:
    it matches when the learner's gradients for those inputs equal the mistake's on every case."""
    found = []
    for m in mistakes:
        wrong = [k for k in range(len(op.names))
                 if sum(not same_grad(w[k], e[k]) for w, e in zip(m.attempt.grads, expected.grads, strict=True))
                 >= min(CONFIRMATIONS, len(expected.grads))]
        for size in range(len(wrong), 0, -1):
            for group in combinations(wrong, size):
                inputs = _names([op.names[k] for k in group])
                text, ask = _(m.message).format(inputs=inputs), _(m.ask).format(inputs=inputs) if m.ask else ""
                found.append((size, Diagnoser(text, when=lambda v, a=m.attempt, g=group: same_parts(v, a, g),
                                              ask=ask)))
    return [d for _, d in sorted(found, key=lambda pair: -pair[0])]
