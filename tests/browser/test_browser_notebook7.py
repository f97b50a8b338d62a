"""Beyond JupyterLab: lesson 01 opened in Jupyter Notebook 7 (the notebook package, the same widgets
in another shell), run from the page, its first stepper stepped to the end with Next."""
import pytest

from labpage import click_next_and_expect, expect
from test_browser_stepper import LESSON, SEED_GRAD, SEED_STEPS, assert_figure_drawn

pytestmark = pytest.mark.browser

# Notebook 7.6.5 itself raises this while loading its settings, on any notebook page, also with no
# lab code and no settings of ours (checked on a bare `jupyter notebook`): not the lab's error.
# Under load it also races its own file browser ("Command 'filebrowser:open-path' not registered").
# The lab ships no JavaScript, so neither can be ours.
NOTEBOOK7_OWN = ("Cannot read properties of undefined (reading 'schema')",
                 "Command 'filebrowser:open-path' not registered")


def test_lesson_01_steps_through_in_notebook_7(notebook7, lesson_path):
    notebook7.open(lesson_path(LESSON))
    assert "/notebooks/" in notebook7.page.url  # Notebook 7's page, not JupyterLab's /lab
    notebook7.run_all()
    stepper = notebook7.widget("agl-next")
    expect(stepper.locator(".agl-step-panel")).not_to_contain_text("Step 1 of")
    assert_figure_drawn(stepper)
    click_next_and_expect(stepper, SEED_STEPS, SEED_GRAD)
    assert_figure_drawn(stepper)
    notebook7.console_errors[:] = [e for e in notebook7.console_errors
                                   if not any(own in e for own in NOTEBOOK7_OWN)]
    notebook7.assert_no_console_errors()
