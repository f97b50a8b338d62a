"""The text/plain and text/html faces of the storage lab: the report as a table with what happened
to each copy, and the outcome of one applied edit (which names changed, what backward did next).
Deterministic: only values, names and PyTorch's messages, never addresses."""
from __future__ import annotations

from ..format import MESSAGE, fmt, quote, table
from ..i18n import N_, _
from ..text import esc, html_table, status_colour
from .copies import EDITS, code_of, shown
from .experiments import Row, StorageReport
from .subject import Subject

NUMPY_EDIT = N_("write through numpy: n = b.numpy(); n *= 2")
EDIT_CHOICES = [("b.mul_(2)", "mul_"), ("b.add_(1)", "add_"), ("b.zero_()", "zero_"), (NUMPY_EDIT, "numpy")]

_OUTCOME_CLASS = {"ok": "agl-ok", "error": "agl-error", "silently wrong": "agl-wrong", "refused": "agl-refused"}
# how an outcome (a status value the code compares, experiments.OUTCOMES) is shown to the learner
OUTCOME_WORDS = {"ok": N_("ok"), "error": N_("error"), "silently wrong": N_("silently wrong"),
                 "refused": N_("refused")}


def edit_choices() -> list[tuple[str, str]]:
    """The edit dropdown's (label, edit) pairs in the current language (the code ones stay code)."""
    return [(_(label) if label == NUMPY_EDIT else label, key) for label, key in EDIT_CHOICES]


def outcome_word(outcome: str) -> str:
    """An outcome as the table and the verdicts show it: 'silently wrong' in English."""
    return _(OUTCOME_WORDS[outcome]) if outcome in OUTCOME_WORDS else outcome


def describe(subject: Subject) -> str:
    """One sentence about the learner's tensor.

    >>> import torch
    >>> describe(Subject.of(torch.zeros(2), "w"))
    'w: a leaf tensor, of shape (2,), float32, that does not require grad; version counter at 0.'
    """
    view = subject.base_shape is not None
    where = dict(base_shape=subject.base_shape, offset=subject.offset, stride=subject.stride,
                 grad_fn=subject.grad_fn)
    if subject.is_leaf:
        kind = (_("a leaf tensor, a view onto a base of shape {base_shape} (at offset {offset}, stride {stride})")
                if view else _("a leaf tensor"))
    else:
        kind = (_("a non-leaf tensor made by {grad_fn}, a view onto a base of shape {base_shape} "
                  "(at offset {offset}, stride {stride})") if view else _("a non-leaf tensor made by {grad_fn}"))
    kind = kind.format(**where)
    dtype = subject.dtype if subject.device == "cpu" else _("{dtype} on {device}").format(
        dtype=subject.dtype, device=subject.device)
    if subject.requires_grad:
        sentence = _("{name}: {kind}, of shape {shape}, {dtype}, that requires grad; version counter at {version}.")
    else:
        sentence = _("{name}: {kind}, of shape {shape}, {dtype}, that does not require grad; "
                     "version counter at {version}.")
    return sentence.format(name=shown(subject.name), kind=kind, shape=subject.shape, dtype=dtype,
                           version=subject.version)


def method(subject: Subject, edit: str) -> str:
    """How every row was measured, in the learner's names."""
    name, n = shown(subject.name), code_of("", subject.name, shown=True)
    return _("Each row runs on a fresh twin of {name} (same values and layout): y = {n} * {n} "
             "saves it for backward, the copy b is taken and edited with {edit}, then "
             "y's backward runs. {name} itself is not touched.").format(name=name, n=n, edit=edit)


RELATION_NOTES = {
    "base": N_("In your namespace, {other} is the base {name} is a view of."),
    "view": N_("In your namespace, {other} is a view of {name}."),
    "shares": N_("In your namespace, {other} shares storage with {name}."),
}


def subject_notes(subject: Subject) -> list[str]:
    """What is special about the learner's tensor, and their other names in the same storage (the
    first RELATED of them, then how many more)."""
    name, out = shown(subject.name), []
    if subject.base_shape is not None:
        out.append(_("{name} is a view: every copy that shares storage shares its base's whole "
                     "storage, not only the part {name} shows.").format(name=name))
    if not subject.requires_grad:
        out.append(_("{name} does not require grad; the twins do, as a parameter would "
                     "({name}.requires_grad_() makes yours one).").format(name=name))
    if subject.device != "cpu":
        out.append(_("No detach().numpy() row: {name} lives on {device} and numpy arrays "
                     "live in CPU memory (.cpu() would copy it).").format(name=name, device=subject.device))
    if not subject.contiguous:
        out.append(_("{name} is not contiguous, so it has no flat view(-1); the view row is a slice.").format(
            name=name))
    out.extend(_(RELATION_NOTES[kind]).format(other=shown(other), name=name)
               for other, kind in subject.relations[:RELATED])
    if len(subject.relations) > RELATED:
        out.append(_("In your namespace, {count} more names live in the storage of {name} "
                     "(report.subject.relatives lists them all).").format(
                         count=len(subject.relations) - RELATED, name=name))
    return out


RELATED = 8  # the learner's other names in a's storage that the notes name one by one


