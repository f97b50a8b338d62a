"""The faces of the practice room, text/plain and text/html: an exercise's statement, a verdict, a
hint or the solution, the list of exercises and the progress table. Plain escaped strings, the same
characters on every run."""
from __future__ import annotations

from ..format import table
from ..text import esc, pre, status_colour


def exercise_text(ex) -> str:
    """The statement as plain text: title, introduction, the code to run, the question, how to answer.

    >>> from autograd_lab.practice.bank import exercise
    >>> exercise_text(exercise("mean_square")).splitlines()[0]
    'Exercise mean_square: The gradient of a mean of squares'
    """
    seed = f" (seed {ex.seed})" if ex.seed is not None else ""
    code = "\n".join("    " + line if line else "" for line in ex.setup.splitlines())
    return (f"Exercise {ex.name}{seed}: {ex.title}\n\n{ex.intro}\n\n{code}\n\n"
            f"{ex.question}\nAnswer with {ex.answer_form}.\nCheck with {ex.example}, after {ex.make_code}\n"
            f"Help: .hint() gives the next of {len(ex.hints)} hints, .solution() the worked solution.")


def _lines(text: str) -> str:
    return f'<div style="white-space:pre-wrap">{esc(text)}</div>'


def statement_html(ex) -> str:
    """The statement as HTML.

    >>> from autograd_lab.practice.bank import exercise
    >>> statement_html(exercise("mean_square")).startswith('<div class="agl-exercise">')
    True
    """
    seed = f" (seed {ex.seed})" if ex.seed is not None else ""
    return (f'<div class="agl-exercise"><h4>Exercise <code>{esc(ex.name)}</code>{esc(seed)}: {esc(ex.title)}</h4>'
            f"<p>{esc(ex.intro)}</p><pre>{esc(ex.setup)}</pre>{_lines(ex.question)}"
            f"<p>Answer with {esc(ex.answer_form)}.<br>Check with <code>{esc(ex.example)}</code>, "
            f"after <code>{esc(ex.make_code)}</code></p>"
            f"<p><small>Help: <code>.hint()</code> gives the next of {len(ex.hints)} hints, "
            f"<code>.solution()</code> the worked solution.</small></p></div>")


def result_html(result) -> str:
    """A verdict, coloured by its status, with its message.

    >>> from autograd_lab.practice.checking import Result
    >>> 'data-status="correct"' in result_html(Result("mean_square", "correct", "Correct!"))
    True
    """
    colour = status_colour(result.status)
    return (f'<div class="agl-result" data-status="{esc(result.status)}" '
            f'style="border-left:4px solid {colour};padding:4px 8px">'
            f'<span class="agl-status" style="color:{colour};font-weight:bold">{esc(result.status)}</span>'
            f"{_lines(result.message)}</div>")


def note_html(note) -> str:
    """A hint or the solution.

    >>> from autograd_lab.practice.exercise import Note
    >>> note_html(Note("Hint 1 of 3", "Write z out."))[:22]
    '<div class="agl-note" '
    """
    return (f'<div class="agl-note" style="border-left:4px solid #3a6ea5;padding:4px 8px">'
            f"<b>{esc(note.title)}</b>{_lines(note.text)}</div>")


def message_html(text: str) -> str:
    """A short remark that is not a verdict (an answer that could not be evaluated).

    >>> message_html("a < b").endswith("a &lt; b</div></div>")
    True
    """
    return f'<div class="agl-note" style="border-left:4px solid #999;padding:4px 8px">{_lines(text)}</div>'


def catalog_text(entries) -> str:
    """The exercises, one per line: name, then title.

    >>> from autograd_lab.practice.bank import catalog
    >>> catalog_text(catalog()).splitlines()[0].split("  ")[-1].strip()
    'The gradient of a mean of squares'
    """
    width = max(len(e.name) for e in entries)
    return "\n".join(f"{e.name.ljust(width)}  {e.title}" for e in entries)


def catalog_html(entries) -> str:
    return pre(catalog_text(entries))


def progress_text(report) -> str:
    """The progress table: a summary line, then one row per exercise.

    >>> from autograd_lab.practice.report import report
    >>> progress_text(report()).splitlines()[1].split()
    ['exercise', 'status', 'answers', 'hints', 'solution', 'mistakes', 'met']
    """
    rows = [[name, report.status(name), str(r["attempts"]), str(r["hints"]), "seen" if r["solution"] else "-",
             ", ".join(r["diagnoses"]) or "-"] for name, _, r in report.rows]
    return (f"Progress: {report.passed} of {len(report.rows)} passed, {report.attempted} attempted\n"
            + table(["exercise", "status", "answers", "hints", "solution", "mistakes met"], rows))


def progress_html(report) -> str:
    return pre(progress_text(report))
