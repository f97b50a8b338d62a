"""Lesson 04 with every blank filled in by a correct answer runs top to bottom and every check
says correct (the untouched lesson, stored with "not attempted", is tested by nbval)."""
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "04_mean_square_exercises.ipynb"

# exercise name -> the prediction a learner would type (seed 7 for the personal variant, as the lesson has)
ANSWERS = {
    "mean_square": "[0.667, 1.333, 2]",
    "sum_square": "[2, 4, 6]",
    "mean_cube": "[1, 4, 9]",
    "weighted_mean_square": "([0.3333, 1.333, 3], [2, 1.333, 1])",
    "mean_square_random": "[-0.32, -0.92, -0.2, -0.6, 0.28]",
    "nonscalar_backward": "[5, 7, 9]",
    "accumulate": "[1.333, 2.667, 4]",
    "no_requires_grad": '"c"',
    "where_backprop_stops": '{"a", "g"}',
    "gan_detach": '({"D"}, {"G", "D"})',
    "detach_vs_clone": "(True, False)",
    "symbolic_mean_square": '"2*x/3"',
}
BLANK = re.compile(r"(q\d+)\.check\(____\)")
MADE = re.compile(r'(q\d+) = autograd_lab\.exercise\("(\w+)"')


def filled_lesson():
    nb = nbformat.read(LESSON, as_version=4)
    names, filled = {}, []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for var, name in MADE.findall(cell.source):
            names[var] = name
        blank = BLANK.search(cell.source)
        if blank:
            name = names[blank.group(1)]
            cell.source = cell.source.replace("____", ANSWERS[name])
            filled.append(name)
    return nb, filled


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_every_exercise_has_a_blank_to_fill():
    _, filled = filled_lesson()
    assert sorted(filled) == sorted(ANSWERS)


def test_filled_lesson_says_correct_everywhere():
    nb, _ = filled_lesson()
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=120,
                                     resources={"metadata": {"path": str(LESSON.parent)}})
    client.execute()
    checks = [c for c in nb.cells if c.cell_type == "code" and ".check(" in c.source]
    assert len(checks) == len(ANSWERS)
    for cell in checks:
        out = text_of(cell)
        assert out.startswith("Correct!"), (cell.source, out)
    last = text_of(nb.cells[-1])
    assert re.match(rf"Progress: {len(ANSWERS)} of \d+ passed, {len(ANSWERS)} attempted", last), last
