"""One exercise as data: its setup code, its question, the expected answer computed by torch,
the diagnosers of common wrong answers, hints in order and a worked solution; and the check that
turns what the learner typed into a verdict which teaches. A prediction is the learner's own: a
tensor they typed is checked, but autograd's own gradient (a tensor or an array sharing its memory,
traced.py) is not an answer; ex.confirm() shows autograd's beside the learner's last answer. A known
mistake made for the first time gets a question pointing at the step to re-think (its `ask`); the
whole explanation comes when the same mistake is made again, or through .hint()."""
from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..errors import LabInputError
from ..format import fmt, quote
from ..i18n import N_, _
from . import progress
from .checking import (CLOSE as CLOSE_STATUS, CORRECT, INCORRECT, NOT_ATTEMPTED, NotCorrect, Result, WrongForm,
                       is_placeholder, safe_repr, status_label)
from .digits import CLOSE, CUT, RIGHT
from .forms import Form, FunctionForm, PartsForm, TensorForm, factors_of
from .messages import ambiguous
from .traced import traced

_UNSET = object()
TENSOR_GIVEN = N_("Not attempted: this is autograd's own result ({name}, the same memory), so checking it "
                  "checks autograd, not you. Type what you expect as numbers, a formula, or a tensor you "
                  "write yourself (e.g. {example}), then confirm with autograd (ex.confirm()).")
TEXT_LIMIT = 10_000  # characters of a text answer the lab reads at all
CLOSE_MESSAGE = N_("Close: give three significant digits. Your numbers agree with the answer as far "
                   "as you wrote them, but some have fewer than three significant digits.")
CUT_MESSAGE = N_("Close: round, do not cut. Some of your numbers are the exact value cut off at the last "
                 "digit you wrote; rounded, that digit is one more (2/3 is 0.667, not 0.666).")


@dataclass
class Diagnoser:
    """A known wrong answer and what to say about it: either a value computed by torch (matched
    to the digits the learner wrote) or a test `when` on the read answer. `part` picks one part of
    a several-part answer; `variant` is the same mistake on other inputs (a formula answer must
    match there too, so that no diagnosis rests on a coincidence of the numbers); `key` is its
    stable id; `ask`, when given, is what a first such mistake is told: a question pointing at the
    step to re-think, without the formula the message gives."""

    message: str
    value: Any = _UNSET
    when: Callable | None = None
    part: int | None = None
    key: str = ""
    variant: Any = None
    ask: str = ""

    def matches(self, form: Form, answer) -> bool:
        if self.part is not None:
            form, answer = form.parts[self.part][1], answer[self.part]  # type: ignore[attr-defined]
        if self.when is not None:
            return bool(self.when(answer))
        if not form.matches(answer, self.value):
            return False
        other = getattr(answer, "variant", None)
        return self.variant is None or other is None or _same(other, self.variant)


@dataclass(frozen=True)
class Note:
    """A hint or a solution; shows as its title and text."""

    title: str
    text: str

    def __repr__(self) -> str:
        return f"{self.title}\n{self.text}"


