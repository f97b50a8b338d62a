"""The code-task kind of exercise: the answer is the learner's function, and the check runs it and
looks at what it does (the values it computes, the gradients that reach the inputs, whether a graph
grows from step to step), never at a value it returns alone. A function that still uses the
placeholder ____ is not attempted."""
from __future__ import annotations

import dis
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..format import message
from ..i18n import N_, _
from . import progress
from .checking import INCORRECT, NOT_ATTEMPTED, Placeholder, Result, WrongForm
from .exercise import Exercise, Note, incorrect
from .forms import Form


def uses_blank(answer) -> bool:
    """Whether a function still holds the placeholder ____ (by name, or returns it).

    >>> from autograd_lab.practice.checking import ____
    >>> uses_blank(lambda x: ____), uses_blank(lambda x: x)
    (True, False)
    """
    code = getattr(answer, "__code__", None)
    if code is None:
        return False
    stack = [code]
    while stack:
        c = stack.pop()
        if "____" in c.co_names:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


def uses_attribute(answer, name: str) -> bool:
    """Whether a function's code reads or writes the attribute `name` (``h.data``), its inner
    functions included: read off the compiled code, never run.

    >>> uses_attribute(lambda h: h.data * 2, "data"), uses_attribute(lambda h: h.detach(), "data")
    (True, False)
    """
    code = getattr(answer, "__code__", None)
    stack, seen = ([code] if code is not None else []), 0
    while stack and seen < 100:
        c = stack.pop()
        seen += 1
        if any(i.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR") and i.argval == name
               for i in dis.get_instructions(c)):
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


DATA = N_("Your function uses .data. Lesson 03 shows why not: autograd does not see a change made through "
          ".data (it skips the version counter), so a gradient can come out silently wrong. Use detach(), "
          "which autograd keeps track of.")


class CodeForm(Form):
    """An answer that is a function; `probe` runs it and returns what it did (an observation),
    raising WrongForm when it cannot be run at all."""

    takes_function = True

    def __init__(self, probe: Callable, example: str, what: str = N_("your function")):
        self.probe, self.example, self.what = probe, example, what

    def read(self, answer):
        if isinstance(answer, torch.Tensor) or not callable(answer):
            raise WrongForm(_("This exercise asks for code: define {what} and pass the function itself, e.g. "
                              "{example}.").format(what=_(self.what), example=self.example))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the learner's code may warn; the verdict says what matters
            return self.probe(answer)

    def same(self, value, target) -> bool:
        return value == target

    def explain(self, value, expected) -> str | None:
        describe = getattr(value, "describe", None)
        return _("What your code does: {behaviour}.").format(behaviour=describe()) if describe else None


@dataclass
class CodeExercise(Exercise):
    """An exercise whose answer is code, checked by what the code does."""

    kind: str = N_("what your code does")
    predicts: bool = False
    refuse_data: bool = False  # a function that uses .data is refused (lesson 03 teaches against it)

    def confirm(self) -> Note:
        """After a check: what your last function did beside what the task asks for."""
        progress.record_confirm(self.name)
        wanted = _("wanted: {behaviour}").format(behaviour=self.expected.describe())
        if self.last_answer is None:
            return Note(_("Confirmed by running it"), _("Your function: none yet (check one first).") + f"\n{wanted}")
        try:
            did = _("your last function: {behaviour}").format(behaviour=self.form.read(self.last_answer).describe())
        except WrongForm as err:
            did = _("your last function: {behaviour}").format(behaviour=err)
        return Note(_("Confirmed by running it"), f"{did}\n{wanted}")

    def _verdict(self, answer) -> Result:
        if callable(answer) and not isinstance(answer, (torch.Tensor, Placeholder)) and uses_blank(answer):
            return Result(self.name, NOT_ATTEMPTED, _("Not attempted yet: your function still uses ____; "
                                                      "replace it, then {example}").format(example=self.example))
        if self.refuse_data and callable(answer) and uses_attribute(answer, "data"):
            return Result(self.name, INCORRECT, incorrect(_(DATA)), "uses_data")
        return super()._verdict(answer)


def call(fn: Callable, *args, what: str = N_("Your function")):
    """Call the learner's function; its exception becomes a WrongForm that says what it raised.
    RuntimeErrors from autograd are returned, not raised: they are part of the behaviour. `what` names
    the function in the message (translated when shown, so an N_() constant will do)."""
    try:
        return fn(*args)
    except RuntimeError as err:
        return err
    except Exception as err:
        # Translators: {what} is "Your function" or "Your step"; {error} is the Python exception's name
        raise WrongForm(_("{what} raised {error}: {message}").format(what=_(what), error=type(err).__name__,
                                                                      message=message(err))) from None
