"""The stepper: the widget that walks through a recorded backward one step at a time, and step(),
which records one and returns it (the graph view is graph_view.py)."""
from __future__ import annotations

import operator
from collections.abc import Mapping

from ..display import View, live, scrolling
from ..errors import LabInputError
from ..i18n import _, ngettext
from ..names import caller_names, label as shortened, name_in
from ..practice.checking import WrongForm
from ..practice.typed import read_typed
from ..text import esc
from .draw import RENDERING, Drawing, Layout
from .faces import applied_text, arriving, recent_html, sent_on, step_title, walk_html, walk_text
from . import live_view
from .live_view import Released, supersede
from .panel_faces import next_prompt, panel_html, panel_text, unread_html, verdict_html
from .predict import Verdict, compare, judged
from .trace import Trace, trace as record
from .windows import NextWindow
from .yours import yours_line

WINDOW = 36  # nodes drawn at once: a big graph is shown around the current node


def playing_trait(play) -> str:
    """The name of the Play widget's running state: `playing` from ipywidgets 8, `_playing` in 7."""
    return "playing" if play.has_trait("playing") else "_playing"


class Stepper(View):
    """Walk through one recorded backward. index is how many steps are revealed (0 = none).

    >>> import torch
    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> s = Stepper(record((x ** 2).mean(), names={"x": x}))
    >>> s.next().index, s.current.name
    (1, 'MeanBackward0')
    """

    def __init__(self, trace: Trace, predict: bool = False, apply: bool = False, label: str | None = None):
        self.trace = trace
        self.predicting = predict
        self.apply_at_end = apply
        self.applied = trace.applied  # a trace recorded with apply=True was the backward itself
        self.label = label if label is not None else _("the output")
        self.index = 0
        self.verdicts: dict[int, Verdict] = {}
        self._layout: Layout | None = None
        self._drawing: Drawing | None = None
        self.ahead = NextWindow()  # on in a live kernel: the next window drawn between clicks

    # --- moving -------------------------------------------------------------------------------
    @property
    def current(self):
        return self.trace.steps[self.index - 1] if self.index else None

    def goto(self, index: int) -> Stepper:
        if self.released:
            return self
        try:
            if isinstance(index, bool):
                raise TypeError
            index = operator.index(index)  # a whole number (int, numpy or 0-d integer tensor), not 2.5 or nan
        except TypeError:
            raise LabInputError(_("goto takes a step number from 0 to {last}, e.g. stepper.goto(2); got {given}. "
                                  "Nothing was changed.").format(last=len(self.trace.steps),
                                                                 given=repr(index)[:40])) from None
        index = max(0, min(index, len(self.trace.steps)))
        if index != self.index:
            self.index = index
            if index == len(self.trace.steps) and self.apply_at_end and not self.applied:
                self.trace.apply()
                self.applied = True
            self._refresh()
        return self

    def next(self) -> Stepper:
        return self.goto(self.index + 1)

    def prev(self) -> Stepper:
        return self.goto(self.index - 1)

    def reset(self) -> Stepper:
        return self.goto(0)

    def end(self) -> Stepper:
        return self.goto(len(self.trace.steps))

    def predict(self, answer) -> Verdict:
        """Check a prediction of what the next step sends on, then reveal that step. An answer that
        cannot be compared (not numbers, the wrong shape or count) reveals nothing: try again."""
        if self.released:
            return Verdict(False, self.released_text())
        if self.index >= len(self.trace.steps):
            return Verdict(False, _("backward is finished: there is no step left to predict"))
        step = self.trace.steps[self.index]
        expected = (step.grad_after,) if step.node.is_accumulator else step.grad_inputs
        verdict = compare(answer, expected, step=step)  # with the step: the usual mistakes named
        if not judged(verdict, expected):
            return Verdict(False, _("{message} (nothing revealed: try again)").format(message=verdict.message),
                           diagnosis=verdict.diagnosis)
        self.verdicts[self.index + 1] = verdict
        self.next()
        return verdict

    # --- released (display.View.release: a newer stepper replaced it) ---------------------------
    released_words = live_view.WORDS

    def shown_expression(self) -> str:
        return self.label

    def _slots(self) -> dict:
        return live_view._current

    def _let_go(self) -> None:
        """Let go of the recording (graph, saved values, gradients) and of the controls; the stepper
        stays a stepper: moving does nothing, and its faces say why."""
        self.ahead.cancel()
        # the Released stand-in answers what a released stepper is still asked (its step count)
        self.trace, self._layout, self._drawing = Released(len(self.trace.steps)), None, None  # type: ignore[assignment]
        self.verdicts.clear()
        for name in ("buttons", "_image", "_panel", "_slider", "_play", "_autoplay", "_link", "_log", "_answer",
                     "_verdict"):
            vars(self).pop(name, None)

    # --- faces --------------------------------------------------------------------------------
    @property
    def title(self) -> str:
        n = len(self.trace.steps)
        if getattr(self.trace, "own", False) and getattr(self.trace, "call", "") == "grad":
            return ngettext("your own torch.autograd.grad call on {name}, run for real (it returns the gradients and "
                            "writes no .grad): {count} step in the order the engine ran them",
                            "your own torch.autograd.grad call on {name}, run for real (it returns the gradients and "
                            "writes no .grad): {count} steps in the order the engine ran them", n).format(
                                name=shortened(self.label), count=n)
        if getattr(self.trace, "own", False):
            return ngettext("your own backward of {name}, run for real (.grad written, hooks run, as your code does): "
                            "{count} step in the order the engine ran them",
                            "your own backward of {name}, run for real (.grad written, hooks run, as your code does): "
                            "{count} steps in the order the engine ran them", n).format(name=shortened(self.label),
                                                                                        count=n)
        return ngettext("backward of {name}: {count} step in the order the engine ran them",
                        "backward of {name}: {count} steps in the order the engine ran them", n).format(
            name=shortened(self.label), count=n)

    def text(self) -> str:
        if self.released:
            return self.released_text()
        text = walk_text(self.trace, self.title, self.index, self.index if self.predicting else None)
        wrote = self.applied and getattr(self.trace, "call", "backward") != "grad"
        return text + "\n" + applied_text(self.trace) if wrote else text

    def html(self) -> str:
        return (f'<p class="agl-released"><i>{esc(self.released_text())}</i></p>' if self.released
                else walk_html(self.trace, self.title, self.index, self.index if self.predicting else None))

    @property
    def drawing(self) -> Drawing:
        """The figure of the window shown now, drawn on first use."""
        return self._paint_args()[0]

    @property
    def layout(self) -> Layout:
        if self._layout is None:
            self._layout = Layout(self.trace.graph)
        return self._layout

    def _paint_args(self) -> tuple[Drawing, tuple]:
        """The drawing of the window shown now, and its paint arguments (current, done, ready)."""
        steps = self.trace.steps
        done = {s.node for s in steps[: max(self.index - 1, 0)]}
        upcoming = steps[self.index] if self.index < len(steps) else None
        ready = set(upcoming.ready) if upcoming is not None else set()
        current = self.current.node if self.current else None
        # Keep the drawing while the current node stays in it: a step then only recolours boxes.
        if self._drawing is None or (current is not None and current not in self._drawing.members):
            self._drawing = self.ahead.take(current) or self._window(current)
        return self._drawing, (current, done, ready - {current})

    def _window(self, center):
        return Drawing(self.layout, self.layout.around(center, WINDOW), trace=self.trace)

    def _window_ahead(self, center):
        """The window around center, drawn and rendered in the next-window thread (one thread in
        matplotlib at a time: RENDERING)."""
        with RENDERING:
            drawing = self._window(center)
            drawing.png(center)
        return drawing

    def figure(self):
        if self.released:
            return None
        drawing, args = self._paint_args()
        return drawing.paint(*args)

    def figure_png(self) -> bytes:
        drawing, args = self._paint_args()
        return drawing.png(*args)

    def figure_title(self) -> str:
        return _("backward graph of {name}").format(name=shortened(self.label))

    def alt_text(self) -> str:
        """The figure now: the current node, what arrived and what it sends on."""
        n, step = len(self.trace.steps), self.current
        if step is None:
            return _("{title}: before backward, nothing has flowed yet; {count} nodes to run").format(
                title=self.figure_title(), count=n)
        return _("{title}, step {index} of {count}: current node {node}; arrived: {arrived}; sent on: {sent}").format(
            title=self.figure_title(), index=self.index, count=n, node=step_title(step), arrived=arriving(step),
            sent=sent_on(step))

    def build_widget(self):
        import ipywidgets as w

        n = len(self.trace.steps)
        # the full width of the output: at a fixed cap the graph's labels shrank below body text
        # at its own size in a box that scrolls sideways: scaled down, the labels would shrink
        self._image = _classed(w.Image(format="png", layout=w.Layout(max_width="none")), "agl-figure")
        self._panel = _classed(w.HTML(), "agl-step-panel")
        buttons = {}
        for key, text, action in (("reset", _("Reset"), self.reset), ("prev", _("Previous"), self.prev),
                                  ("next", _("Next"), self.next), ("end", _("End"), self.end)):
            button = w.Button(description=text, layout=w.Layout(width="90px"))
            button.add_class(f"agl-{key}")
            button.on_click(lambda _b, act=action: act())
            buttons[key] = button
        self.buttons = buttons
        # a number box with its label, not a slider: the slider's handle has no accessible name
        self._slider = _classed(w.BoundedIntText(value=0, min=0, max=n, description=_("step"),
                                                 continuous_update=False, layout=w.Layout(width="160px")),
                                "agl-slider")
        self._slider.observe(lambda change: self.goto(change["new"]), names="value")
        # ipywidgets' Play draws three buttons with icons only and no name: it stays as the front end's
        # timer, hidden, and a labelled button starts and pauses it
        self._play = _classed(w.Play(value=0, min=0, max=n, interval=900, layout=w.Layout(display="none")),
                              "agl-play")
        self._link = w.jslink((self._play, "value"), (self._slider, "value"))  # closed on release
        autoplay = w.Button(description=_("Play"), layout=w.Layout(width="90px"))
        autoplay.add_class("agl-autoplay")
        autoplay.on_click(lambda _b: self._toggle_play())
        self._play.observe(lambda change: self._play_words(), names=playing_trait(self._play))
        self._autoplay = autoplay
        controls = w.HBox([*buttons.values(), autoplay, self._play, self._slider])
        self._log = _classed(w.HTML(), "agl-walk")
        # side by side while both fit; a wide figure takes the row and the panel goes under it
        figure_and_panel = w.HBox([scrolling(self._image), self._panel], layout=w.Layout(flex_flow="row wrap"))
        children = [controls, figure_and_panel, self._log]
        yours = yours_line(self.trace)
        if yours:
            children.insert(0, _classed(w.HTML(value=f"<p>{esc(yours)}</p>"), "agl-yours"))
        if getattr(self.trace, "own", False):  # the learner's own backward (record()): said first
            children.insert(0, _classed(w.HTML(value=f"<p><b>{esc(self.title)}</b></p>"), "agl-own"))
        if self.predicting:
            self._answer = w.Text(description=_("prediction"),
                                  placeholder=_("what does the next node send on? e.g. [0.5, 1.0]"),
                                  layout=w.Layout(width="500px"))
            self._answer.add_class("agl-predict")
            check = w.Button(description=_("Check"))
            check.add_class("agl-predict-check")
            check.on_click(lambda _b: self._check_typed())
            self._verdict = _classed(w.HTML(), "agl-verdict")
            children.append(w.HBox([self._answer, check]))
            children.append(self._verdict)
            self.buttons["check"] = check
        self._widget = box = w.VBox(children)
        self.ahead.enabled = live()
        self._refresh()
        return box

    def _toggle_play(self):
        """The Play button: the hidden Play widget steps in the front end; from the end it starts over."""
        name = playing_trait(self._play)
        playing = getattr(self._play, name)
        if not playing and self.index == len(self.trace.steps):
            self.goto(0)
        setattr(self._play, name, not playing)
        self._play_words()

    def _play_words(self):
        self._autoplay.description = _("Pause") if getattr(self._play, playing_trait(self._play)) else _("Play")

    def _check_typed(self):
        try:  # the box is text, never run: numbers, lists, tensors as printed (practice/typed.py)
            answer = read_typed(self._answer.value.strip(), words=False, cell="stepper.predict({value})")
        except WrongForm as err:  # not numbers: say what to type, reveal nothing
            self._verdict.value = unread_html(err)
            return
        self._verdict.value = verdict_html(self.predict(answer))

    def _refresh(self):
        if self._widget is None or self.released:
            return
        self._panel.value = panel_html(self.trace, self.index) + (
            next_prompt(self.trace, self.index) if self.predicting else "")
        self._image.value = self.figure_png()
        self._log.value = recent_html(self.trace, self.index)
        if self._slider.value != self.index:
            self._slider.value = self.index
        self.buttons["prev"].disabled = self.buttons["reset"].disabled = self.index == 0
        self.buttons["next"].disabled = self.buttons["end"].disabled = self.index == len(self.trace.steps)
        self.ahead.plan(self.trace.steps, self.index, self._drawing, self._window_ahead)

    def panel(self) -> str:
        """The current step's panel as plain text."""
        return self.released_text() if self.released else panel_text(self.trace, self.index)


def step(output, gradient=None, predict: bool = False, apply: bool = False,
         names: Mapping | None = None, label: str | None = None, inputs=None) -> Stepper:
    """Record output.backward(gradient) and return a stepper over it (shown as a widget).

    >>> import torch
    >>> x = torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)
    >>> s = step((x ** 2).mean(), names={"x": x})
    >>> [st.name for st in s.trace.steps]
    ['MeanBackward0', 'PowBackward0', 'AccumulateGrad']
    """
    if names is None:
        names = caller_names()
    label = label or name_in(names, output) or _("the output")
    # --apply: the recording is the learner's backward itself (one engine run, graph freed)
    recorded = record(output, gradient, names=names, label=label, apply=apply, inputs=inputs)
    stepper = Stepper(recorded, predict=predict, apply=apply, label=label)
    if not live():
        return stepper.end() if apply else stepper  # no widget to step through: the whole walk at once
    supersede(stepper)
    return stepper


def _classed(widget, name: str):
    widget.add_class(name)
    return widget
