"""Lesson 03's exercise: predict rows of %storage before revealing them. For each copy of a
(detach(), .data, clone(), a view, detach().numpy()): does it share a's memory, and what does an
in-place edit of it do to the next backward (ok, error, silently wrong, refused)? The expected rows
are the storage lab's own experiments (storage.experiments.build_report), run for real."""
from __future__ import annotations

import torch

from ...i18n import N_, _
from ...storage.copies import EDITS
from ...storage.experiments import build_report
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import run
from ..sequences import RowsForm

ASKED = ["detach()", ".data", "clone()", "VIEW", "detach().numpy()"]
EDIT_NAMES = ["mul_", "add_", "zero_"]

WHY = {
    ("detach()", "shares"): N_("detach() returns a tensor that shares a's memory (and its version counter); it "
                               "only leaves the graph."),
    ("detach()", "outcome"): N_("detach() shares a's version counter: the edit bumps it, and the backward that "
                                "saved a refuses to run with an error (modified by an inplace operation)."),
    (".data", "shares"): N_(".data is a's memory seen without the graph: it shares the storage."),
    (".data", "outcome"): N_(".data shares a's memory but not its version counter: autograd cannot see the edit, "
                             "so the backward runs with the changed values and gives silently wrong gradients."),
    ("clone()", "shares"): N_("clone() copies the values into new memory."),
    ("clone()", "outcome"): N_("clone() owns new memory: editing it leaves a, and a's gradient, alone."),
    ("view", "shares"): N_("A view is a window on a's memory: it shares the storage."),
    ("view", "refused"): N_("For a leaf that requires grad, PyTorch refuses an in-place edit of its view at once "
                            "(a view of a leaf Variable that requires grad is being used in an in-place operation)."),
    ("view", "error"): N_("a is not a leaf here, so editing its view in place is allowed; but the view shares a's "
                          "version counter, and the backward that saved a then raises an error."),
    ("detach().numpy()", "shares"): N_("numpy() of a CPU tensor shares its memory: the array is a window on it."),
    ("detach().numpy()", "outcome"): N_("A numpy array writes the memory without telling autograd (no version "
                                        "counter): the backward runs on changed values, silently wrong."),
}


def _subject(seed) -> tuple[str, str, str]:
    """(the code that makes a, the edit, the view's key) for this seed."""
    if seed is None:
        return "a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)", "mul_", "view(-1)"
    gen = torch.Generator().manual_seed(int(seed))
    values = [round(float(v), 1) for v in torch.rand(3, generator=gen) * 4 - 2]
    leaf = bool(torch.randint(0, 2, (1,), generator=gen))
    edit = EDIT_NAMES[int(torch.randint(0, len(EDIT_NAMES), (1,), generator=gen))]
    if leaf:
        return f"a = torch.tensor({values}, requires_grad=True)", edit, "view(-1)"
    make = f"w = torch.tensor({values}, requires_grad=True)\na = w * 2            # " + _("a is not a leaf")
    return make, edit, "view(-1)"


@register("storage_rows", N_("Predict the storage lab's rows"), place=300)
def storage_rows(seed=None) -> Exercise:
    make, edit, view = _subject(seed)
    a = run(make)["a"]
    report = build_report(a, edit=edit)
    keys = [view if k == "VIEW" else k for k in ASKED]
    rows = {row.key: row for row in report}
    expected = tuple((bool(rows[k].shares_storage), rows[k].after_inplace) for k in keys)
    diagnosers = []
    for i, key in enumerate(keys):
        topic = "view" if key == view else key
        shares, outcome = expected[i]
        diagnosers.append(Diagnoser(_(WHY[(topic, "shares")]), when=lambda v, i=i, s=shares: v[i][0] != s,
                                    key=f"shares_{topic.strip('.()').replace('().', '_')}"))
        why = WHY.get((topic, outcome)) or WHY[(topic, "outcome")]
        diagnosers.append(Diagnoser(_(why), when=lambda v, i=i, o=outcome: v[i][1] != o,
                                    key=f"outcome_{topic.strip('.()').replace('().', '_')}"))
    others = ", ".join(f"a.{k.lstrip('.')}" for k in keys[1:])
    notes = (_("y saves a for backward"), _("the copy; the same with {others}").format(others=others),
             _("edit the copy in place (on the numpy array: {edit})").format(edit=EDITS[edit].on_array),
             _("what happens now?"))
    setup = (f"{make}\ny = a * a            # {notes[0]}\n"
             f"b = a.detach()       # {notes[1]}\n"
             f"{EDITS[edit].on_tensor:<20} # {notes[2]}\n"
             f"y.sum().backward()   # {notes[3]}")
    table = "\n".join("  " + (_("{copy}: shares memory yes, {outcome}") if s else
                              _("{copy}: shares memory no, {outcome}")).format(copy=f"a.{k.lstrip('.')}", outcome=o)
                      for k, (s, o) in zip(keys, expected, strict=True))
    solution = _("What the storage lab measured (run %storage a to see every column):\n{table}\n"
                 "detach() and views share memory and the version counter, so autograd notices the edit; .data "
                 "and numpy() share memory without the counter, so it does not: silently wrong gradients. "
                 "clone() owns new memory. Copy with a.detach().clone() when you want to edit safely.").format(
                     table=table)
    return Exercise(
        seed=seed, intro=_("Take a copy b of a, edit b in place, then run a backward that saved a."),
        setup=setup,
        question=_("For each copy b in {copies}: does b share a's "
                   "memory, and what does the in-place edit of b do to y.sum().backward()? (ok: the gradient "
                   "is right; error: backward raises; silently wrong: it runs and the gradient is wrong; "
                   "refused: the edit itself raises.) Predict, then reveal with %storage a.").format(
                       copies=", ".join(f"a.{k.lstrip('.')}" for k in keys)),
        answer_form=_("one (shares memory: yes/no, outcome) pair per copy, in this order, or a dict such as "
                      '{"detach()": ("yes", "ok"), ...}, or text with one "copy: yes, ok" per line'),
        form=RowsForm(keys), expected=expected, hints=[
            _("Two questions per copy: is it the same memory, and does autograd's version counter see the edit?"),
            _("detach() and views share the version counter; .data and numpy() share only the memory."),
            _("For a leaf that requires grad, an in-place edit of a view is refused at once.")],
        solution_text=solution, diagnosers=diagnosers, kind=_("the rows"),
        example='ex.check({"detach()": ("yes", "ok"), ...})',
        praise=_("Shared memory plus a shared version counter: an error; shared memory alone: silently wrong."))
