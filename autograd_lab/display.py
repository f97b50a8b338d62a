"""The one place that decides which face of a view a learner sees.

Every view of the lab is a View: it has a text face (text/plain, what terminals show and nbval
compares), an HTML face (text/html, for static renderers) and may have a figure and a live widget.
In a Jupyter kernel the widget is shown, with the text and HTML faces beside it in the same output
for nbval and for static renderers; the HTML face carries the figure, if any, as an <img>, so a
notebook read without a kernel still shows the picture. Elsewhere (terminal IPython, tests) the
figure is shown as a PNG followed by the text and HTML faces."""
from __future__ import annotations

import io
import weakref
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any

from .errors import LabInputError
from .i18n import N_, _

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: What a released view says, by why it was released (the stepper words its own, stepper/live_view.py):
#: "cell": the cell that showed it ran again (the front end sent the cell's id); "subject": a newer
#: view of the same expression was shown, and the front end sends no cell id; "code": the same, for a
#: view that names no expression, by the cell's code; "asked": release() was called.
RELEASED = {
    "cell": N_("this view was released to free memory: the same cell showed a newer one. Re-run the cell to "
               "see it again."),
    "subject": N_("this view of {subject} was released to free memory: a newer view of {subject} was shown, by "
                  "this cell or another (this front end does not say which cell runs). Re-run the cell to see "
                  "it again."),
    "code": N_("this view was released to free memory: a cell with the same code ran again (this front end does "
               "not say which cell runs). Re-run the cell to see it again."),
    "asked": N_("this view was released to free memory. Re-run the cell to see it again."),
}


