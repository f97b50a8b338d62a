"""The exercises' front end: an exercise with its answer box, Check, Hint and Solution buttons and
the feedback, as %exercise shows it; and the HTML faces of a statement, a verdict, a hint or the
solution (plain escaped strings, deterministic)."""
from __future__ import annotations

from typing import Mapping

from ..display import View
from ..text import esc
from .checking import CORRECT, INCORRECT, NOT_ATTEMPTED, ____, Result
from .exercise import Exercise

COLOURS = {CORRECT: "#1b7f3b", INCORRECT: "#b3261e", NOT_ATTEMPTED: "#6b6b6b"}


def _lines(text: str) -> str:
    return f'<div style="white-space:pre-wrap">{esc(text)}</div>'


def statement_html(ex) -> str:
    """The statement: title, introduction, the code to run, the question and how to answer.

    >>> statement_html(exercise("mean_square")).startswith("<div")   # doctest: +SKIP
    True
    """
    seed = f" (seed {ex.seed})" if ex.seed is not None else ""
    return (f'<div class="agl-exercise"><h4>Exercise <code>{esc(ex.name)}</code>{esc(seed)}: {esc(ex.title)}</h4>'
            f"<p>{esc(ex.intro)}</p><pre>{esc(ex.setup)}</pre>{_lines(ex.question)}"
            f"<p>Answer with {esc(ex.answer_form)}.<br>Check with <code>{esc(ex.example)}</code>, after <code>{esc(ex.make_code)}</code></p>"
            f"<p><small>Help: <code>.hint()</code> gives the next of {len(ex.hints)} hints, "
            f"<code>.solution()</code> the worked solution.</small></p></div>")


def result_html(result) -> str:
    """A verdict, coloured by its status, with its message."""
    colour = COLOURS.get(result.status, "#000")
    return (f'<div class="agl-result" data-status="{esc(result.status)}" '
            f'style="border-left:4px solid {colour};padding:4px 8px">'
            f'<span class="agl-status" style="color:{colour};font-weight:bold">{esc(result.status)}</span>'
            f"{_lines(result.message)}</div>")


def note_html(note) -> str:
    """A hint or the solution."""
    return (f'<div class="agl-note" style="border-left:4px solid #3a6ea5;padding:4px 8px">'
            f"<b>{esc(note.title)}</b>{_lines(note.text)}</div>")


def message_html(text: str) -> str:
    """A short remark that is not a verdict (an answer that could not be evaluated)."""
    return f'<div class="agl-note" style="border-left:4px solid #999;padding:4px 8px">{_lines(text)}</div>'


class ExerciseView(View):
    """An exercise shown with an answer box; the box is evaluated in `names` (the learner's namespace)."""

    def __init__(self, ex: Exercise, names: Mapping | None = None):
        self.exercise, self.names = ex, names if names is not None else {}
        self.feedback_text = ""

    def text(self) -> str:
        return self.exercise.text()

    def html(self) -> str:
        return statement_html(self.exercise)

    def read(self, typed: str):
        """What the typed text stands for: the blank when empty, the text itself for answers made of
        words (letters, names, formulas), otherwise the value of the expression in the learner's names."""
        typed = typed.strip()
        if not typed:
            return ____
        if self.exercise.form.takes_text and not typed.startswith("lambda"):
            return typed
        # a copy: eval would otherwise add __builtins__ to a plain dict of the learner's
        return eval(typed, dict(self.names))

    def check(self, typed: str) -> tuple[str, str]:
        """Check typed text as the widget does: (plain text, html) of the feedback."""
        try:
            answer = self.read(typed)
        except Exception as err:  # the learner's expression failed: say so in one line
            text = (f"Could not evaluate {typed.strip()!r}: {type(err).__name__}: {err}. Run the setup "
                    "code first, or check the spelling.")
            return text, message_html(text)
        try:
            result = self.exercise.check(answer)
        except AssertionError as err:  # grading mode: the widget still shows the verdict
            result = Result(self.exercise.name, "incorrect", str(err))
        return result.message, result_html(result)

    def hint(self) -> tuple[str, str]:
        note = self.exercise.hint()
        return repr(note), note_html(note)

    def solution(self) -> tuple[str, str]:
        note = self.exercise.solution()
        return repr(note), note_html(note)

    def build_widget(self):
        import ipywidgets as w

        view = self
        statement = w.HTML(value=self.html())
        statement.add_class("agl-statement")
        answer = w.Text(value="", placeholder=f"your answer, e.g. {_inside(self.exercise.example)}",
                        description="Answer:", layout=w.Layout(width="50%"))
        answer.add_class("agl-answer")
        buttons = {}
        for label in ("Check", "Hint", "Solution"):
            buttons[label] = w.Button(description=label)
            buttons[label].add_class(f"agl-{label.lower()}")
        feedback = w.HTML(value="")
        feedback.add_class("agl-feedback")

        def show(faces_pair):
            view.feedback_text, feedback.value = faces_pair

        buttons["Check"].on_click(lambda _: show(view.check(answer.value)))
        buttons["Hint"].on_click(lambda _: show(view.hint()))
        buttons["Solution"].on_click(lambda _: show(view.solution()))

        class Face(w.VBox):
            def __repr__(self):  # the text face, not the widget's model id
                return view.text() + ("\n\n" + view.feedback_text if view.feedback_text else "")

        return Face([statement, w.HBox([answer, *buttons.values()]), feedback])


def _inside(example: str) -> str:
    """'ex.check(x.grad)' -> 'x.grad': what goes in the box."""
    prefix = "ex.check("
    return example[len(prefix):-1] if example.startswith(prefix) and example.endswith(")") else example


def exercise_view(ex: Exercise, names: Mapping | None = None) -> ExerciseView:
    """The exercise with an answer box evaluated in `names`, Check, Hint and Solution buttons.

    >>> exercise_view(exercise("mean_square")).text().splitlines()[0]     # doctest: +SKIP
    'Exercise mean_square: The gradient of a mean of squares'
    """
    return ExerciseView(ex, names)
