"""The stepper as a learner uses it: lesson 01 run from the page, Next clicked, the panel read back;
and the --predict mode with a typed prediction and its verdict."""
import pytest

from labpage import click_next_and_expect, expect

pytestmark = pytest.mark.browser

LESSON = "01_backward_step_by_step.ipynb"
SEED_STEPS = ["Step 1 of 3: MeanBackward0", "Step 2 of 3: PowBackward0", "Step 3 of 3: AccumulateGrad (x)"]
SEED_GRAD = "[0.6667, 1.3333, 2.0000]"  # x.grad of z = (x**2).mean() at x = [1, 2, 3]


def assert_figure_drawn(widget):
    """The stepper's graph picture is a real, decoded image, not a blank box."""
    figure = widget.locator(".agl-figure").first
    expect(figure).to_be_visible()
    figure.page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())


def test_lesson_01_first_stepper_shows_the_third_step_after_three_nexts(lab, lesson_path):
    lab.open(lesson_path(LESSON))
    lab.run_all()
    stepper = lab.widget("agl-next")  # the lesson's first stepper: the seed example
    expect(stepper.locator(".agl-step-panel")).not_to_contain_text("Step 1 of")
    assert_figure_drawn(stepper)
    click_next_and_expect(stepper, SEED_STEPS, SEED_GRAD)
    assert_figure_drawn(stepper)
    lab.assert_no_console_errors()


def test_predict_mode_gives_a_verdict_on_a_typed_prediction(lab):
    lab.open_fixture("stepper_predict.ipynb")
    lab.run_all()
    stepper = lab.widget("agl-predict")
    box = stepper.locator(".agl-predict input")
    check = stepper.locator(".agl-predict-check")
    verdict = stepper.locator(".agl-verdict")
    panel = stepper.locator(".agl-step-panel")

    # MeanBackward0 sends 1/3 to each of the three elements of y
    box.click()
    box.press_sequentially("[0.3333, 0.3333, 0.3333]")
    expect(box).to_have_value("[0.3333, 0.3333, 0.3333]")  # every key in before the check
    check.click()
    expect(verdict).to_contain_text("right")
    expect(verdict).not_to_contain_text("wrong")
    expect(panel).to_contain_text("Step 1 of 3: MeanBackward0")

    # PowBackward0 sends 2 * x / 3 = [0.6667, 1.3333, 2.0]; ones are off by 1.0 at most
    box.fill("")
    box.press_sequentially("[1, 1, 1]")
    expect(box).to_have_value("[1, 1, 1]")
    check.click()
    expect(verdict).to_contain_text("wrong")
    expect(verdict).to_contain_text("off by up to 1.")
    expect(panel).to_contain_text("Step 2 of 3: PowBackward0")
    lab.assert_no_console_errors()


def test_big_gradients_show_their_summaries_after_the_learners_own_backward(lab):
    """On gradients of 64 x 100 values the recording leaves the summaries for the first look (a
    second run of the backward); the learner's loss.backward() in the next cell frees the graph, and
    the summaries were read just before it: the panel shows the engine's norms, not "not kept"."""
    lab.open_fixture("stepper_big.ipynb")
    lab.run_all()
    stepper = lab.widget("agl-next")
    panel = stepper.locator(".agl-step-panel")
    # MeanBackward0 sends 1/6400 to each of the 64 x 100 values: norm sqrt(6400) / 6400 = 0.0125
    click_next_and_expect(stepper, ["Step 1 of 7: MeanBackward0", "Step 2 of 7: PowBackward0"],
                          "64x100 float32, norm 0.0125")
    click_next_and_expect(stepper, ["Step 3 of 7: TanhBackward0"], "norm 0.0070")
    expect(panel).not_to_contain_text("not kept")
    assert lab.output_errors() == []
    lab.assert_no_console_errors()


def test_what_ran_of_yours_and_your_own_recorded_backward_are_shown_and_step(lab, tmp_path):
    """A stepper over a graph with a hook of the learner's says so above its controls; %%record
    shows the learner's own backward, run for real, as a stepper that steps."""
    lab.open_fixture("record_and_yours.ipynb")
    lab.run_all()
    beside = lab.widget("agl-next", 0)
    expect(beside.locator(".agl-yours")).to_contain_text("your code ran in this recording")
    expect(beside.locator(".agl-yours")).to_contain_text("1 run of a tensor hook (scale)")
    expect(beside.locator(".agl-own")).to_have_count(0)
    lab.page.screenshot(path=str(tmp_path / "yours.png"))  # to look at
    own = lab.widget("agl-next", 1)
    expect(own.page.get_by_text("1 backward or grad call of yours ran, for real")).to_be_visible()
    expect(own.locator(".agl-own")).to_contain_text("your own backward of loss, run for real")
    click_next_and_expect(own, ["Step 1 of 3: SumBackward0 (loss)"])
    expect(lab.page.get_by_text("tensor([2., 4.])")).to_be_visible()  # their .grad, written for real
    lab.page.screenshot(path=str(tmp_path / "record_and_yours.png"), full_page=True)  # to look at
    lab.assert_no_console_errors()