def live() -> bool:
    """True inside a Jupyter kernel, where a widget can be drawn by the front end."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class View:
    """Base of every view: subclasses give text(); html(), figure() and build_widget() are optional.

    In a live kernel every view shown is noted (``shown``): when the cell that showed it runs again,
    or, where the front end sends no cell id, when a newer view of the same subject is shown, the older
    view is released: it lets go of its data (model, trace, figure, tensors) and its widget's controls,
    and from then on its faces say why in one sentence. So an ``Out[n]`` or a widget kept by the front
    end never keeps a graph alive."""

    _widget = None
    released = False  # True once release() let go of the view's data
    _why: tuple[str, str] = ("asked", "")  # why: a key of released_words, and the subject it names
    released_words: Mapping[str, str] = RELEASED

    def text(self) -> str:
        raise NotImplementedError

    def html(self) -> str:
        from .text import pre

        return pre(self.text())

    def figure(self):
        """A matplotlib Figure shown above the static faces, or None."""
        return None

    def build_widget(self):
        """An ipywidgets widget for live kernels, or None for views without one."""
        return None

    @property
    def widget(self):
        if self._widget is None and not self.released:
            self._widget = self.build_widget()
            if self._widget is not None:
                mark_language(self._widget)
        return self._widget

    def __repr__(self) -> str:
        return self.text()

    def bundle(self, with_widget: bool) -> dict[str, Any]:
        data: dict[str, Any] = {"text/plain": self.text(), "text/html": self.static_html()}
        if with_widget and self.widget is not None:
            data[WIDGET_MIME] = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
        return data

    def _ipython_display_(self):
        from IPython.display import display

        if live() and self.widget is not None:
            display(self.bundle(with_widget=True), raw=True)
            shown(self)
            return
        fig = self.figure()
        if fig is not None:
            display({"image/png": png(fig), "text/plain": _("<figure: {title}>").format(title=self.figure_title())},
                    raw=True)
        display(self.bundle(with_widget=False), raw=True)
        if live():  # no widget, but an Out[n] or a variable may hold it: released like the others
            shown(self)

    def figure_title(self) -> str:
        return type(self).__name__

    def alt_text(self) -> str:
        """What the figure shows now, in words, for the <img>'s alt and the widget's image (bounded
        by alt()); views whose title says it all keep the title."""
        return self.figure_title()

    def static_html(self) -> str:
        """The HTML face with the figure, if any, inside it as an <img>: renderers (GitHub, nbviewer,
        nbconvert) show text/html in preference to image/png, so a picture beside the HTML is never
        seen. The widget, in a live front end, replaces all of it."""
        fig = self.figure()
        if fig is None:
            return in_language(self.html())
        return in_language(img_tag(png(fig), alt(self.alt_text())) + self.html())

    # --- released ---------------------------------------------------------------------------------
    def shown_expression(self) -> str:
        """What the view shows, as the learner wrote it (the expression of %storage a, %graph z):
        where the front end sends no cell id, a newer view of the same kind and subject releases this
        one. "" for a view that names none (then a cell with the same code does)."""
        return ""

    def released_text(self) -> str:
        """The one sentence a released view shows: why it was released."""
        from .format import quote

        reason, subject = self._why
        return _(self.released_words[reason]).format(subject=quote(subject))

    def release(self, reason: str = "asked") -> None:
        """Let go of the view's data and close its widget's controls; from now on its faces say why
        (reason: a key of RELEASED). A released view asked for anything else raises ReleasedError,
        which says the same."""
        # the cell that showed it ran again: the front end cleared that output, no note is needed
        self._release(reason, note=reason != "cell")

    def _release(self, reason: str, note: bool) -> None:
        if self.released:
            return
        subject = self.shown_expression() if reason == "subject" else ""
        widget = self._widget
        held = _held({k: v for k, v in vars(self).items() if k != "_widget"})
        self._let_go()
        self.released, self._why, self._widget = True, (reason, subject), None
        if widget is not None and release_widget(widget, self.released_text() if note else None):
            self._widget = widget
            _LIVE.noted(self, widget)
        for part in held:  # what it held: a record's steppers (inside its widget), controls kept aside
            if isinstance(part, View):
                part._release(reason, note=False)
            else:
                release_widget(part)

    def _let_go(self) -> None:
        """Drop everything the view holds: its class becomes a released copy of itself (still an
        instance of its kind), whose faces say why and which refuses everything else."""
        vars(self).clear()
        self.__class__ = _released_class(type(self))

    def _slots(self) -> dict:
        """The table where the live views of this kind are kept (the stepper keeps its own)."""
        return _SLOTS


class ReleasedError(LabInputError, AttributeError):
    """What a released view raises when asked for its data: the sentence saying why it was released."""


class _Released:
    """Put first in a released view's class: its faces say why it was released, and an attribute,
    an index or iteration raises ReleasedError with that sentence (names with a leading underscore
    stay AttributeError, so IPython's display still finds nothing there)."""

    released_text: Callable[[], str]

    def text(self) -> str:
        return self.released_text()

    def html(self) -> str:
        from .text import esc

        return f'<p class="agl-released"><i>{esc(self.released_text())}</i></p>'

    def figure(self):
        return None

    def figure_title(self) -> str:
        return ""

    def build_widget(self):
        return None

    def shown_expression(self) -> str:
        return ""

    @property
    def model(self):
        raise ReleasedError(self.released_text())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise ReleasedError(self.released_text())

    def __getitem__(self, key):
        raise ReleasedError(self.released_text())

    def __iter__(self):
        raise ReleasedError(self.released_text())

    def __len__(self) -> int:
        raise ReleasedError(self.released_text())

    def __bool__(self) -> bool:
        return True


_RELEASED_CLASSES: dict[type, type] = {}


def _released_class(kind: type) -> type:
    """The released copy of a view class, made once: a subclass, so isinstance() still holds."""
    made = _RELEASED_CLASSES.get(kind)
    if made is None:
        made = type(kind.__name__, (_Released, kind), {"__module__": kind.__module__,
                                                       "__qualname__": kind.__qualname__,
                                                       "__doc__": _Released.__doc__})
        _RELEASED_CLASSES[kind] = made
    return made


def _held(values: dict) -> list:
    """The views (directly or in a list or tuple: a record's steppers) and the widgets (also in a
    dict: a stepper's buttons) kept in a view's attributes. Never what a mapping holds otherwise: a
    view's names are the learner's namespace, whose Out[n] views are none of this view's business."""
    found: list = []
    for value in values.values():
        if isinstance(value, dict):
            found.extend(item for item in value.values() if _is_widget(item))
            continue
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, View) or _is_widget(item):
                found.append(item)
    return found


