"""One exercise as data: its setup code, its question, the expected answer computed by torch,
the diagnosers of common wrong answers, hints in order and a worked solution; and the check that
turns an answer into a verdict which teaches."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..errors import LabInputError
from . import progress
from .checking import CORRECT, INCORRECT, NOT_ATTEMPTED, Result, WrongForm, is_placeholder
from .forms import Form

_UNSET = object()


@dataclass
class Diagnoser:
    """A known wrong answer and what to say about it: either a value computed by torch (matched
    with the form's tolerance) or a test `when` on the read answer. `part` picks one part of a
    several-part answer."""

    message: str
    value: Any = _UNSET
    when: Callable | None = None
    part: int | None = None

    def matches(self, form: Form, answer) -> bool:
        if self.part is not None:
            form, answer = form.parts[self.part][1], answer[self.part]  # type: ignore[attr-defined]
        if self.when is not None:
            return bool(self.when(answer))
        return form.same(answer, self.value)


@dataclass(frozen=True)
class Note:
    """A hint or a solution; shows as its title and text."""

    title: str
    text: str

    def __repr__(self) -> str:
        return f"{self.title}\n{self.text}"


@dataclass
class Exercise:
    """An exercise: ``ex.check(answer)``, ``ex.hint()``, ``ex.solution()``. Its name and title are
    given by its registration (see registry.py).

    >>> from autograd_lab.practice.forms import TensorForm
    >>> import torch
    >>> ex = Exercise(intro="", setup="", question="", answer_form="", form=TensorForm(),
    ...               expected=torch.tensor([2.0]), hints=["Think."], solution_text="2", name="doc")
    >>> ex.check([2.0]).status, ex.check([3.0]).status
    ('correct', 'incorrect')
    """

    intro: str
    setup: str
    question: str
    answer_form: str
    form: Form
    expected: Any
    hints: list[str]
    solution_text: str
    diagnosers: list[Diagnoser] = field(default_factory=list)
    kind: str = "the gradient"
    praise: str = ""
    seed: int | None = None
    example: str = ""
    hints_shown: int = 0
    name: str = ""
    title: str = ""

    def __post_init__(self):
        self.example = self.example or self.form.example
        # a wrong answer computed by torch that happens to equal the right one (say, a random x
        # with a zero in it) must never be reported as a mistake
        self.diagnosers = [d for d in self.diagnosers if d.when is not None or d.part is not None
                           or not self.form.same(d.value, self.expected)]

    def check(self, answer) -> Result:
        """The verdict on one answer; in grading mode a wrong answer raises AssertionError."""
        result = self._verdict(answer)
        progress.record_check(self.name, result.status)
        if progress.grading() and not result.correct:
            raise AssertionError(result.message)
        return result

    def _verdict(self, answer) -> Result:
        if is_placeholder(answer):
            return Result(self.name, NOT_ATTEMPTED, f"Not attempted yet: replace ____ with your answer, "
                                                    f"e.g. {self.example}")
        try:
            value = self.form.read(answer)
        except WrongForm as err:
            return Result(self.name, INCORRECT, f"Incorrect. {err}")
        if self.form.same(value, self.expected):
            return Result(self.name, CORRECT, "Correct!" + (f" {self.praise}" if self.praise else ""))
        for diagnoser in self.diagnosers:
            if diagnoser.matches(self.form, value):
                return Result(self.name, INCORRECT, f"Incorrect. {diagnoser.message}")
        why = self.form.explain(value, self.expected)
        if why:
            return Result(self.name, INCORRECT, f"Incorrect. {why}")
        return Result(self.name, INCORRECT, f"Incorrect: this is not {self.kind}. Expected "
                                            f"{self.answer_form}. {self._offer()}")

    def _offer(self) -> str:
        if self.hints_shown < len(self.hints):
            return f"For hint {self.hints_shown + 1} of {len(self.hints)}, call .hint()."
        return "All hints are out; .solution() shows the worked solution."

    def hint(self, n: int | None = None) -> Note:
        """The next hint, or hint number n (counting from 1)."""
        if n is None:
            n = min(self.hints_shown + 1, len(self.hints))
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(self.hints):
            raise LabInputError(f"hint({n!r}) does not exist: {self.name} has hints 1 to "
                                f"{len(self.hints)}; type .hint() for the next one.")
        self.hints_shown = max(self.hints_shown, n)
        progress.record_hint(self.name, n)
        return Note(f"Hint {n} of {len(self.hints)}", self.hints[n - 1])

    def solution(self) -> Note:
        """The worked solution, with the values torch computed."""
        progress.record_solution(self.name)
        return Note("Solution", self.solution_text)

    @property
    def make_code(self) -> str:
        """The line that makes this exercise in a learner's notebook."""
        seed = f", seed={self.seed}" if self.seed is not None else ""
        return f'ex = autograd_lab.exercise("{self.name}"{seed})'

    def __repr__(self) -> str:
        return f"<exercise {self.name}" + (f" (seed {self.seed})" if self.seed is not None else "") + ">"
