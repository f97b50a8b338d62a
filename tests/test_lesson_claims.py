"""Lesson 05's sentences about timings agree with the timings stored under them.

Timing cells carry the nbval-ignore-output tag, so nbval never compares them: this test reads the
stored outputs (no live timing, no clock) and checks that they support what the text says. When a
re-run stores numbers that contradict a sentence, the sentence or the lesson must change."""
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "05_why_is_my_backward_slow.ipynb"
MANY = 5  # "many times slower": at least this ratio


@pytest.fixture(scope="module")
def cells():
    nb = nbformat.read(LESSON, as_version=4)
    return {cell.get("id"): cell for cell in nb.cells}


def output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def ms(text: str, label: str) -> float:
    found = re.search(rf"{label} (\d+(?:\.\d+)?) ms", text)
    assert found, f"no '{label} ... ms' in {text!r}"
    return float(found.group(1))


def test_timings_were_stored_with_one_thread(cells):
    assert "torch.set_num_threads(1)" in cells["cb78a4d0"].source
    assert output_text(cells["cb78a4d0"]).strip() == "threads: 1"


def test_backward_is_many_times_slower_than_forward(cells):
    assert "many times slower than the forward" in cells["31c60c1c"].source
    text = output_text(cells["121d49be"])
    assert ms(text, "backward") >= MANY * ms(text, "forward"), text


def test_dense_gradient_is_the_size_of_the_data(cells):
    text = output_text(cells["31c60c1cb"])
    assert "data.grad holds 6400000 numbers, as many as data: True" in text
    assert "25.6 MB" in text and "25.6 MB" in cells["314f1fc0"].source


def comparison(cells) -> dict[str, tuple[float, float]]:
    """variant -> (forward ms, backward ms), from the stored compare_inputs table."""
    rows = {}
    for line in output_text(cells["5c21ab1d"]).splitlines():
        found = re.match(r"(as is|clone\(\)\.detach\(\)|clone\(\)|detach\(\))\s+.*?(\d+\.\d+) ms\s+(\d+\.\d+) ms", line)
        if found:
            rows[found.group(1)] = (float(found.group(2)), float(found.group(3)))
    assert set(rows) == {"as is", "clone()", "detach()", "clone().detach()"}, rows
    return rows


def test_detach_is_fast_and_clone_alone_is_not(cells):
    rows = comparison(cells)
    text = cells["314f1fc0"].source
    assert "`.clone()` makes new memory and is still slow" in text
    assert "`.clone().detach()` is fast only because of its `.detach()`" in text
    assert rows["as is"][1] >= MANY * rows["detach()"][1], rows
    assert rows["clone()"][1] >= MANY * rows["detach()"][1], rows
    # fast: far from the slow variants, whatever its small distance to detach() alone
    assert rows["clone()"][1] >= 3 * rows["clone().detach()"][1], rows
    assert rows["as is"][1] >= 3 * rows["clone().detach()"][1], rows


def test_ratio_cell_agrees_with_the_table(cells):
    text = output_text(cells["b2d8ce8f"])
    as_is = float(re.search(r"as is / detach\(\):\s+(\d+(?:\.\d+)?)x", text).group(1))
    assert as_is >= MANY, text


def test_copy_inside_the_step_makes_the_forward_many_times_slower(cells):
    assert "many times slower than the plain `detach()`" in cells["314f1fc0c"].source
    text = output_text(cells["314f1fc0b"])
    detach_line, copy_line = text.splitlines()[:2]
    assert detach_line.startswith("detach()") and copy_line.startswith("clone().detach()"), text
    assert ms(copy_line, "forward") >= MANY * ms(detach_line, "forward"), text


def test_retain_graph_changes_the_gradient(cells):
    text = output_text(cells["4090ee01b"])
    norms = [float(x) for x in re.findall(r"(\d+\.\d{4})", text)]
    assert len(norms) == 2 and norms[0] != norms[1], text


def test_the_graph_grows_every_step_and_the_time_only_after_tens_of_steps(cells):
    said = cells["l05-long1"].source
    assert "grow by 3 every step" in said and "only after tens of steps" in said
    walked = {int(n): int(k) for n, k in
              re.findall(r"step\s+(\d+): backward walks\s+(\d+) nodes", output_text(cells["l05-long2"]))}
    assert set(walked) == {1, 10, 50, 100, 200}, walked
    assert all(walked[n] - walked[1] == 3 * (n - 1) for n in walked), walked
    # nine steps: the profile's last backward is not yet many times its median
    table = output_text(cells["874de0f4"])
    assert ms(table, "last backward") < MANY * ms(table, "backward median"), table
    # two hundred steps: it is
    assert "many times slower than at step 10" in cells["l05-long5"].source
    took = {int(n): float(t) for n, t in
            re.findall(r"step\s+(\d+): backward\s+(\d+\.\d+) ms", output_text(cells["l05-long4"]))}
    assert set(took) == {1, 10, 50, 100, 200}, took
    assert took[200] >= MANY * took[10], took


def test_no_sentence_about_the_machine_the_lesson_was_stored_on(cells):
    text = " ".join(c.source for c in cells.values() if c.cell_type == "markdown").lower()
    assert "was stored on" not in text and "two cores" not in text
