"""What a check can say: the placeholder ``____`` that marks an untouched answer, the four
outcomes, the error for an answer of the wrong form, and small helpers for messages about numbers.
Reading numbers with their digits is in reading.py, the rule that judges them in digits.py."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..i18n import N_, _

CORRECT, INCORRECT, NOT_ATTEMPTED = "correct", "incorrect", "not attempted"
#: right to the digits written but too few of them, or cut off instead of rounded: not correct, not wrong
CLOSE = "close"
#: how each status reads to the learner (the status itself is a value the code compares)
STATUS_LABELS = {CORRECT: N_("correct"), CLOSE: N_("close"), INCORRECT: N_("incorrect"),
                 NOT_ATTEMPTED: N_("not attempted")}


def status_label(status: str) -> str:
    """A status as the learner reads it, in the lab's language.

    >>> status_label("not attempted")
    'not attempted'
    """
    return _(STATUS_LABELS[status]) if status in STATUS_LABELS else status


class Placeholder:
    """The blank in an exercise notebook: ``ex.check(____)`` reports "not attempted".

    Arithmetic on the blank stays the blank, so ``2 * ____`` is still unanswered.

    >>> ____
    ____
    """

    def __repr__(self) -> str:
        return "____"

    def _blank(self, *args, **kwargs):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _blank
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __matmul__ = _blank
    __call__ = __getitem__ = _blank

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


____ = Placeholder()


def is_placeholder(answer, depth: int = 3) -> bool:
    """True when the answer is the blank, or a tuple, list or dict still holding one."""
    if isinstance(answer, Placeholder):
        return True
    if depth and isinstance(answer, (tuple, list, set, frozenset)):
        return any(is_placeholder(a, depth - 1) for a in answer)
    if depth and isinstance(answer, dict):
        return any(is_placeholder(a, depth - 1) for a in answer.values())
    return False


@dataclass(frozen=True)
class Result:
    """The verdict of one check: ``status`` is "correct", "close", "incorrect" or "not attempted".

    A result shown in a notebook cell reads as its message.

    >>> Result("mean_square", CORRECT, "Correct.").correct
    True
    """

    exercise: str
    status: str
    message: str
    diagnosis: str = ""  # a stable id of the mistake named, for teachers' counts (not the text)

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return self.message


class NotCorrect(AssertionError):
    """What a check that is not correct raises in grading mode: its message, and the Result itself
    (so that a widget still shows its own status, "close" included)."""

    def __init__(self, result: Result):
        super().__init__(result.message)
        self.result = result


class WrongForm(Exception):
    """The answer is not of a form the exercise can read; the message says which form it wants."""


def safe_repr(value) -> str:
    """repr(value), or the type's name in angle brackets when its __repr__ raises (quote() bounds it)."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def near(value: torch.Tensor, expected: torch.Tensor) -> bool:
    """Right to two or three decimals but not to four: rounded too early."""
    if tuple(value.shape) != tuple(expected.shape):
        return False
    gap = (value.double() - expected.double()).abs()
    return bool((gap <= 5e-3 + 5e-3 * expected.double().abs()).all())


def shape_text(shape) -> str:
    dims = tuple(shape)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
