"""The faces of the practice room, text/plain and text/html: an exercise's statement, a verdict, a
hint or the solution, the list of exercises and the progress table. Plain escaped strings, the same
characters on every run."""
from __future__ import annotations

from ..format import table
from ..i18n import N_, _
from ..text import esc, pre, status_colour
from .checking import status_label

#: how the progress report's statuses read (report.status() returns the English values, compared by code)
PROGRESS_LABELS = {"passed": N_("passed"), "attempted": N_("attempted"), "not attempted": N_("not attempted")}


def _heading(ex, name: str, title: str) -> str:
    """'Exercise NAME (seed N): TITLE', with name and title given in the face's own markup."""
    if ex.seed is not None:
        return _("Exercise {name} (seed {seed}): {title}").format(name=name, seed=ex.seed, title=title)
    return _("Exercise {name}: {title}").format(name=name, title=title)


def _help(hint: str, solution: str, ex) -> str:
    return _("Help: {hint} gives the next of {n} hints, {solution} the worked solution.").format(
        hint=hint, solution=solution, n=len(ex.hints))


def exercise_text(ex) -> str:
    """The statement as plain text: title, introduction, the code to run, the question, how to answer.

    >>> from autograd_lab.practice.bank import exercise
    >>> exercise_text(exercise("mean_square")).splitlines()[0]
    'Exercise mean_square: The gradient of a mean of squares'
    """
    code = "\n".join("    " + line if line else "" for line in ex.setup.splitlines())
    answer = _("Answer with {answer_form}.").format(answer_form=_(ex.answer_form))
    check = _("Check with {example}, after {make_code}").format(example=ex.example, make_code=ex.make_code)
    return (f"{_heading(ex, ex.name, _(ex.title))}\n\n{_(ex.intro)}\n\n{code}\n\n"
            f"{_(ex.question)}\n{answer}\n{check}\n{_help('.hint()', '.solution()', ex)}")


def _lines(text: str) -> str:
    return f'<div style="white-space:pre-wrap">{esc(text)}</div>'


def statement_html(ex) -> str:
    """The statement as HTML.

    >>> from autograd_lab.practice.bank import exercise
    >>> statement_html(exercise("mean_square")).startswith('<div class="agl-exercise">')
    True
    """
    heading = _heading(ex, f"<code>{esc(ex.name)}</code>", esc(_(ex.title)))
    answer = esc(_("Answer with {answer_form}.").format(answer_form=_(ex.answer_form)))
    check = esc(_("Check with {example}, after {make_code}")).format(example=f"<code>{esc(ex.example)}</code>",
                                                                     make_code=f"<code>{esc(ex.make_code)}</code>")
    help_ = esc(_help("{hint}", "{solution}", ex)).format(hint="<code>.hint()</code>",
                                                          solution="<code>.solution()</code>")
    return (f'<div class="agl-exercise"><h4>{heading}</h4>'
            f"<p>{esc(_(ex.intro))}</p><pre>{esc(ex.setup)}</pre>{_lines(_(ex.question))}"
            f"<p>{answer}<br>{check}</p><p><small>{help_}</small></p></div>")


def result_html(result) -> str:
    """A verdict, coloured by its status, with its message.

    >>> from autograd_lab.practice.checking import Result
    >>> 'data-status="correct"' in result_html(Result("mean_square", "correct", "Correct!"))
    True
    """
    colour, label = status_colour(result.status), status_label(result.status)
    return (f'<div class="agl-result" data-status="{esc(result.status)}" '
            f'style="border-left:4px solid {colour};padding:4px 8px">'
            f'<span class="agl-status" style="color:{colour};font-weight:bold">{esc(label)}</span>'
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
    """The exercises, one per line: name, then title (in the lab's language).

    >>> from autograd_lab.practice.bank import catalog
    >>> catalog_text(catalog()).splitlines()[0].split("  ")[-1].strip()
    'The gradient of a mean of squares'
    """
    width = max(len(e.name) for e in entries)
    return "\n".join(f"{e.name.ljust(width)}  {_(e.title)}" for e in entries)


def catalog_html(entries) -> str:
    return pre(catalog_text(entries))


def progress_text(report) -> str:
    """The progress table: a summary line, then one row per exercise.

    >>> from autograd_lab.practice.report import report
    >>> progress_text(report()).splitlines()[1].split()
    ['exercise', 'status', 'answers', 'hints', 'solution', 'mistakes', 'met']
    """
    rows = [[name, _(PROGRESS_LABELS[report.status(name)]), str(r["attempts"]), str(r["hints"]),
             _("seen") if r["solution"] else "-", ", ".join(r["diagnoses"]) or "-"] for name, _title, r in report.rows]
    summary = _("Progress: {passed} of {total} passed, {attempted} attempted").format(
        passed=report.passed, total=len(report.rows), attempted=report.attempted)
    # Translators: the progress table's column headers
    headers = [_("exercise"), _("status"), _("answers"), _("hints"), _("solution"), _("mistakes met")]
    return f"{summary}\n" + table(headers, rows)


def progress_html(report) -> str:
    return pre(progress_text(report))
