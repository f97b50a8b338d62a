"""The one place that decides which face of a view a learner sees.

Every view of the lab is a View: it has a text face (text/plain, what terminals show and nbval
compares), an HTML face (text/html, for static renderers) and may have a figure and a live widget.
In a Jupyter kernel the widget is shown, with the text and HTML faces beside it in the same output
for nbval and for static renderers; the HTML face carries the figure, if any, as an <img>, so a
notebook read without a kernel still shows the picture. Elsewhere (terminal IPython, tests) the
figure is shown as a PNG followed by the text and HTML faces."""
from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def live() -> bool:
    """True inside a Jupyter kernel, where a widget can be drawn by the front end."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class View:
    """Base of every view: subclasses give text(); html(), figure() and build_widget() are optional."""

    _widget = None

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
        if self._widget is None:
            self._widget = self.build_widget()
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
            return
        fig = self.figure()
        if fig is not None:
            from .i18n import _

            display({"image/png": png(fig), "text/plain": _("<figure: {title}>").format(title=self.figure_title())},
                    raw=True)
        display(self.bundle(with_widget=False), raw=True)

    def figure_title(self) -> str:
        return type(self).__name__

    def static_html(self) -> str:
        """The HTML face with the figure, if any, inside it as an <img>: renderers (GitHub, nbviewer,
        nbconvert) show text/html in preference to image/png, so a picture beside the HTML is never
        seen. The widget, in a live front end, replaces all of it."""
        fig = self.figure()
        if fig is None:
            return self.html()
        return img_tag(png(fig), self.figure_title()) + self.html()


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


def evaluate_typed(text: str, names) -> object:
    """What a learner typed into a box, evaluated in their namespace (torch available as torch).
    A copy of the namespace: eval would otherwise add __builtins__ to the learner's dict."""
    import torch

    return eval(text, {"torch": torch}, dict(names or {}))


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
