"""The text/plain and text/html faces of the storage lab: the report as a table with what happened
to each copy, and the outcome of one applied edit (which names changed, what backward did next).
Deterministic: only values, names and PyTorch's messages, never addresses."""
from __future__ import annotations

from ..text import esc, html_table
from .copies import EDITS, wrap
from .experiments import Row, StorageReport

EDIT_CHOICES = [("b.mul_(2)", "mul_"), ("b.add_(1)", "add_"), ("b.zero_()", "zero_"),
                ("write through numpy: n = b.numpy(); n *= 2", "numpy")]

_OUTCOME_CLASS = {"ok": "agl-ok", "error": "agl-error", "silently wrong": "agl-wrong", "refused": "agl-refused"}
_OUTCOME_STYLE = {"ok": "#1a7f37", "error": "#b35900", "silently wrong": "#c00000", "refused": "#555555"}


def text(report: StorageReport) -> str:
    """The plain face: the report's own table and notes.

    >>> import torch
    >>> from autograd_lab.storage.experiments import compare_storage
    >>> text(compare_storage(torch.tensor([1.]))).splitlines()[0]
    'a: a leaf tensor, of shape (1,), float32, that does not require grad; version counter at 0.'
    """
    return repr(report)


def table_html(report: StorageReport, chosen: str | None = None, mem=None) -> str:
    """The table as HTML; the chosen copy's row is highlighted. With a Memory, a column says what
    each copy holds now, and the caption what a holds and which edit was applied."""
    keys = report.keys()
    highlight = {keys.index(chosen)} if chosen in keys else set()
    classes = {i: _OUTCOME_CLASS[r.after_inplace] for i, r in enumerate(report.rows)}
    headers, cells, caption = report.headers(), report.cells(), None
    if mem is not None:
        name = report.subject.name
        held = {w.label: w.values for w in mem.windows}
        headers = headers + ["holds now"]
        cells = [row + [held.get(r.code, "-")] for row, r in zip(cells, report.rows)]
        a = mem.window(name)
        caption = f"{name} holds {a.values}, its version counter {a.counter} = {a.version}"
        if mem.edited:
            done = "refused by PyTorch" if mem.refused else "applied"
            caption = f"After {mem.edited} ({done}): " + caption
    return html_table(headers, cells, caption=caption, highlight=highlight, classes=classes)


def html(report: StorageReport) -> str:
    """The HTML face: the same content as the text face, as paragraphs, a table and a list."""
    subject = report.subject
    notes = report.details() + subject.notes()
    items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return (f'<div class="agl-storage"><p><b>{esc(subject.describe())}</b></p>'
            f"<p>{esc(subject.method(EDITS[report.edit].on_tensor))}</p>"
            f"{table_html(report)}{f'<ul>{items}</ul>' if items else ''}</div>")


def _who(row: Row, name: str) -> str:
    who = {"a": name, "b": f"b = {row.code}" if row.code else "b"}
    changed = [who[n] for n in row.changed]
    if not changed:
        return "nothing: no value changed"
    if len(changed) == 2:
        return f"{changed[0]} and {changed[1]} (one storage: the edit shows through both)"
    return f"only {changed[0]}"


def outcome_lines(row: Row, name: str) -> list[str]:
    """What one applied edit did, as lines: the code, which names changed, the next backward."""
    lines = [f"b = {row.code}; {row.edit}"]
    if row.shares_storage is None:
        return lines + [f"Taking the copy was refused: {row.message}"]
    lines.append(f"Changed: {_who(row, name)}.")
    before, after = row.a_version
    if row.after_inplace != "refused":
        moved = f"went from {before} to {after}" if after != before else f"stayed at {after}"
        lines.append(f"{name}'s version counter {moved}.")
    lines.append(f"Next backward of y = {wrap(name)} * {wrap(name)}: {row.verdict(name)}.")
    return lines


def outcome_html(row: Row, name: str) -> str:
    lines = outcome_lines(row, name)
    color = _OUTCOME_STYLE[row.after_inplace]
    body = "".join(f"<div>{esc(line)}</div>" for line in lines[1:])
    return (f'<div><code>{esc(lines[0])}</code> <b style="color:{color}">{esc(row.after_inplace)}</b>'
            f"{body}</div>")
