"""The lessons' sentences agree with what the lab does and with the outputs stored under them.

Lesson 05's sentences about timings: timing cells carry the nbval-ignore-output tag, so nbval never
compares them; these tests read the stored outputs (no live timing, no clock) and check that they
support what the text says. When a re-run stores numbers that contradict a sentence, the sentence or
the lesson must change.

The exercises' sentences, in both languages: the learner is told to type a prediction, never to pass
autograd's own tensor; the verdicts named are the checker's own, "close" included, and the ones lesson
01 quotes are what its cell prints, checked again here on a fresh exercise; the header that explains
the exercises is said once. Lesson 00 is a light tour, and lesson 10's walk through the penalty shows
only what its text discusses, with the step numbers the text gives."""
import re
from pathlib import Path

import pytest
import torch

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSON = NOTEBOOKS / "05_why_is_my_backward_slow.ipynb"
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



# ---- the exercises' sentences -------------------------------------------------------------------

ENGLISH = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
COURSES = {"en": ENGLISH, "zh": [NOTEBOOKS / "zh" / p.name for p in ENGLISH]}
LEARNERS = [p for paths in COURSES.values() for p in paths]
#: the verdict words as the lessons write them (in italics), per language
VERDICTS = {"en": {"correct": "*correct*", "close": "*close*", "incorrect": "*incorrect*",
                   "not attempted": "*not attempted*"},
            "zh": {"correct": "*正确*", "close": "*很接近*", "incorrect": "*不正确*", "not attempted": "*未作答*"}}
AUTOGRADS_TENSOR = re.compile(r"\.check\(\s*\w+(?:\[[^\]]*\])?\.grad\s*\)")
HEADER = {"en": "## Exercises: predict, then check", "zh": "## 练习：先预测，再检查"}
LESSON_01 = {"en": "lesson 01", "zh": "第 01 课"}


def lesson_cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def markdown(path: Path) -> list[str]:
    return [c.source for c in lesson_cells(path) if c.cell_type == "markdown"]


def course_of(path: Path) -> str:
    return "zh" if "zh" in path.relative_to(NOTEBOOKS).parts else "en"


@pytest.mark.parametrize("path", LEARNERS, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_no_lesson_tells_the_learner_to_check_autograds_own_tensor(path):
    """ex.check(x.grad) is named only to say it is refused, and no code cell but the one that shows
    the refusal passes a .grad to a check; the answer box is never said to read the notebook's names."""
    refused = VERDICTS[course_of(path)]["not attempted"]
    for text in markdown(path):
        if AUTOGRADS_TENSOR.search(text):
            assert refused in text, text
        assert "understands the names" not in text and "认得你在 notebook 中定义的名字" not in text, text
    for cell in lesson_cells(path):
        if cell.cell_type == "code" and AUTOGRADS_TENSOR.search(cell.source):
            assert cell.get("id") == "l01-verdicts2", cell.source


@pytest.mark.parametrize("path", LEARNERS, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_a_list_of_verdicts_has_all_four_of_the_checker(path):
    """A sentence that lists the verdicts lists the checker's four: "close" is one of them."""
    from autograd_lab.practice.checking import STATUS_LABELS

    words = VERDICTS[course_of(path)]
    assert set(words) == set(STATUS_LABELS)
    for text in markdown(path):
        if words["not attempted"] in text and words["incorrect"] in text:
            assert all(w in text for w in words.values()), text


def test_the_verdict_words_are_the_checkers_own(zh):
    from autograd_lab.practice.checking import STATUS_LABELS, status_label

    assert {s: f"*{status_label(s)}*" for s in STATUS_LABELS} == VERDICTS["zh"]
    zh.language("en")
    assert {s: f"*{status_label(s)}*" for s in STATUS_LABELS} == VERDICTS["en"]


def demo(course: str):
    path = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}[course] / "01_backward_step_by_step.ipynb"
    cells = {c.get("id"): c for c in lesson_cells(path)}
    return cells["l01-ex1"].source, cells["l01-verdicts2"]


@pytest.mark.parametrize("course", ["en", "zh"])
def test_lesson_01_shows_the_verdicts_the_checker_gives(course, fresh_progress, catalogs):
    """The three answers of the demo cell, checked again on a fresh exercise, give the stored lines:
    autograd's own tensor (torch computes it) is not attempted, two digits and a cut digit are close."""
    from autograd_lab import i18n
    from autograd_lab.practice.bank import exercise
    from autograd_lab.practice.digits import CUT, FEW_DIGITS

    _, cell = demo(course)
    stored = output_text(cell).splitlines()
    i18n.language(course)
    try:
        ex = exercise("mean_square")
        x_demo = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)
        (x_demo**2).mean().backward()
        results = [ex.check(x_demo.grad), ex.check([0.67, 1.33, 2]), ex.check([0.666, 1.333, 2])]
    finally:
        i18n.language("en")
    assert [r.status for r in results] == ["not attempted", "close", "close"]
    assert [r.diagnosis for r in results[1:]] == [FEW_DIGITS, CUT]
    assert stored == [r.message for r in results], stored
    assert "[0.67, 1.33, 2]" in cell.source and "[0.666, 1.333, 2]" in cell.source


