"""The text/plain and text/html faces of the storage lab: the report as a table with what happened
to each copy, and the outcome of one applied edit (which names changed, what backward did next).
Deterministic: only values, names and PyTorch's messages, never addresses."""
from __future__ import annotations

from torch import Tensor

from ..format import fmt, number, table
from ..text import esc, html_table, status_colour
from .copies import EDITS, Copy, wrap
from .experiments import Row, StorageReport
from .subject import Subject

EDIT_CHOICES = [("b.mul_(2)", "mul_"), ("b.add_(1)", "add_"), ("b.zero_()", "zero_"),
                ("write through numpy: n = b.numpy(); n *= 2", "numpy")]

_OUTCOME_CLASS = {"ok": "agl-ok", "error": "agl-error", "silently wrong": "agl-wrong", "refused": "agl-refused"}


def describe(subject: Subject) -> str:
    """One sentence about the learner's tensor.

    >>> import torch
    >>> describe(Subject.of(torch.zeros(2), "w"))
    'w: a leaf tensor, of shape (2,), float32, that does not require grad; version counter at 0.'
    """
    kind = "a leaf tensor" if subject.is_leaf else f"a non-leaf tensor made by {subject.grad_fn}"
    if subject.base_shape is not None:
        kind += (f", a view onto a base of shape {subject.base_shape} (at offset {subject.offset}, "
                 f"stride {subject.stride})")
    grad = "requires grad" if subject.requires_grad else "does not require grad"
    device = "" if subject.device == "cpu" else f" on {subject.device}"
    return (f"{subject.name}: {kind}, of shape {subject.shape}, {subject.dtype}{device}, that {grad}; "
            f"version counter at {subject.version}.")


def method(subject: Subject, edit: str) -> str:
    """How every row was measured, in the learner's names."""
    name, n = subject.name, wrap(subject.name)
    return (f"Each row runs on a fresh twin of {name} (same values and layout): y = {n} * {n} "
            f"saves it for backward, the copy b is taken and edited with {edit}, then "
            f"y's backward runs. {name} itself is not touched.")


def subject_notes(subject: Subject) -> list[str]:
    """What is special about the learner's tensor, and their other names in the same storage."""
    name, out = subject.name, []
    if subject.base_shape is not None:
        out.append(f"{name} is a view: every copy that shares storage shares its base's whole "
                   f"storage, not only the part {name} shows.")
    if not subject.requires_grad:
        out.append(f"{name} does not require grad; the twins do, as a parameter would "
                   f"({name}.requires_grad_() makes yours one).")
    if subject.device != "cpu":
        out.append(f"No detach().numpy() row: {name} lives on {subject.device} and numpy arrays "
                   "live in CPU memory (.cpu() would copy it).")
    if not subject.contiguous:
        out.append(f"{name} is not contiguous, so it has no flat view(-1); the view row is a slice.")
    out.extend(f"In your namespace, {other} {relation}." for other, relation in subject.relatives)
    return out


def verdict(row: Row, name: str = "a") -> str:
    """One line: what the next backward did after the edit."""
    if row.after_inplace == "refused":
        what = "the copy itself" if row.shares_storage is None else "the edit"
        return f"{what} was refused: {row.message}"
    if row.after_inplace == "error":
        return f"backward failed, the version check caught the edit: {row.message}"
    if row.after_inplace == "silently wrong":
        return f"no error, but the gradient is wrong: {value(row.grad_got)} instead of {value(row.grad_expected)}"
    if "a" in row.changed:
        return f"backward ran; the edit changed {name}'s values yet left the gradient {value(row.grad_got)}"
    return f"backward ran and gave the correct gradient {value(row.grad_got)}"


def value(t) -> str:
    """A gradient as the verdicts show it: complex ones with their numbers, not only their dtype.

    >>> import torch
    >>> value(torch.tensor([2 - 4j]))
    '[2.0000-4.0000j]'
    """
    if isinstance(t, Tensor) and t.is_complex() and t.numel() <= 8:
        flat = t.detach().resolve_conj().resolve_neg().reshape(-1).tolist()
        return "[" + ", ".join(f"{number(v.real)}{'-' if v.imag < 0 else '+'}{number(abs(v.imag))}j"
                               for v in flat) + "]"
    return fmt(t)


