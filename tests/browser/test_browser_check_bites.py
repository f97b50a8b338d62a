"""The stepper check is known to bite: it passes on a stand-in stepper whose Next works and fails on
one whose Next button does nothing (both tiny notebooks in fixtures/)."""
import pytest

from labpage import click_next_and_expect

pytestmark = pytest.mark.browser

STEPS = ["Step 1 of 3: MeanBackward0", "Step 2 of 3: PowBackward0", "Step 3 of 3: AccumulateGrad (x)"]
FINAL = ["[0.6667, 1.3333, 2.0000]"]


def test_check_passes_on_a_working_next_button(lab):
    lab.open_fixture("fake_stepper_ok.ipynb")
    lab.run_all()
    click_next_and_expect(lab.widget("agl-next"), STEPS, *FINAL)
    lab.assert_no_console_errors()


def test_check_fails_on_a_next_button_that_does_nothing(lab):
    lab.open_fixture("fake_stepper_broken.ipynb")
    lab.run_all()
    widget = lab.widget("agl-next")
    with pytest.raises(AssertionError, match="Step 1 of"):
        click_next_and_expect(widget, STEPS, *FINAL, timeout=3_000)
    # the page itself is fine: only the button is broken
    lab.assert_no_console_errors()