def _is_widget(value) -> bool:
    import sys

    widgets = sys.modules.get("ipywidgets")  # never imported here for this: a view without one has none
    return widgets is not None and isinstance(value, widgets.Widget)


def release_widget(widget, note: str | None = None) -> bool:
    """Close widget and every widget inside it (with their layouts and styles), so that the kernel
    lets go of them. With a note, a box keeps showing that one sentence instead of its contents (an
    output still on the page then says why it changed); True if it did."""
    import ipywidgets as w

    from .text import esc

    parts, stack = [], list(getattr(widget, "children", ()))
    while stack:
        part = stack.pop()
        parts.append(part)
        stack.extend(getattr(part, "children", ()))
    keep = note is not None and isinstance(widget, w.Box)
    if keep:
        line = w.HTML(f"<p><i>{esc(note)}</i></p>")
        line.add_class("agl-released")
        widget.children = (line,)
    else:
        parts.append(widget)
    for part in parts:
        for extra in (getattr(part, "layout", None), getattr(part, "style", None)):
            if isinstance(extra, w.Widget):
                extra.close()
        if isinstance(part, w.Widget):
            part.close()
    return keep


# --- the views shown in a live kernel --------------------------------------------------------------

NOTES = 10  # released widgets kept showing their sentence; older ones are closed altogether
_SLOTS: dict = {}  # the live view of each slot (the stepper's are in stepper/live_view.py)


class _Entry:
    """A view shown in a live kernel: the view itself weakly (it may be gone while its widget is
    still drawn), its widget, its kind, its subject and the code of the cell that showed it."""

    __slots__ = ("code", "kind", "subject", "view", "widget")

    def __init__(self, view: View, code: str = ""):
        self.view = weakref.ref(view)
        self.widget, self.kind, self.subject, self.code = view._widget, type(view), view.shown_expression(), code

    def release(self, reason: str, note: bool) -> None:
        """Release the view, or its widget alone if the view is gone; note: its widget keeps the
        sentence saying why (its output may still be on the page)."""
        view = self.view()
        if view is not None:
            view._release(reason, note)
        elif self.widget is not None:
            from .format import quote

            said = _(self.kind.released_words[reason]).format(subject=quote(self.subject)) if note else None
            if release_widget(self.widget, said):
                _LIVE.noted(None, self.widget)
        self.widget = None


class _Run:
    """The views shown while one message (a cell's execution) is handled, in order."""

    def __init__(self, execution: str, cell: str | None, code: str):
        self.execution, self.cell, self.code = execution, cell, code
        self.shown: list[tuple[dict, tuple, _Entry]] = []
        self.counts: Counter = Counter()


class _Live:
    """The bookkeeping of the views shown in this kernel."""

    def __init__(self):
        self.run: _Run | None = None
        self.tables: list[dict] = []
        self.notes: deque = deque()
        self.hooked = None  # the shell whose post_run_cell event settles each cell

    def noted(self, view: View | None, widget) -> None:
        """A released widget kept its sentence: at most NOTES do, the oldest is closed."""
        self.notes.append((weakref.ref(view) if view is not None else None, widget))
        while len(self.notes) > NOTES:
            ref, old = self.notes.popleft()
            release_widget(old)
            owner = ref() if ref is not None else None
            if owner is not None and owner._widget is old:
                owner._widget = None


_LIVE = _Live()