def _yes_no(flag) -> str:
    """True/False/None as the table shows them (None: the question does not apply)."""
    return "-" if flag is None else ("yes" if flag else "no")


def _shared(flag) -> str:
    return "-" if flag is None else ("shared" if flag else "separate")


def headers(report: StorageReport) -> list[str]:
    return ["copy", "storage", "version counter", "requires_grad", "is_leaf", "grad_fn",
            "in graph", f"after {EDITS[report.edit].on_tensor}"]


def cells(report: StorageReport) -> list[list[str]]:
    out = []
    for r in report.rows:
        version = "none (array)" if r.is_array else _shared(r.shares_version)
        out.append([r.code, _shared(r.shares_storage), version, _yes_no(r.requires_grad),
                    _yes_no(r.is_leaf), "-" if r.requires_grad is None else str(r.grad_fn),
                    _yes_no(r.in_graph), r.after_inplace])
    return out


def details(report: StorageReport) -> list[str]:
    """A line for every row that did not simply work, and for every warning PyTorch gave."""
    name = report.subject.name
    lines = [f"{r.code}: {verdict(r, name)}" for r in report.rows if r.after_inplace != "ok"]
    for r in report.rows:
        for warning in r.warnings:
            lines.append(f"{r.code}: PyTorch warns \"{warning}\" It copies anyway, as "
                         f"{Copy('detach().clone()', Tensor.detach).code(name)} does, which is the way to write it.")
    return lines


def notes(report: StorageReport) -> list[str]:
    return details(report) + subject_notes(report.subject)


def text(report: StorageReport) -> str:
    """The plain face: what the tensor is, how the rows were measured, the table and the notes.

    >>> import torch
    >>> from autograd_lab.storage.experiments import build_report
    >>> text(build_report(torch.tensor([1.]))).splitlines()[0]
    'a: a leaf tensor, of shape (1,), float32, that does not require grad; version counter at 0.'
    """
    parts = [describe(report.subject), method(report.subject, EDITS[report.edit].on_tensor), "",
             table(headers(report), cells(report))]
    lines = notes(report)
    return "\n".join(parts + ([""] + lines if lines else []))


def table_html(report: StorageReport, chosen: str | None = None, mem=None) -> str:
    """The table as HTML; the chosen copy's row is highlighted. With a Memory, a column says what
    each copy holds now, and the caption what a holds and which edit was applied."""
    keys = report.keys()
    highlight = {keys.index(chosen)} if chosen in keys else set()
    classes = {i: _OUTCOME_CLASS[r.after_inplace] for i, r in enumerate(report.rows)}
    head, body, caption = headers(report), cells(report), None
    if mem is not None:
        name = report.subject.name
        held = {w.label: w.values for w in mem.windows}
        head = head + ["holds now"]
        body = [row + [held.get(r.code, "-")] for row, r in zip(body, report.rows, strict=True)]
        a = mem.window(name)
        caption = f"{name} holds {a.values}, its version counter {a.counter} = {a.version}"
        if mem.edited:
            done = "refused by PyTorch" if mem.refused else "applied"
            caption = f"After {mem.edited} ({done}): " + caption
    return html_table(head, body, caption=caption, highlight=highlight, classes=classes)


def html(report: StorageReport) -> str:
    """The HTML face: the same content as the text face, as paragraphs, a table and a list."""
    subject = report.subject
    items = "".join(f"<li>{esc(n)}</li>" for n in notes(report))
    return (f'<div class="agl-storage"><p><b>{esc(describe(subject))}</b></p>'
            f"<p>{esc(method(subject, EDITS[report.edit].on_tensor))}</p>"
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
    lines.append(f"Next backward of y = {wrap(name)} * {wrap(name)}: {verdict(row, name)}.")
    return lines


def outcome_html(row: Row, name: str) -> str:
    lines = outcome_lines(row, name)
    color = status_colour(row.after_inplace)
    body = "".join(f"<div>{esc(line)}</div>" for line in lines[1:])
    return (f'<div><code>{esc(lines[0])}</code> <b style="color:{color}">{esc(row.after_inplace)}</b>'
            f"{body}</div>")
