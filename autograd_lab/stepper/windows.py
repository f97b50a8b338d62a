"""The stepper's next window, drawn before the click that needs it, and the texts of the window
shown, rendered between clicks. A big graph is drawn a window at a time around the current node; a
click whose node is outside the window waits for a new drawing (figure, labels, render: 100 to 250
ms on a busy machine), and a click stamps the values of its node, rendered the first time they are
shown. Once the kernel has been idle a moment after a click, a background thread renders the texts
of the window shown that are not rendered yet (Drawing.prepare, a few at a time: a click that needs
one meanwhile waits for at most a few), then draws the next window (around the first later step
outside this one) and renders its texts; the click that reaches it takes it. Only one thread draws
at a time (the view's make renders under the drawing module's lock): a click that leaves the window
stops the thread and waits for a drawing under way. Off unless the view turns it on (in a live
kernel), so tests and static faces draw exactly as before."""
from __future__ import annotations

import threading
from itertools import islice

IDLE = 0.15  # seconds without a click before the next window is drawn: clicks in a row win
AHEAD = 400  # steps looked at to find the next window (a click stays cheap on long walks)


class NextWindow:
    """The drawing of the window a later click will need, made in a background thread.

    >>> n = NextWindow()
    >>> n.take("a node") is None  # nothing planned: the click draws its own window
    True
    """

    def __init__(self):
        self.enabled = False
        self._key = None  # the node the planned window is centred on
        self._drawing = None
        self._timer: threading.Timer | None = None
        self._started = False
        self._halt = threading.Event()

    def plan(self, steps, index: int, drawing, make) -> None:
        """After a click: once idle, render the texts of drawing (the window shown) not rendered yet,
        then make(node), the drawing rendered, for the first step from index whose node is not in
        drawing."""
        if not self.enabled or drawing is None:
            return
        members = drawing.members
        key = next((s.node for s in islice(steps, index, index + AHEAD) if s.node not in members), None)
        if key is None and drawing.prepared:
            return
        if key is not None and key is self._key and (self._started or self._drawing is not None):
            return  # planned, and its thread renders the window shown first
        self._stop()
        if key is not None and key is self._key and self._drawing is not None:  # finished while we waited
            return
        self._key, self._drawing, self._started = key, None, False
        self._halt = threading.Event()
        timer = threading.Timer(IDLE, self._build, (key, make, drawing, self._halt))
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _build(self, key, make, shown, halt: threading.Event) -> None:
        self._started = True
        try:
            shown.prepare(halt.is_set)
            if key is None or halt.is_set():
                return
            drawing = make(key)  # drawn and rendered: the click that takes it only recolours its boxes
            if self._key is key:
                self._drawing = drawing
            drawing.prepare(halt.is_set)
        except Exception:  # never a traceback in the learner's cell from a thread: the click draws it
            return

    def _stop(self) -> None:
        timer, self._timer = self._timer, None
        self._halt.set()  # a thread rendering texts stops after the few under way
        if timer is not None:
            timer.cancel()
            timer.join()  # a drawing under way finishes first: one thread in matplotlib at a time

    @property
    def planned(self):
        """The drawing made in advance, or None."""
        return self._drawing

    @property
    def waiting(self) -> bool:
        """A drawing is planned or under way."""
        return self._timer is not None

    def wait(self) -> None:
        """Let a planned drawing finish (as if the learner paused before the next click)."""
        timer = self._timer
        if timer is not None:
            timer.join()

    def take(self, key):
        """The drawing planned for key (None if another or none was planned)."""
        self._stop()
        drawing = self._drawing if self._key is key else None
        self._key = self._drawing = None
        self._started = False
        return drawing

    def cancel(self) -> None:
        self.take(None)