def shown(view: View) -> None:
    """Note that view was shown in a live kernel (a stepper: made). The views the cell showed when it
    ran before are released once the cell has run (those it shows again are kept); where the front
    end sends no cell id, each view releases the older one of the same kind and subject (or, naming
    none, shown by a cell with the same code), counted in order within the cell."""
    if view.released:
        return
    execution, cell, code = _parent()
    table = view._slots()
    if not any(t is table for t in _LIVE.tables):
        _LIVE.tables.append(table)
    if execution is None:  # no kernel message to tell runs apart: one slot per kind and subject
        key = ("none", type(view), view.shown_expression())
        old = table.get(key)
        table[key] = _Entry(view)
        if old is not None and old.view() is not view:
            old.release("subject" if key[2] else "asked", note=True)
        return
    run = _LIVE.run
    if run is not None and run.execution != execution:
        _settle()
        run = None
    if run is None:
        run = _LIVE.run = _Run(execution, cell, code)
        _hook()
    for _table, _key, entry in run.shown:
        if entry.view() is view:  # shown again in the same run: the same slot
            entry.widget = view._widget
            return
    if cell is not None:
        base: tuple = ("cell", cell)
    else:
        subject = view.shown_expression()
        base = ("subject", type(view), subject) if subject else ("code", type(view), code)
    position = run.counts[base]
    run.counts[base] += 1
    run.shown.append((table, base + (position,), _Entry(view, code)))


def _settle(*_args) -> None:
    """After a cell ran: its views take their slots; the views they replace are released, and so
    are those the same cell showed before and shows no more, unless shown now or elsewhere."""
    run, _LIVE.run = _LIVE.run, None
    if run is None:
        execution, cell, code = _parent()
        if cell is None or execution is None:
            return
        run = _Run(execution, cell, code)  # a cell that showed no view this time
    now = [entry.view() for _t, _k, entry in run.shown]
    replaced: list[tuple[_Entry, str]] = []
    for table, key, entry in run.shown:
        old = table.get(key)
        table[key] = entry
        if old is not None:
            replaced.append((old, key[0]))
    if run.cell is not None:
        kept = {(id(table), key) for table, key, _e in run.shown}
        for table in _LIVE.tables:
            for key in [k for k in table if k[:2] == ("cell", run.cell) and (id(table), k) not in kept]:
                replaced.append((table.pop(key), "cell"))
    for old, reason in replaced:
        view = old.view()
        if view is not None and (any(view is v for v in now) or _elsewhere(view)):
            continue
        # a cell that ran again (its id, or the same code) cleared its outputs: no sentence to keep
        # on the page; shown by another cell, the older view's widget says why it went blank
        old.release(reason, note=reason != "cell" and old.code != run.code)


def _elsewhere(view: View) -> bool:
    """Whether view still holds a slot (shown by another cell too)."""
    return any(entry.view() is view for table in _LIVE.tables for entry in table.values())


def _hook() -> None:
    """Settle each cell after it ran (IPython's post_run_cell event), once per shell."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or _LIVE.hooked is shell:
            return
        shell.events.register("post_run_cell", _after_cell)
        _LIVE.hooked = shell
    except Exception:  # pragma: no cover - an IPython without events: settled at the next view
        return


def _after_cell(*_args) -> None:
    try:
        _settle()
    except Exception:  # pragma: no cover - never a traceback in the learner's next cell from here
        _LIVE.run = None


def _parent() -> tuple[str | None, str | None, str]:
    """The message the kernel is handling: its id, the id of its cell when the front end sends one
    (JupyterLab does; Notebook 6, nbclassic and nbclient do not), and the cell's code. (None, None,
    "") outside a kernel."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # no kernel, or an ipykernel without get_parent
        return None, None, ""
    parent = parent if isinstance(parent, dict) else {}
    execution = (parent.get("header") or {}).get("msg_id")
    cell = (parent.get("metadata") or {}).get("cellId")
    code = (parent.get("content") or {}).get("code")
    return (execution if isinstance(execution, str) and execution else None,
            cell if isinstance(cell, str) and cell else None, code if isinstance(code, str) else "")