def verdict(row: Row, name: str = "a") -> str:
    """One line: what the next backward did after the edit."""
    name = shown(name)
    if row.after_inplace == "refused":
        if row.shares_storage is None:
            return _("the copy itself was refused: {message}").format(message=row.message)
        return _("the edit was refused: {message}").format(message=row.message)
    if row.after_inplace == "error":
        return _("backward failed, the version check caught the edit: {message}").format(message=row.message)
    if row.after_inplace == "silently wrong":
        return _("no error, but the gradient is wrong: {got} instead of {expected}").format(
            got=value(row.grad_got), expected=value(row.grad_expected))
    if "a" in row.changed:
        return _("backward ran; the edit changed {name}'s values yet left the gradient {got}").format(
            name=name, got=value(row.grad_got))
    return _("backward ran and gave the correct gradient {got}").format(got=value(row.grad_got))


def value(t) -> str:
    """A gradient as the verdicts show it: as PyTorch prints it, complex ones with their numbers.

    >>> import torch
    >>> value(torch.tensor([2 - 4j, 0.5j]))
    '[2.-4.0000j, 0.+0.5000j]'
    """
    return fmt(t)


def _yes_no(flag) -> str:
    """True/False/None as the table shows them (None: the question does not apply)."""
    return "-" if flag is None else (_("yes") if flag else _("no"))


def _shared(flag) -> str:
    return "-" if flag is None else (_("shared") if flag else _("separate"))


def headers(report: StorageReport) -> list[str]:
    return [_("copy"), _("storage"), _("version counter"), "requires_grad", "is_leaf", "grad_fn",
            _("in graph"), _("after {edit}").format(edit=EDITS[report.edit].on_tensor)]


def cells(report: StorageReport) -> list[list[str]]:
    out = []
    for r in report.rows:
        version = _("none (array)") if r.is_array else _shared(r.shares_version)
        out.append([code(r, report.subject.name), _shared(r.shares_storage), version, _yes_no(r.requires_grad),
                    _yes_no(r.is_leaf), "-" if r.requires_grad is None else str(r.grad_fn),
                    _yes_no(r.in_graph), outcome_word(r.after_inplace)])
    return out


def code(row: Row, name: str) -> str:
    """A row's code as the faces show it: the learner's name shortened when long (the row keeps it)."""
    return code_of(row.key, name, shown=True)


def details(report: StorageReport) -> list[str]:
    """A line for every row that did not simply work, and for every warning PyTorch gave."""
    name = report.subject.name
    lines = [_("{code}: {verdict}").format(code=code(r, name), verdict=verdict(r, name))
             for r in report.rows if r.after_inplace != "ok"]
    for r in report.rows:
        for warning in r.warnings:
            lines.append(_("{code}: PyTorch warns \"{warning}\" It copies anyway, as {fix} does, which is the "
                           "way to write it.").format(code=code(r, name), warning=quote(warning, MESSAGE),
                                                      fix=code_of("detach().clone()", name, shown=True)))
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
        head = head + [_("holds now")]
        body = [row + [held.get(r.code, "-")] for row, r in zip(body, report.rows, strict=True)]
        a = mem.window(name)
        caption = _("{name} holds {values}, its version counter {counter} = {version}").format(
            name=shown(name), values=a.values, counter=a.counter, version=a.version)
        if mem.edited:
            after = _("After {edit} (refused by PyTorch): {caption}") if mem.refused else _(
                "After {edit} (applied): {caption}")
            caption = after.format(edit=mem.edited, caption=caption)
    return html_table(head, body, caption=caption, highlight=highlight, classes=classes)


def html(report: StorageReport) -> str:
    """The HTML face: the same content as the text face, as paragraphs, a table and a list."""
    subject = report.subject
    items = "".join(f"<li>{esc(n)}</li>" for n in notes(report))
    return (f'<div class="agl-storage"><p><b>{esc(describe(subject))}</b></p>'
            f"<p>{esc(method(subject, EDITS[report.edit].on_tensor))}</p>"
            f"{table_html(report)}{f'<ul>{items}</ul>' if items else ''}</div>")


def _changed(row: Row, name: str) -> str:
    """The sentence that says which names the edit changed."""
    who = {"a": shown(name), "b": f"b = {code(row, name)}" if row.code else "b"}
    changed = [who[n] for n in row.changed]
    if not changed:
        return _("Changed: nothing: no value changed.")
    if len(changed) == 2:
        return _("Changed: {first} and {second} (one storage: the edit shows through both).").format(
            first=changed[0], second=changed[1])
    return _("Changed: only {who}.").format(who=changed[0])


def outcome_lines(row: Row, name: str) -> list[str]:
    """What one applied edit did, as lines: the code, which names changed, the next backward."""
    lines = [f"b = {code(row, name)}; {row.edit}"]
    if row.shares_storage is None:
        return lines + [_("Taking the copy was refused: {message}").format(message=row.message)]
    lines.append(_changed(row, name))
    before, after = row.a_version
    if row.after_inplace != "refused":
        moved = (_("{name}'s version counter went from {before} to {after}.") if after != before
                 else _("{name}'s version counter stayed at {after}."))
        lines.append(moved.format(name=shown(name), before=before, after=after))
    lines.append(_("Next backward of y = {n} * {n}: {verdict}.").format(n=code_of("", name, shown=True),
                                                                         verdict=verdict(row, name)))
    return lines


def outcome_html(row: Row, name: str) -> str:
    lines = outcome_lines(row, name)
    color = status_colour(row.after_inplace)
    body = "".join(f"<div>{esc(line)}</div>" for line in lines[1:])
    return (f'<div><code>{esc(lines[0])}</code> <b style="color:{color}">{esc(outcome_word(row.after_inplace))}</b>'
            f"{body}</div>")
