"""An exercise as a learner meets it: a wrong answer gets a diagnosis, the right one "correct";
keys typed in the answer box stay in the box (no notebook shortcut fires), and the console stays clean."""
import re

import pytest

from labpage import expect

pytestmark = pytest.mark.browser

WRONG_SUM = "[2., 4., 6.]"      # the gradient of y.sum(), not of y.mean()
RIGHT = "[0.6667, 1.3333, 2.0]"
NOT_CORRECT = re.compile(r"incorrect|not correct", re.I)


def open_exercise(lab):
    lab.open_fixture("exercise_mean_square.ipynb")
    lab.run_all()
    exercise = lab.widget("agl-answer")
    expect(exercise.locator(".agl-statement")).not_to_be_empty()
    return exercise


def answer(exercise, text):
    box = exercise.locator(".agl-answer input")
    box.fill("")
    box.press_sequentially(text)
    exercise.locator(".agl-check").click()


def test_wrong_answer_is_diagnosed_and_right_answer_is_correct(lab):
    exercise = open_exercise(lab)
    feedback = exercise.locator(".agl-feedback")

    answer(exercise, WRONG_SUM)
    expect(feedback).to_contain_text(re.compile(r"\bsum\b", re.I))  # the diagnosis names the mistake
    wrong_text = feedback.inner_text()
    assert NOT_CORRECT.search(wrong_text) or "correct" not in wrong_text.lower(), wrong_text

    answer(exercise, RIGHT)
    expect(feedback).not_to_have_text(wrong_text)
    expect(feedback).to_contain_text(re.compile("correct", re.I))
    expect(feedback).not_to_contain_text(NOT_CORRECT)
    lab.assert_no_console_errors()


def test_keys_in_a_widget_text_box_do_not_trigger_notebook_shortcuts(lab):
    exercise = open_exercise(lab)
    cells_before = lab.cell_types()
    # command mode first, as after clicking an output: there a, b, m, d d, 1, y are shortcuts
    lab.page.keyboard.press("Escape")
    box = exercise.locator(".agl-answer input")
    box.click()
    typed = "abmdd 1y2 mean"
    box.press_sequentially(typed)
    expect(box).to_have_value(typed)
    assert lab.cell_types() == cells_before, "a key typed in the answer box changed the notebook's cells"
    lab.assert_no_console_errors()
