"""The storage lab's front end: the view %storage shows (table, memory picture, text and HTML faces)
and its widget, where the learner picks a copy and an in-place edit and sees, on twins, which names
change and what the next backward does."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ..display import ModelView, image_widget, png
from ..text import esc
from ..errors import LabInputError
from ..names import caller_names, label, name_in
from ..i18n import _
from . import faces
from .copies import check, copies
from .experiments import StorageReport, build_report, experiment
from .memory import memory
from .picture import picture


class StorageView(ModelView):
    """The storage report with its three faces and a widget; it stands in for the report
    (view["detach()"] is a row). The learner's tensor is only read."""

    def __init__(self, tensor: torch.Tensor, name: str = "a", names: Mapping | None = None,
                 edit: str = "mul_"):
        self.tensor, self.name, self.names = tensor, name, names or {}
        self.model = build_report(tensor, edit=edit, name=name, names=self.names)

    @property
    def report(self) -> StorageReport:
        return self.model  # type: ignore[return-value]

    def text(self) -> str:
        return faces.text(self.report)

    def html(self) -> str:
        return faces.html(self.report)

    def figure(self):
        return picture(memory(self.tensor, self.report))

    def figure_title(self) -> str:
        return _("memory of {name} and its copies").format(name=label(self.name))

    def shown_expression(self) -> str:
        return self.name

    def apply(self, key: str, edit: str):
        """Run the chosen edit on a twin's copy: the row, the report with that edit, the memory after it."""
        copy = next((c for c in copies(self.tensor) if c.key == key), None)
        if copy is None:
            raise LabInputError(_("no copy {key}: pick one of {keys}").format(key=repr(key),
                                                                              keys=", ".join(self.report.keys())))
        report = build_report(self.tensor, edit=edit, name=self.name, names=self.names)
        row = experiment(self.tensor, copy, edit, self.name)
        return row, report, memory(self.tensor, report, key, edit)

    def build_widget(self):
        import ipywidgets as w

        table = w.HTML(faces.table_html(self.report, "detach()", memory(self.tensor, self.report)))
        table.add_class("agl-storage-table")
        image = image_widget(self.figure())
        image.add_class("agl-storage-picture")
        copy = w.Dropdown(options=[(r.code, r.key) for r in self.report.rows], value="detach()",
                          description=_("copy b ="))
        copy.add_class("agl-storage-copy")
        edit = w.Dropdown(options=faces.edit_choices(), value="mul_", description=_("edit"))
        edit.add_class("agl-storage-edit")
        button = w.Button(description=_("Apply edit"), tooltip=_("run the edit on a twin, never on your tensor"))
        button.add_class("agl-storage-apply")
        result = w.HTML(_("Pick a copy and an edit, then press Apply edit. It runs on a twin of "
                          "{name}; yours is not touched.").format(name=esc(label(self.name))))
        result.add_class("agl-storage-result")

        def on_click(_):
            row, report, mem = self.apply(copy.value, edit.value)
            table.value = faces.table_html(report, copy.value, mem)
            image.value = png(picture(mem))
            result.value = faces.outcome_html(row, self.name)

        button.on_click(on_click)
        intro = w.HTML(f"<b>{esc(faces.describe(self.report.subject))}</b>")
        box = w.VBox([intro, table, w.HBox([copy, edit, button]), result, image])
        box.add_class("agl-storage")
        return box


def compare_storage(a, edit: str = "mul_", name: str | None = None, names: Mapping | None = None) -> StorageView:
    """Which copies of a share its storage and its version counter, which stay in the graph, and what
    an in-place edit of each copy does to the next backward. Runs on twins; a is never changed.
    edit is one of "mul_", "add_", "zero_", "numpy"; name is how texts call a (by default the
    caller's own name for it, as %storage x calls it x; "a" if it has none); names (a namespace)
    lets the report mention the learner's other tensors that live in a's storage. Bad input raises
    LabInputError with what to type instead.

    >>> w = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> report = compare_storage(w)
    >>> report.name, report["detach()"].after_inplace, report[".data"].after_inplace
    ('w', 'error', 'silently wrong')
    """
    if name is None:
        name = name_in(names if names is not None else caller_names(), a) or "a"
    check(a, name)
    return StorageView(a, name, names, edit)
