"""The Jacobian's front end: jacobian(y, x) or jacobian(f, x) as a view that stands in for the
Jacobian (view.matrix is the tensor), and jacobian_view for the %jacobian magic."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from ..display import ModelView, image_widget
from ..errors import LabInputError
from ..format import quote
from ..i18n import _
from ..names import caller_names, name_in
from . import faces
from .matrix import Jacobian, of_function, of_graph
from .picture import picture

LABEL = 60  # characters of an expression shown as a label


class JacobianView(ModelView):
    """A Jacobian with its faces and a picture; view.matrix, view.tensor, view.vjp pass through."""

    model: Jacobian
    text_face = staticmethod(faces.text)
    html_face = staticmethod(faces.html)

    def figure(self):
        return picture(self.model)

    def figure_title(self) -> str:
        return faces.heading(self.model)

    def build_widget(self):
        import ipywidgets as w

        image = image_widget(self.figure(), max_width="480px")
        image.add_class("agl-jacobian-picture")
        table = w.HTML(self.html())
        table.add_class("agl-jacobian-table")
        return w.VBox([table, image])


def jacobian(y, x, v=None, names: Mapping | None = None) -> JacobianView:
    """The full Jacobian dy/dx: y a tensor computed from x (through its graph), or a function of x
    (torch.func.jacrev). With v (shaped like y): v @ J beside what y.backward(v) accumulates.
    Nothing is written to any .grad.

    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> jacobian(x ** 2, x, v=torch.tensor([1., 0., 2.])).vjp
    tensor([ 2.,  0., 12.])
    >>> x.grad is None
    True
    """
    if names is None:
        names = caller_names()
    return jacobian_view(y, x, v=v, names=names)


def jacobian_view(y, x, v=None, names: Mapping | None = None, y_label: str | None = None,
                  x_label: str | None = None) -> JacobianView:
    """For the magic: y and x already evaluated, their labels as the learner typed them.

    >>> x = torch.ones(2, requires_grad=True)
    >>> jacobian_view(x * 3, x, names={}, y_label="x * 3").shape
    (2, 2)
    """
    if names is not None and not isinstance(names, Mapping):
        raise LabInputError(_("names must be a mapping of your names to values, got a {type}, e.g. "
                              "names=globals(); leave it out and the names of your namespace are used.").format(
                                  type=type(names).__name__))
    names = names or {}
    x_label = _label(x_label or name_in(names, x) or "x")
    if isinstance(y, torch.Tensor):
        y_label = _label(y_label or name_in(names, y) or "y")
        return JacobianView(of_graph(y, x, v, names, y_label, x_label))
    if callable(y):
        name = getattr(y, "__name__", None)
        f_label = _label(y_label or name_in(names, y) or (name if isinstance(name, str) else "f"))
        f_label = "f" if f_label == "<lambda>" else f_label
        return JacobianView(of_function(y, x, v, f_label, x_label))
    raise LabInputError(_("jacobian takes a tensor computed from x, or a function of x; got a {type}. "
                          "E.g. jacobian(y, x) with y = x ** 2, or jacobian(lambda t: t ** 2, x).").format(
                              type=type(y).__name__))


def _label(text: str) -> str:
    """A label as the faces show it: a long expression shortened (for display only)."""
    return quote(text, LABEL)
