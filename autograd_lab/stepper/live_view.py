"""The steppers alive in a kernel. A stepper is noted when it is made (display.shown), so that
re-running a %backward cell twenty times keeps one recording in memory, not twenty: once the cell
has run again, the stepper it made before is released (display.View.release); where the front end
sends no cell id, a newer stepper of the same expression releases the older. A released stepper
keeps its step count and one sentence saying why; its buttons, slider and picture are closed, so the
kernel lets go of them too."""
from __future__ import annotations

from ..i18n import N_

#: What a released stepper says, by why it was released (the reasons of display.RELEASED).
RELEASED = N_("this stepper was released to free memory: the same cell made a newer one. Re-run the cell to "
              "step through it again.")
WORDS = {
    "cell": RELEASED,
    "subject": N_("this stepper of {subject} was released to free memory: a newer stepper of {subject} was made, "
                  "by this cell or another (this front end does not say which cell runs). Re-run the cell to "
                  "step through it again."),
    "code": N_("this stepper was released to free memory: a cell with the same code ran again (this front end "
               "does not say which cell runs). Re-run the cell to step through it again."),
    "asked": N_("this stepper was released to free memory. Re-run the cell to step through it again."),
}
# The live stepper of each slot (display.shown fills it): kept apart from the other views' slots.
_current: dict = {}


def supersede(stepper) -> None:
    """Note a stepper just made in a live kernel: it takes its slot, and the one it replaces is
    released (when the cell has run, or at once outside a kernel's message)."""
    from ..display import shown

    shown(stepper)


class Released:
    """What a released stepper keeps of its trace: how many steps it had."""

    def __init__(self, count: int):
        self.steps = [None] * count
        self.names: dict = {}
        self.applied = False
