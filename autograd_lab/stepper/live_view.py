"""The steppers alive in a kernel: a stepper made for the same cell (and expression) as an older
one releases the older, so re-running a %backward cell twenty times keeps one recording in memory,
not twenty. The released widget keeps one line saying so; its buttons, slider and picture are
closed, so the kernel lets go of them too."""
from __future__ import annotations

from ..i18n import N_, _
from ..text import esc

RELEASED = N_("this stepper was released to free memory: the same cell made a newer one. Re-run the cell to "
              "step through it again.")
# The live stepper of each cell (or label): a new one for the same cell releases the old one, so
# re-running a cell does not keep every earlier recording alive in the kernel.
_current: dict = {}


def released_html() -> str:
    """What a released stepper shows, in its widget and as its HTML face."""
    return f"<p><i>{esc(_(RELEASED))}</i></p>"


def supersede(stepper, label: str) -> None:
    """Remember stepper as the live one of the current cell and label; release the one before."""
    key = (_cell_id(), label)
    old = _current.get(key)
    if old is not None and old is not stepper:
        old.release()
    _current[key] = stepper


def _cell_id():
    """The id of the cell being run, when the front end sends one (JupyterLab does)."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # no kernel, or an ipykernel without get_parent: one slot per label
        return None
    return ((parent or {}).get("metadata") or {}).get("cellId")


def release_widget(widget) -> None:
    """Replace the widget's contents by one line saying it was released, and close the rest."""
    import ipywidgets as w

    parts = _descendants(widget)
    note = w.HTML(released_html())
    note.add_class("agl-released")
    widget.children = (note,)
    for part in parts:
        for extra in (getattr(part, "layout", None), getattr(part, "style", None)):
            if extra is not None:
                extra.close()
        part.close()


def _descendants(box) -> list:
    out, stack = [], list(getattr(box, "children", ()))
    while stack:
        part = stack.pop()
        out.append(part)
        stack.extend(getattr(part, "children", ()))
    return out


class Released:
    """What a released stepper keeps of its trace: how many steps it had."""

    def __init__(self, count: int):
        self.steps = [None] * count
        self.names: dict = {}
        self.applied = False