class ModelView(View):
    """A view over one model object (a report, an explanation, an exercise) that stands in for it:
    attribute access, indexing, iteration and len() go through to the model, so code written
    against the model (``report["view(-1)"]``, ``prof.growth``, ``ex.check(...)``) keeps working.
    A subclass names its room's faces, ``text_face = staticmethod(faces.text)`` and
    ``html_face = staticmethod(faces.html)``, or overrides text() and html()."""

    model: object = None
    text_face: Callable[[Any], str] | None = None
    html_face: Callable[[Any], str] | None = None

    def __init__(self, model: object = None):
        self.model = model

    def text(self) -> str:
        if self.text_face is None:
            raise NotImplementedError(f"{type(self).__name__} names no text_face")
        return self.text_face(self.model)

    def html(self) -> str:
        return self.html_face(self.model) if self.html_face is not None else super().html()

    def __getattr__(self, name):
        # only called for names the view itself lacks; guard the model slot against recursion
        if name == "model" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.model, name)

    def __getitem__(self, key):
        return self.model[key]  # type: ignore[index]

    def __iter__(self):
        return iter(self.model)  # type: ignore[call-overload]

    def __len__(self) -> int:
        return len(self.model)  # type: ignore[arg-type]


def scrolling(widget):
    """widget in a box that scrolls sideways: a figure is shown at its own size, labels readable."""
    import ipywidgets as w

    return w.Box([widget], layout=w.Layout(overflow="auto", max_width="100%"))


def image_widget(fig=None, max_width: str = "100%"):
    """An ipywidgets Image of a matplotlib Figure (or an empty one to fill later with png())."""
    import ipywidgets as w

    image = w.Image(format="png", layout=w.Layout(max_width=max_width))
    if fig is not None:
        image.value = png(fig)
    return image


def in_language(html: str) -> str:
    """html inside a <div lang="..."> naming the language in use, when it is not English (the page's
    own), so screen readers and fonts read Chinese faces as Chinese; a text already marked is kept."""
    from .i18n import language

    code = language()
    opening = f'<div lang="{code}">'
    if code == "en" or html.startswith(opening):
        return html
    return f"{opening}{html}</div>"


def mark_language(widget) -> None:
    """Every HTML part of a widget (and of its children) in_language, now and whenever it changes."""
    import ipywidgets as w

    from .i18n import language

    if language() == "en":
        return
    if isinstance(widget, w.HTML):
        widget.value = in_language(widget.value)
        widget.observe(_marked, names="value")
    for child in getattr(widget, "children", ()):
        mark_language(child)


def _marked(change) -> None:
    marked = in_language(change["new"])
    if marked != change["new"]:
        change["owner"].value = marked


#: The longest alt text, in characters: a screen reader reads it whole at every step.
ALT = 300


def alt(text: str) -> str:
    """text as one line of at most ALT characters (cut with an ellipsis)."""
    line = " ".join(text.split())
    return line if len(line) <= ALT else line[:ALT - 1] + "…"


def img_tag(data: bytes, alt: str) -> str:
    """PNG bytes as an HTML <img> with a data URI, readable without a kernel or a file beside it.

    >>> tag = img_tag(b"PNG", "a graph")
    >>> tag.startswith('<div class="agl-static-scroll" style="overflow-x:auto"><img class="agl-static-figure"')
    True
    >>> tag.endswith('alt="a graph" src="data:image/png;base64,UE5H"/></div>')
    True
    """
    import base64

    from .text import esc

    # at its own size, scrolling sideways when wider than the page: shrunk, its labels would fall
    # below the size of the text around them
    return (f'<div class="agl-static-scroll" style="overflow-x:auto">'
            f'<img class="agl-static-figure" style="max-width:none" alt="{esc(alt)}" '
            f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}"/></div>')


def png(fig, dpi: int = 80) -> bytes:
    """A matplotlib Figure as PNG bytes, without the metadata that would vary between runs."""
    buf = io.BytesIO()
    # Fast, light compression: a stepper re-renders its figure at every click.
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def show(view) -> None:
    """Display a view (or anything IPython can display) in the current front end."""
    from IPython.display import display

    display(view)
