"""The HTML faces of the exercises room: an exercise's statement, a check result, a hint or
solution. Plain strings, escaped, deterministic."""
from __future__ import annotations

from ..text import esc
from .checking import CORRECT, INCORRECT, NOT_ATTEMPTED

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
            f"<p>Answer with {esc(ex.answer_form)}.<br>Check with <code>{esc(ex.example)}</code></p>"
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

