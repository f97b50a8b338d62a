"""The Chinese course as a learner uses it: lesson 01 of notebooks/zh/ run from the page, Next
clicked, the panel read back in Chinese, the graph picture drawn; and the storage table of lesson
03 in Chinese. No English sentence of the lab's is on the page's widgets."""
import sys
from pathlib import Path

import pytest

from labpage import click_next_and_expect, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import english_words

pytestmark = pytest.mark.browser

SEED_STEPS = ["第 1 步（共 3 步）：MeanBackward0", "第 2 步（共 3 步）：PowBackward0",
              "第 3 步（共 3 步）：AccumulateGrad (x)"]
SEED_GRAD = "[0.6667, 1.3333, 2.0000]"


def test_chinese_lesson_01_steps_through_in_chinese(lab, lesson_path):
    lab.open(lesson_path("zh/01_backward_step_by_step.ipynb"))
    lab.run_all()
    stepper = lab.widget("agl-next")
    expect(stepper.locator(".agl-next")).to_have_text("下一步")
    click_next_and_expect(stepper, SEED_STEPS, SEED_GRAD)
    figure = stepper.locator(".agl-figure").first
    expect(figure).to_be_visible()
    figure.page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())
    assert english_words(stepper.inner_text()) == []
    lab.assert_no_console_errors()


def test_chinese_storage_table_in_lesson_03(lab, lesson_path):
    lab.open(lesson_path("zh/03_detach_clone_storage.ipynb"))
    lab.run_all()
    table = lab.widget("agl-storage-table")
    expect(table).to_contain_text("共享")
    allowed = ("silently wrong",)  # an outcome a learner types as an answer, kept as it is
    assert english_words(table.inner_text(), allowed=allowed) == []
    lab.assert_no_console_errors()