@pytest.mark.parametrize("course,quoted", [("en", ["round, do not cut", "three significant digits"]),
                                           ("zh", ["请四舍五入，不要截断", "三位有效数字"])])
def test_lesson_01_quotes_only_what_its_cell_prints(course, quoted):
    header, cell = demo(course)
    header, printed = " ".join(header.split()), output_text(cell)
    for words in quoted:
        assert words in header and words in printed, words
    assert VERDICTS[course]["close"] in header and VERDICTS[course]["not attempted"] in header


@pytest.mark.parametrize("course", ["en", "zh"])
def test_the_exercise_header_is_said_once(course):
    """Lesson 01 explains how exercises work; the other lessons' exercise sections point back to it
    in one short paragraph, and no long paragraph is repeated from one lesson to another."""
    first = {}
    for path in COURSES[course]:
        for text in markdown(path):
            if text.startswith(HEADER[course]):
                whole = text[len(HEADER[course]):].strip()
                body = whole.split("\n\n")[0]
                if path.name.startswith("01_"):
                    assert len(whole) > 500, whole
                else:
                    assert len(body) < 200 and LESSON_01[course] in body, (path.name, body)
            for para in text.split("\n\n"):
                if len(para) >= 300:
                    assert para not in first, (path.name, first.get(para), para[:80])
                    first[para] = path.name
    header, _cell = demo(course)
    assert header.startswith(HEADER[course])


# ---- lesson 00, a light tour; lesson 10, the penalty's walk -------------------------------------

TOUR_LINES = 14  # lines of any one stored output of lesson 00
TOUR_WIDTH = 130  # characters of a line of a table there (prose lines are the notebook's to wrap)


@pytest.mark.parametrize("course", ["en", "zh"])
def test_lesson_00_is_a_light_tour(course):
    path = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}[course] / "00_start_here.ipynb"
    cells = lesson_cells(path)
    for cell in cells:
        if cell.cell_type != "code":
            continue
        text = output_text(cell)
        assert len(text.splitlines()) <= TOUR_LINES, (cell.source, text)
        for line in text.splitlines():
            if "  " in line.strip():  # a table's columns
                assert len(line) <= TOUR_WIDTH, line
    sources = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "%storage x" not in sources and "%%backward_profile" not in sources  # their tables are lessons 03 and 05's
    said = "\n".join(markdown(path))
    for lesson in ("03", "05"):
        assert f"{LESSON_01[course].replace('01', lesson)}" in said


@pytest.mark.parametrize("course", ["en", "zh"])
def test_the_penalty_walk_shows_what_the_text_says(course):
    path = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}[course] / "10_memory_and_second_order.ipynb"
    cells = {c.get("id"): c for c in lesson_cells(path)}
    text = output_text(cells["6bf624db"])
    assert "--inputs D[0].weight" in cells["83822fab"].source and "inputs=D[0].weight" in cells["6bf624db"].source
    steps = {int(n): name for n, name in re.findall(r"^\s*(\d+)  (\w+)$", text, re.M)}
    assert sorted(steps) == list(range(1, 13)) and max(map(len, text.splitlines())) <= 60, text
    said = cells["d05c05be"].source
    assert re.search(r"1 (to|到) 5", said) and re.search(r"6 (to|到) 8", said) and re.search(r"9 (to|到) 12", said)
    assert [steps[i] for i in range(1, 6)] == ["MulBackward0", "MeanBackward0", "PowBackward0", "SubBackward0",
                                               "LinalgVectorNormBackward0"]
    assert steps[6] == "MmBackward0" and steps[8] == "TanhBackwardBackward0"
    assert [steps[i] for i in (9, 10, 12)] == ["TanhBackward0", "AddmmBackward0", "AccumulateGrad"]
    # the walk's gradient for the weight is the one torch.autograd.grad gives in the next code cell
    walked = re.search(r"(\d+\.\d{4})\s*$", text.strip()).group(1)
    oracle = re.search(r"0\.weight: \S* ?(\d+\.\d{4})", output_text(cells["e127ff5b"]).replace("范数", "norm"))
    assert oracle and oracle.group(1) == walked, (walked, output_text(cells["e127ff5b"]))