@dataclass
class Exercise:
    """An exercise: ``ex.check(answer)``, ``ex.hint()``, ``ex.solution()``, ``ex.confirm()``. Its
    name and title are given by its registration (see registry.py).

    The sentences a topic passes in (title, intro, question, answer_form, hints, solution_text,
    praise, kind, the diagnosers' messages) may be translated already or be ``N_()`` constants:
    they are looked up in the lab's language again when shown.

    >>> from autograd_lab.practice.forms import TensorForm
    >>> ex = Exercise(intro="", setup="", question="", answer_form="", form=TensorForm(),
    ...               expected=torch.tensor([2 / 3]), hints=["Think."], solution_text="2/3", name="doc")
    >>> [ex.check(a).status for a in ([0.667], [0.67], [0.666], ex.expected, torch.tensor([2 / 3]))]
    ['correct', 'close', 'close', 'not attempted', 'correct']
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
    kind: str = N_("the gradient")  # "Incorrect: this is not {kind}."
    praise: str = ""
    seed: int | None = None
    example: str = ""
    hints_shown: int = 0
    name: str = ""
    title: str = ""
    predicts: bool = True  # the answer is a prediction: autograd's own gradient is not one
    last_answer: Any = None
    #: how many times each known mistake (by its key) was checked
    mistakes: dict = field(default_factory=dict)
    #: a remark on a right answer, from the answer as read ("" for none): what to know even so
    remark: Callable | None = None

    def __post_init__(self):
        self.example = self.example or _(self.form.example)
        _set_factors(self.form, factors_of(self.setup))
        # a wrong answer computed by torch that happens to equal the right one (say, a random x
        # with a zero in it) must never be reported as a mistake
        self.diagnosers = [d for d in self.diagnosers if d.when is not None or d.part is not None
                           or not self.form.same(d.value, self.expected)]
        for i, d in enumerate(self.diagnosers):
            d.key = d.key or f"{self.name or 'exercise'}_{i + 1}"
        if getattr(self.form, "variant", None) is None:  # numbers cannot be tried on other inputs
            self.diagnosers = _merge_coincidences(self.form, self.diagnosers)

    def check(self, answer) -> Result:
        """The verdict on one answer; in grading mode a wrong answer raises AssertionError."""
        result = self._verdict(answer)
        if result.status != NOT_ATTEMPTED and result.diagnosis != "form":  # an answer read: an attempt
            self.last_answer = answer
        if result.diagnosis and result.status == INCORRECT:
            self.mistakes[result.diagnosis] = self.mistakes.get(result.diagnosis, 0) + 1
        progress.record_check(self.name, result.status, result.diagnosis)
        if progress.grading() and not result.correct:
            raise NotCorrect(result)
        return result

    def _verdict(self, answer) -> Result:
        if is_placeholder(answer):
            return Result(self.name, NOT_ATTEMPTED, _("Not attempted yet: replace ____ with your answer, "
                                                      "e.g. {example}").format(example=self.example))
        own = traced(answer, self.expected if isinstance(self.expected, tuple) else (self.expected,)) \
            if self.predicts else ""
        if own:
            return Result(self.name, NOT_ATTEMPTED, _(TENSOR_GIVEN).format(
                name=_("the exercise's answer") if own == "autograd" else quote(own, 80),
                example=_inside_check(self.example)), "tensor_given")
        if isinstance(answer, str) and len(answer) > TEXT_LIMIT:  # read nothing of it: no answer is that long
            return Result(self.name, INCORRECT, incorrect(_(
                "Your answer is a text of {count} characters, far longer than any answer here ({limit} at "
                "most). Expected {answer_form}.").format(count=len(answer), limit=TEXT_LIMIT,
                                                        answer_form=_(self.answer_form))), "form")
        try:
            value = self.form.read(answer)
        except WrongForm as err:
            return Result(self.name, INCORRECT, incorrect(str(err)), "form")
        grade = self.form.grade(value, self.expected)
        if grade == RIGHT:
            said = _("Correct! {praise}").format(praise=_(self.praise)) if self.praise else _("Correct!")
            remark = self.remark(value) if self.remark is not None else ""
            return Result(self.name, CORRECT, f"{said} {_(remark)}" if remark else said)
        if grade == CLOSE:
            reason = self.form.close_reason(value, self.expected)
            return Result(self.name, CLOSE_STATUS, _(CUT_MESSAGE) if reason == CUT else _(CLOSE_MESSAGE), reason)
        for diagnoser in self.diagnosers:
            if diagnoser.matches(self.form, value):
                if diagnoser.ask and not self.mistakes.get(diagnoser.key):
                    return Result(self.name, INCORRECT, incorrect(_(diagnoser.ask) + " " + _(
                        "(Make the same mistake again and the lab says what it is; or call .hint().)")),
                        diagnoser.key)
                return Result(self.name, INCORRECT, incorrect(_(diagnoser.message)), diagnoser.key)
        why = self.form.explain(value, self.expected)
        if why:
            return Result(self.name, INCORRECT, incorrect(why), "explained")
        # Translators: {kind} is what the exercise asks for ("the gradient", "the set of names"),
        # {answer_form} how to write it; {offer} says where the next hint or the solution is
        return Result(self.name, INCORRECT, _("Incorrect: this is not {kind}. Expected {answer_form}. {offer}").format(
            kind=_(self.kind), answer_form=_(self.answer_form), offer=self._offer()), "unknown")

    def _offer(self) -> str:
        if self.hints_shown < len(self.hints):
            return _("For hint {n} of {total}, call .hint().").format(n=self.hints_shown + 1, total=len(self.hints))
        return _("All hints are out; .solution() shows the worked solution.")

    def hint(self, n: int | None = None) -> Note:
        """The next hint, or hint number n (counting from 1)."""
        if n is None:
            n = min(self.hints_shown + 1, len(self.hints))
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(self.hints):
            raise LabInputError(_("hint({n}) does not exist: {name} has hints 1 to {total}; type .hint() for "
                                  "the next one.").format(n=quote(safe_repr(n)), name=self.name, total=len(self.hints)))
        self.hints_shown = max(self.hints_shown, n)
        progress.record_hint(self.name, n)
        return Note(_("Hint {n} of {total}").format(n=n, total=len(self.hints)), _(self.hints[n - 1]))

    def solution(self) -> Note:
        """The worked solution, with the values torch computed."""
        progress.record_solution(self.name)
        return Note(_("Solution"), _(self.solution_text))

    def confirm(self) -> Note:
        """After predicting: what autograd computed from the exercise's code, beside your last answer."""
        if self.last_answer is None:  # autograd's answer only after one of the learner's own
            return Note(_("Nothing to confirm yet"), _("Check a prediction of your own first (ex.check(...)); "
                                                       "then confirm() shows autograd's answer beside it."))
        progress.record_confirm(self.name)
        verdict = self._verdict(self.last_answer)
        mine = _("Your last answer: {answer} ({status})").format(answer=_show(self.last_answer),
                                                                   status=status_label(verdict.status))
        autograd = _("autograd: {value}").format(value=_show(self.expected))
        return Note(_("Confirmed with autograd"), f"{mine}\n{autograd}")

    @property
    def make_code(self) -> str:
        """The line that makes this exercise in a learner's notebook."""
        seed = f", seed={self.seed}" if self.seed is not None else ""
        return f'ex = autograd_lab.exercise("{self.name}"{seed})'

    def __repr__(self) -> str:
        return f"<exercise {self.name}" + (f" (seed {self.seed})" if self.seed is not None else "") + ">"


