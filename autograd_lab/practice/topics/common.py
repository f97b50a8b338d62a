"""What several topics build the same way: the x most prediction exercises start from, and the
exercises that predict x.grad, a pair of tensors, or yes/no answers where one case is the surprise.
Each helper fills the form, the expected answer and the fields that follow from them; the topic
gives the rest of the statement (Exercise's fields) as keywords, most of them read off its table
with stated()."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..checking import shape_text
from ..choices import FlagsForm
from ..exercise import Diagnoser, Exercise
from ..forms import PartsForm, TensorForm
from ...i18n import _
from ...format import listed
from ...words import Words, words_of
from ..run import grad, run, tensor_code, variant_values

W = words_of(__name__)
FLAGS = W["flags"]
#: what a wrong answer to flags() is not, by the number of its cases
FLAG_KINDS = {2: FLAGS["kind_two"], 3: FLAGS["kind_three"], 4: FLAGS["kind_four"], 5: FLAGS["kind_five"]}
#: how flags() are answered, by the number of cases ({cases}: their names)
FLAG_FORMS = {2: FLAGS["form_two"], 3: FLAGS["form_three"], 4: FLAGS["form_four"], 5: FLAGS["form_five"]}


def x_line(seed) -> str:
    """The line that makes x = [1, 2, 3] (a float64 leaf that requires grad), or the seed's own values.

    >>> x_line(None)
    'x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)'
    """
    return tensor_code("x", variant_values(seed, [1.0, 2.0, 3.0]))


#: the sentences of an exercise's statement that stated() takes from its table, each as it is
STATEMENT = ("intro", "question", "answer_form", "kind", "praise")


def stated(t: Words, **given) -> dict:
    """An exercise's statement read off its table (a Words), in the learner's language: intro, question,
    answer_form, kind and praise where the table has them, hints as a list; `given` adds to them or
    replaces them (a sentence formatted, or one from another table). Title and solution are never taken.

    >>> from autograd_lab.i18n import language
    >>> t = Words({"intro": "the gradient", "hints": ["Correct!", "Think."], "kind": "the gradient",
    ...            "title": "A title", "solution": "{x}"}, "doc")
    >>> language("zh"), stated(t, kind="a tensor", setup="x = 1")
    ('zh', {'intro': '所求的梯度', 'hints': ['正确！', 'Think.'], 'kind': 'a tensor', 'setup': 'x = 1'})
    >>> language("en"), stated(Words({}, "empty"), hints=[])
    ('en', {'hints': []})
    """
    taken: dict[str, str | list[str]] = {key: t(key) for key in STATEMENT if key in t and key not in given}
    if "hints" in t and "hints" not in given:
        taken["hints"] = t.all("hints")
    return {**taken, **given}


@dataclass(frozen=True)
class OnX:
    """An exercise's code on x run by torch: setup (x's line, then the exercise's body), the
    namespace it leaves, and x.grad after each other body on the same x (the values its known
    mistakes give)."""

    setup: str
    ns: dict[str, Any]
    other: dict[str, torch.Tensor]

    def value(self, name: str) -> torch.Tensor:
        """A tensor of the namespace, or a leaf's gradient as "x.grad", detached and copied."""
        base, _dot, attr = name.partition(".")
        t = getattr(self.ns[base], attr) if attr else self.ns[base]
        return t.detach().clone()


def on_x(seed, body: str, **other: str) -> OnX:
    """Run x's line then body; and x's line then each other body, keeping x.grad of each.

    >>> s = on_x(None, "(x**2).sum().backward()", mean="(x**2).mean().backward()")
    >>> s.value("x.grad").tolist(), [round(v, 4) for v in s.other["mean"].tolist()]
    ([2.0, 4.0, 6.0], [0.6667, 1.3333, 2.0])
    """
    line = x_line(seed)
    setup = f"{line}\n{body}"
    return OnX(setup, run(setup), {key: grad(f"{line}\n{code}") for key, code in other.items()})


