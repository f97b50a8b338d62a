"""The practice room's front end: the public exercise(), exercises() and progress(), which return
views standing in for their models (``ex.check(...)``, ``ex.hint()``, ``progress().to_dict()`` go
through to the model), and the %exercise widget: the statement with an answer box, Check, Hint and
Solution buttons and the feedback."""
from __future__ import annotations

import re

from collections.abc import Mapping

from ..display import ModelView
from ..i18n import N_, _
from . import bank, faces, report
from .checking import ____, NotCorrect, Result, WrongForm
from .exercise import Exercise
from .typed import Name, name_message, read_typed

#: the buttons, by the name their CSS class is made of (agl-check, ...), with the label they show
BUTTONS = {"Check": N_("Check"), "Hint": N_("Hint"), "Solution": N_("Solution")}


class ExercisePage(ModelView):
    """An exercise standing in for itself: its statement as faces, and everything else (check, hint,
    solution, expected, ...) from the exercise itself. ExerciseView adds the answer box."""

    model: Exercise
    text_face = staticmethod(faces.exercise_text)
    html_face = staticmethod(faces.statement_html)

    @property
    def exercise(self) -> Exercise:
        return self.model


class ExerciseView(ExercisePage):
    """An exercise shown with an answer box, as autograd_lab.exercise() and %exercise give it. The
    box is read as text and never run (typed.py): numbers, lists, printed tensors, words and
    formulas; a value of the learner's code is checked in a cell, ``ex.check(value)``. ``names``
    (the learner's namespace) is kept only to say so: it is never read. ``parts`` maps each
    control's CSS class to the control, once the widget is built."""

    def __init__(self, ex: Exercise, names: Mapping | None = None):
        super().__init__(ex)
        self.names = names if names is not None else {}
        self.feedback_text = ""
        self.parts: dict = {}

    def read(self, typed: str):
        """What the typed text stands for: the blank when empty, the text itself for answers made of
        words (letters, names, formulas), otherwise the numbers, lists or printed tensors it holds.
        Raises WrongForm (what to type instead) for a name, code, or a box that takes a function."""
        typed = typed.strip()
        if not typed:
            return ____
        form = self.model.form
        if getattr(form, "takes_function", False):
            raise WrongForm(_("This exercise checks your Python function, and the box runs no code: define the "
                              "function in a cell and check it there, {example}.").format(example=self.model.example))
        if form.takes_text:
            return typed
        answer = read_typed(typed)
        if isinstance(answer, Name):
            raise WrongForm(name_message(answer, "ex.check({value})"))
        return answer

    def check_typed(self, typed: str) -> tuple[str, str]:
        """Check typed text as the widget does: (plain text, html) of the feedback."""
        try:
            answer = self.read(typed)
        except WrongForm as err:  # not an answer the box reads: say what to type, record nothing
            text = str(err)
            return text, faces.message_html(text)
        try:
            result = self.model.check(answer)
        except AssertionError as err:  # grading mode: the widget still shows the verdict, with its status
            result = err.result if isinstance(err, NotCorrect) else Result(self.model.name, "incorrect", str(err))
        return result.message, faces.result_html(result)

    def hint_faces(self) -> tuple[str, str]:
        note = self.model.hint()
        return repr(note), faces.note_html(note)

    def solution_faces(self) -> tuple[str, str]:
        note = self.model.solution()
        return repr(note), faces.note_html(note)

    def build_widget(self):
        import ipywidgets as w

        view = self
        statement = w.HTML(value=self.html())
        example = self.model.form.box_example or _inside(self.model.example)
        placeholder = _("your answer, e.g. {example}").format(example=example)
        answer = w.Text(value="", placeholder=placeholder, description=_("Answer:"), layout=w.Layout(width="50%"))
        buttons = {name: w.Button(description=_(label)) for name, label in BUTTONS.items()}
        feedback = w.HTML(value="")
        self.parts = {"agl-statement": statement, "agl-answer": answer,
                      **{f"agl-{name.lower()}": b for name, b in buttons.items()}, "agl-feedback": feedback}
        for css, part in self.parts.items():
            part.add_class(css)

        def show(faces_pair):
            view.feedback_text, feedback.value = faces_pair

        buttons["Check"].on_click(lambda _: show(view.check_typed(answer.value)))
        buttons["Hint"].on_click(lambda _: show(view.hint_faces()))
        buttons["Solution"].on_click(lambda _: show(view.solution_faces()))

        class Face(w.VBox):
            def __repr__(self):  # the text face, not the widget's model id
                return view.text() + ("\n\n" + view.feedback_text if view.feedback_text else "")

        return Face([statement, w.HBox([answer, *buttons.values()]), feedback])


def _inside(example: str) -> str:
    """What goes in the box: the argument of each ex.check(...) of the example.

    >>> _inside("ex.check(x.grad)"), _inside("ex.check(([2.0], [1.0]))")
    ('x.grad', '([2.0], [1.0])')
    >>> _inside('ex.check(lambda x: ...) or ex.check("formula in x")')
    'lambda x: ... or "formula in x"'
    """
    return re.sub(r"ex\.check\((.*?)\)(?=\s|$)", r"\1", example)


class CatalogView(ModelView):
    """The list of exercises as exercises() returns it: indexing and iteration give the entries."""

    model: bank.Catalog
    text_face = staticmethod(faces.catalog_text)
    html_face = staticmethod(faces.catalog_html)


class ProgressView(ModelView):
    """The progress table as progress() returns it; ``to_dict()``, ``passed``, ``status(name)`` go
    through to the report."""

    model: report.Progress
    text_face = staticmethod(faces.progress_text)
    html_face = staticmethod(faces.progress_html)


def exercise(name: str, seed: int | None = None) -> ExerciseView:
    """One exercise: ``ex.check(answer)``, ``ex.hint()``, ``ex.solution()``; seed picks the values
    of exercises with random inputs. Shown in a live kernel, it has the answer box and buttons of
    ``%exercise name``: the same view.

    >>> ex = exercise("mean_square")
    >>> ex.check(____).status
    'not attempted'
    """
    return ExerciseView(bank.exercise(name, seed=seed))


def exercises() -> CatalogView:
    """All exercises in course order, each with .name and .title.

    >>> exercises()[0].name
    'mean_square'
    """
    return CatalogView(bank.exercises())


def progress() -> ProgressView:
    """Which exercises were attempted and passed, and how many hints were used.

    >>> progress().to_dict()["mean_square"]["title"]
    'The gradient of a mean of squares'
    """
    return ProgressView(report.report())


def exercise_view(ex: Exercise, names: Mapping | None = None) -> ExerciseView:
    """The exercise with an answer box evaluated in `names`, Check, Hint and Solution buttons.

    >>> exercise_view(bank.exercise("mean_square")).text().splitlines()[0]
    'Exercise mean_square: The gradient of a mean of squares'
    """
    return ExerciseView(ex, names)
