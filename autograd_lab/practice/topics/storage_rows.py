"""Lesson 03's exercise: predict rows of %storage before revealing them. For each copy of a
(detach(), .data, clone(), a view, detach().numpy()): does it share a's memory, and what does an
in-place edit of it do to the next backward (ok, error, silently wrong, refused)? The expected rows
are the storage lab's own experiments (storage.experiments.build_report), run for real."""
from __future__ import annotations

import torch

from ...storage.copies import EDITS
from ...storage.experiments import build_report
from ...words import words_of
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import run
from ..sequences import RowsForm
from .common import stated

ASKED = ["detach()", ".data", "clone()", "VIEW", "detach().numpy()"]
EDIT_NAMES = ["mul_", "add_", "zero_"]

W = words_of(__name__)
#: the table of [why] that says why a copy's row is what it is (the storage lab's row keys; "view" for any view)
WHY = {"detach()": "detach", ".data": "data", "clone()": "clone", "view": "view", "detach().numpy()": "numpy"}


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
    make = f"w = torch.tensor({values}, requires_grad=True)\na = w * 2            # " + W["subject"]("not_leaf")
    return make, edit, "view(-1)"


@register("storage_rows", W["storage_rows"]["title"], lesson=3)
def storage_rows(seed=None) -> Exercise:
    t = W["storage_rows"]
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
        why = W["why"][WHY[topic]]
        diagnosers.append(Diagnoser(why("shares"), when=lambda v, i=i, s=shares: v[i][0] != s,
                                    key=f"shares_{topic.strip('.()').replace('().', '_')}"))
        # a view's table says why for each outcome ("refused", "error"), the others' for theirs at once ("outcome")
        diagnosers.append(Diagnoser(why(outcome) if outcome in why else why("outcome"),
                                    when=lambda v, i=i, o=outcome: v[i][1] != o,
                                    key=f"outcome_{topic.strip('.()').replace('().', '_')}"))
    others = ", ".join(f"a.{k.lstrip('.')}" for k in keys[1:])
    notes = (t("note_saves"), t("note_copy").format(others=others),
             t("note_edit").format(edit=EDITS[edit].on_array), t("note_now"))
    setup = (f"{make}\ny = a * a            # {notes[0]}\n"
             f"b = a.detach()       # {notes[1]}\n"
             f"{EDITS[edit].on_tensor:<20} # {notes[2]}\n"
             f"y.sum().backward()   # {notes[3]}")
    table = "\n".join("  " + (t("row_shared") if s else t("row_own")).format(copy=f"a.{k.lstrip('.')}", outcome=o)
                      for k, (s, o) in zip(keys, expected, strict=True))
    return Exercise(
        seed=seed, setup=setup, form=RowsForm(keys), expected=expected,
        solution_text=t("solution").format(table=table), diagnosers=diagnosers,
        example='ex.check({"detach()": ("yes", "ok"), ...})',
        **stated(t, question=t("question").format(copies=", ".join(f"a.{k.lstrip('.')}" for k in keys))))