def x_grad(expected: torch.Tensor, **statement) -> Exercise:
    """Predict x.grad, torch's value expected; unless the statement says otherwise the question is
    "What is x.grad?" and the answer a float tensor of x's shape.

    >>> ex = x_grad(torch.tensor([2.0]), intro="", setup="", hints=[], solution_text="")
    >>> ex.answer_form.split(":")[0], ex.check([2.0]).status
    ("x.grad as you predict it, with x's shape (1,)", 'correct')
    """
    t = W["x_grad"]
    statement.setdefault("question", t("question"))
    statement.setdefault("kind", t("kind"))
    statement.setdefault("answer_form", t("answer_form").format(shape=shape_text(expected.shape)))
    return Exercise(form=TensorForm("x.grad"), expected=expected, **statement)


def tensor_pair(first: tuple[str, str, torch.Tensor], second: tuple[str, str, torch.Tensor],
                diagnosers: list[Diagnoser], **statement) -> Exercise:
    """Predict two tensors at once, each given as (its label, the tensor it belongs to, torch's
    value), answered as a pair in that order; the first known mistake is the two swapped.

    >>> ex = tensor_pair(("g", "x", torch.tensor([1.0])), ("x.grad", "x", torch.tensor([2.0])), [],
    ...                  intro="", setup="", question="", hints=[], solution_text="")
    >>> ex.answer_form.split(":")[0]
    'the pair (g, x.grad) as you predict them, each of shape (1,)'
    >>> ex.check(([2.0], [1.0])).message
    'Incorrect. You swapped the two: g first, then x.grad.'
    """
    (a, a_of, a_value), (b, b_of, b_value) = first, second
    t = W["tensor_pair"]
    swapped = Diagnoser(t["diagnoses"]("swapped").format(first=a, second=b), (b_value, a_value))
    return Exercise(form=PartsForm([(a, TensorForm(a, a_of)), (b, TensorForm(b, b_of))]),
                    expected=(a_value, b_value), diagnosers=[swapped, *diagnosers],
                    answer_form=t("answer_form").format(first=a, second=b, shape=shape_text(a_value.shape)),
                    **statement)


def flags(cases: dict[str, str], answer: Callable[[str], bool], surprise: str, about: tuple[str, str],
          solution: tuple[str, str], asks: tuple[str, str] = ("", ""), **statement) -> Exercise:
    """Yes/no answers, one per case (name: code) in order, each what answer(code) gives; the case
    `surprise` is the one learners get wrong: about is what a wrong answer there is told, then what a
    wrong answer to any other case is told (`asks`: what a first such mistake is asked instead, the
    step to re-think without the answer). The solution starts with its label and every case's
    answer, then goes on with its text.

    >>> ex = flags({"a": "1", "b": "0"}, lambda code: code == "1", "b", ("B is no.", "A is yes."),
    ...            ("Code 1", "Only 1 is yes."), intro="", setup="", question="", hints=[])
    >>> ex.answer_form, ex.check("yes, yes").message, ex.solution_text.splitlines()
    ('two yes/no answers in the order (a, b)', 'Incorrect. B is no.', ['Code 1: a: yes, b: no.', 'Only 1 is yes.'])
    """
    keys = list(cases)
    expected = tuple(answer(code) for code in cases.values())
    at = keys.index(surprise)
    diagnosers = [
        Diagnoser(about[0], when=lambda v: v[at] != expected[at], ask=asks[0]),
        Diagnoser(about[1], when=lambda v: any(v[i] != expected[i] for i in range(len(keys)) if i != at),
                  ask=asks[1]),
    ]
    answers = listed((FLAGS("case_yes") if e else FLAGS("case_no")).format(case=k)
                     for k, e in zip(keys, expected, strict=True))
    return Exercise(form=FlagsForm(keys), expected=expected, diagnosers=diagnosers, kind=_(FLAG_KINDS[len(keys)]),
                    answer_form=_(FLAG_FORMS[len(keys)]).format(cases=", ".join(keys)),
                    solution_text=FLAGS("solution").format(label=solution[0], answers=answers, text=solution[1]),
                    **statement)


def commented(code: str, notes: dict[str, str]) -> str:
    """Setup code whose comments are {placeholders}, filled with the notes (English) in the lab's language.

    >>> commented("c = 4.0   # {c}", {"c": "a constant"})
    'c = 4.0   # a constant'
    """
    return code.format(**{key: _(note) for key, note in notes.items()})
