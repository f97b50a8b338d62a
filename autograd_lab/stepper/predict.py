"""Checking a learner's prediction of a step against what the engine really computed, with the
exercises' one rule for typed numbers (practice/digits.py), and naming the usual mistakes when the
step is given: the gradient arriving instead of the one sent on, the previous or next node's
values, the local derivative alone, a constant factor missing from it."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..format import number
from ..i18n import _
from ..practice.checking import WrongForm
from ..practice.digits import CLOSE, CUT, CUT_VERDICT, RIGHT, WRONG, Numbers, close_reason, judge
from ..practice.reading import read_numbers
from ..tensors import Summary


@dataclass(frozen=True)
class Verdict:
    """right, and a message that does not repeat the word (the stepper shows right or wrong
    before it); difference: the largest absolute difference, when comparable."""

    right: bool
    message: str
    difference: float | None = None
    diagnosis: str = ""  # a stable id of the mistake named (or of an answer that could not be compared)


# Answers that could not be compared with the step (unreadable, the wrong shape, the wrong count): the
# stepper reveals nothing for them.
UNREADABLE, SHAPE, COUNT = "unreadable", "shape", "count"
NOT_COMPARED = (UNREADABLE, SHAPE, COUNT)


def compare(answer, expected, step=None) -> Verdict:
    """Compare an answer (number, nested list, text, tensor, or a tuple of them for several
    outputs); with the trace's step, a wrong answer is matched against the usual mistakes.

    >>> compare([0.667, 1.333, 2.0], torch.tensor([2/3, 4/3, 2.])).right
    True
    >>> compare([0.67, 1.33, 2.0], torch.tensor([2/3, 4/3, 2.])).message
    'close: give three significant digits'
    """
    if isinstance(expected, tuple):
        expected = tuple(e for e in expected if e is not None)
        if len(expected) != 1:
            return _several(answer, expected)
        expected = expected[0]
    if isinstance(expected, Summary):
        return Verdict(False, _("this gradient has {count} values; predict a smaller example").format(
            count=expected.numel))
    if expected is None:
        return Verdict(False, _("nothing is sent on from this node"))
    try:
        given = read_numbers(answer)  # "The gradient", translated by read_numbers
    except WrongForm as err:
        return Verdict(False, _("could not read {kind} as numbers: type a number, a list like [1.0, 2.0], or an "
                                "expression ({error})").format(kind=type(answer).__name__, error=err),
                       diagnosis=UNREADABLE)
    target = expected.detach().to(torch.float64).cpu()
    if given.values.shape != target.shape:
        if given.values.numel() == 1 and target.numel() == 1:
            given = Numbers(given.values.reshape(target.shape), given.half.reshape(target.shape),
                            given.digits.reshape(target.shape), given.eps)
        else:
            return Verdict(False, _("wrong shape: you gave {given}, the gradient has shape {shape} (one value per "
                                    "element of the input)").format(given=tuple(given.values.shape),
                                                                    shape=tuple(target.shape)),
                           diagnosis=SHAPE)
    diff = float((given.values - target).abs().max()) if target.numel() else 0.0
    grade = judge(given, target)
    if grade == RIGHT:
        return Verdict(True, _("matches the engine") if diff < 1e-12 else _("matches the engine to the digits you "
                                                                             "gave"), diff)
    if grade == CLOSE and close_reason(given, target) == CUT:  # 0.666 for 2/3: cut off, not rounded
        return Verdict(False, _(CUT_VERDICT), diff, CUT)
    if grade == CLOSE:
        return Verdict(False, _("close: give three significant digits"), diff, "too_few_digits")
    found = diagnose(given, target, step) if step is not None else None
    if found:
        key, said = found
        return Verdict(False, _("{mistake} (off by up to {difference})").format(mistake=said,
                                                                                difference=number(diff)), diff, key)
    return Verdict(False, _("off by up to {difference}").format(difference=number(diff)), diff)


def _several(answer, expected: tuple) -> Verdict:
    """A node that sends several gradients: one prediction per input, in a tuple."""
    if not isinstance(answer, (tuple, list)) or len(answer) != len(expected) or _is_flat_numbers(answer):
        return Verdict(False, _("this node sends {count} gradients: give them as a tuple, one per input, e.g. "
                                "(g1, g2)").format(count=len(expected)), diagnosis=COUNT)
    verdicts = [compare(a, e) for a, e in zip(answer, expected, strict=True)]
    worst = max((v.difference or 0.0) for v in verdicts)
    if all(v.right for v in verdicts):
        return Verdict(True, _("all gradients match the engine"), worst)
    wrong = [str(i + 1) for i, v in enumerate(verdicts) if not v.right]
    # one input that could not be compared: the whole answer was not
    unread = next((v.diagnosis for v in verdicts if v.diagnosis in NOT_COMPARED), "")
    return Verdict(False, _("not for input {inputs}: {messages}").format(
        inputs=", ".join(wrong), messages="; ".join(v.message for v in verdicts if not v.right)), worst, unread)


def diagnose(given: Numbers, target: torch.Tensor, step) -> tuple[str, str] | None:
    """(id, message) of the usual mistake a wrong prediction of this step matches, or None."""
    steps = list(getattr(step.trace, "steps", ()) or ())
    arriving = _single(step.grad_outputs)
    if arriving is not None and _fits(given, arriving):
        return ("arriving", _("that is the gradient arriving at this node; it sends on that gradient times its "
                              "local derivative"))
    if step.index > 0 and steps:
        sent_before = _single(steps[step.index - 1].grad_inputs)
        if sent_before is not None and _fits(given, sent_before):
            return ("previous_node", _("that is what the previous node, {node}, sent on").format(
                node=steps[step.index - 1].name))
    if step.index + 1 < len(steps):
        after = steps[step.index + 1]
        sent_after = _single((after.grad_after,) if after.node.is_accumulator else after.grad_inputs)
        if sent_after is not None and _fits(given, sent_after):
            return ("next_node", _("that is what the next node, {node}, sends on: this one runs first").format(
                node=after.name))
    if arriving is not None and arriving.shape == target.shape and bool((arriving != 0).all()):
        local = target / arriving.double()
        if _fits(given, local):
            return ("local_only", _("that is the local derivative alone: the chain rule multiplies it by the "
                                    "gradient arriving"))
    ratio = _constant_ratio(given.values, target)
    if ratio is not None:
        return ("factor", _("a constant factor of the local derivative is missing or extra: every value is off "
                            "by the same factor"))
    return None


def _single(values):
    found = [v for v in (values or ()) if isinstance(v, torch.Tensor)]
    return found[0].detach().double().cpu() if len(found) == 1 else None


def _fits(given: Numbers, value: torch.Tensor) -> bool:
    return tuple(given.values.shape) == tuple(value.shape) and judge(given, value) != WRONG


def _constant_ratio(value: torch.Tensor, target: torch.Tensor) -> float | None:
    if target.numel() < 2 or bool((target == 0).any()):
        return None
    ratio = (value / target).flatten()
    if float((ratio - ratio[0]).abs().max()) < 1e-3 and abs(float(ratio[0]) - 1) > 1e-3:
        return float(ratio[0])
    return None


def _is_flat_numbers(answer) -> bool:
    return all(isinstance(a, (int, float)) for a in answer)


def judged(verdict: Verdict, expected) -> bool:
    """Whether the answer was compared at all: an unreadable answer or a wrong shape was not, and
    then the stepper reveals nothing.

    >>> judged(compare("abc", torch.tensor([1.0])), torch.tensor([1.0]))
    False
    """
    if verdict.right:
        return True
    values = [e for e in expected if e is not None] if isinstance(expected, tuple) else [expected]
    if not values or not all(isinstance(v, torch.Tensor) for v in values):
        return True  # nothing to predict (a summary, or nothing sent on): the step is shown
    return verdict.difference is not None and verdict.diagnosis not in NOT_COMPARED