def _set_factors(form: Form, factors: str) -> None:
    """The constant factors of the setup's computation, for the number forms that were given none."""
    inner = [f for _label, f in form.parts] if isinstance(form, PartsForm) else [form]
    for f in inner:
        f = f.numbers if isinstance(f, FunctionForm) else f
        if isinstance(f, TensorForm) and f.factors is None:
            f.factors = factors


def _merge_coincidences(form: Form, diagnosers: list[Diagnoser]) -> list[Diagnoser]:
    """Mistakes that give the same numbers on these inputs but not on the variant are named
    together, never one of them alone: a diagnosis must not rest on a coincidence of the numbers."""
    merged: list[Diagnoser] = []
    used: set[int] = set()
    for i, d in enumerate(diagnosers):
        if i in used:
            continue
        if d.variant is None or d.when is not None or d.part is not None:
            merged.append(d)
            continue
        twins = [j for j in range(i + 1, len(diagnosers)) if j not in used and diagnosers[j].variant is not None
                 and diagnosers[j].when is None and diagnosers[j].part is None
                 and form.same(diagnosers[j].value, d.value) and not _same(diagnosers[j].variant, d.variant)]
        if not twins:
            merged.append(d)
            continue
        used.update(twins)
        group = [d] + [diagnosers[j] for j in twins]
        merged.append(Diagnoser(ambiguous([g.message for g in group]), d.value,
                                key="+".join(g.key for g in group)))
    return merged


def _same(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and bool(torch.allclose(a.double(), b.double(), rtol=1e-9, atol=1e-12))


class _Shown(reprlib.Repr):
    """A bounded repr of an answer: long lists and texts cut (``...``), every object's own repr
    guarded (never an address)."""

    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 4, 12, 12, 8
        self.maxset = self.maxfrozenset = 12
        self.maxstring = self.maxother = 120

    def repr_instance(self, x, level):
        return quote(safe_repr(x), self.maxother)

    def repr_int(self, x, level):
        return quote(safe_repr(x), self.maxother)  # a huge int is cut, never written out whole


_SHOWN = _Shown()


def _show(value) -> str:
    """A learner's answer as confirm() quotes it: short, the same characters on every run."""
    if isinstance(value, (frozenset, set)):
        try:
            items = sorted(value)
        except TypeError:
            items = list(value)
        shown = [_SHOWN.repr(v) for v in items[:12]] + (["..."] if len(items) > 12 else [])
        return quote("{" + ", ".join(shown) + "}")
    if isinstance(value, tuple):
        return quote("(" + ", ".join(_show(v) for v in value[:12]) + (", ...)" if len(value) > 12 else ")"))
    if callable(value) and not isinstance(value, torch.Tensor):
        return _("a function of x")
    if isinstance(value, torch.Tensor) and value.numel() > 8:
        return _("a {shape} tensor").format(shape=tuple(value.shape))
    if isinstance(value, torch.Tensor):
        return fmt(value)
    return quote(_SHOWN.repr(value))


def _inside_check(example: str) -> str:
    """What goes inside ex.check(...) in an example ("[...]" for "ex.check([...])")."""
    return example[len("ex.check("):-1] if example.startswith("ex.check(") and example.endswith(")") else example


def incorrect(why: str) -> str:
    """The verdict on a wrong answer, with what is wrong with it (a whole sentence, translated)."""
    return _("Incorrect. {why}").format(why=why)
