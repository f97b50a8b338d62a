"""The lessons' exercises with every blank filled in by a correct answer, typed as a learner types it:
every check says correct (the untouched lessons, stored with "not attempted", are tested by nbval).
Lesson 04 runs top to bottom; lessons 01, 02, 03 and 05 run their exercise cells (the ones that end
the lesson) after the imports every lesson has made by then."""
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

# lesson -> {exercise name (or the function a code task defines): the answer a learner would type}
ANSWERS = {
    "01_backward_step_by_step": {
        "mean_square": "[0.667, 1.333, 2]",
        "engine_order": '"Add, Mul, Exp, a, Cos, b"',
    },
    "02_where_backprop_stops": {
        "inputs_get_grad": '{"p", "t"}',
        "gan_detach": '({"D"}, {"G", "D"})',
        "straight_through": "x + (torch.round(x) - x).detach()",
    },
    "03_detach_clone_storage": {
        "storage_rows": '"yes error; yes silently wrong; no ok; yes error; yes silently wrong"',
        "detach_vs_clone": "(True, False)",
    },
    "05_why_is_my_backward_slow": {
        "carried_history": '({"total"}, {"a", "d"})',
        "fixed_step": "h.detach()",
    },
    "04_mean_square_exercises": {
        "mean_square_random": "[-0.32, -0.92, -0.2, -0.6, 0.28]",
        "sum_square": "[-0.6, 1.6, 1]",
        "mean_cube": "[0.04, 0.36, 4]",
        "weighted_mean_square": "([0.3333, 1.333, 3], [2, 1.333, 1])",
        "symbolic_mean_square": '"2*x/n"',
        "accumulate": "[1.333, 2.667, 4]",
        "no_requires_grad": '"c"',
        "engine_order": '"AddBackward0, SigmoidBackward0, AccumulateGrad(b), MulBackward0, ExpBackward0, a"',
        "where_backprop_stops": '{"a", "g"}',
        "detach_vs_clone": '"yes, no"',
        "storage_rows": '{"detach()": ("yes", "error"), ".data": ("yes", "silently wrong"), "clone()": ("no", "ok"), '
                        '"view(-1)": ("yes", "refused"), "detach().numpy()": ("yes", "silently wrong")}',
        "carried_history": '({"avg"}, "a, d")',
        "nonscalar_backward": "[5, 7, 9]",
        "vjp_weights": "[0.4, 0, 8]",
        "which_mode_records": "(False, False, True, False)",
        "hook_doubles": "[10, 10, 10]",
        "sigmoid_backward": "grad_output * out * (1 - out)",
    },
}
BLANK = re.compile(r"(q\d+)\.check\(____\)")
MADE = re.compile(r'(q\d+) = autograd_lab\.exercise\("(\w+)"')
DEFINED = re.compile(r"def (\w+)\(")
IMPORTS = "%load_ext autograd_lab\nimport torch\nimport autograd_lab"


def filled(lesson: str):
    """The lesson with its blanks filled, the exercises and functions filled, and its check cells."""
    nb = nbformat.read(NOTEBOOKS / f"{lesson}.ipynb", as_version=4)
    answers, names, done = ANSWERS[lesson], {}, []
    keep = [] if lesson.startswith("04") else [nbformat.v4.new_code_cell(IMPORTS)]
    for cell in nb.cells:
        mine = lesson.startswith("04") or str(cell.get("id", "")).startswith(f"l{lesson[:2]}-ex")
        if cell.cell_type != "code" or not mine:
            continue
        keep.append(cell)
        for var, name in MADE.findall(cell.source):
            names[var] = name
        blank = BLANK.search(cell.source)
        defined = DEFINED.search(cell.source)
        if blank:
            name = names[blank.group(1)]
            cell.source = cell.source.replace("____", answers[name], 1)
            done.append(name)
        elif defined and "____" in cell.source:
            cell.source = cell.source.replace("____", answers[defined.group(1)], 1)
            done.append(defined.group(1))
    nb.cells = keep
    return nb, done


def text_of(cell) -> str:
    return "".join(out.get("text", "") or out.get("data", {}).get("text/plain", "") for out in cell.get("outputs", []))


@pytest.mark.parametrize("lesson", list(ANSWERS))
def test_every_exercise_has_a_blank_to_fill(lesson):
    _, done = filled(lesson)
    assert sorted(done) == sorted(ANSWERS[lesson])


@pytest.mark.parametrize("lesson", list(ANSWERS))
def test_filled_lesson_says_correct_everywhere(lesson):
    nb, _ = filled(lesson)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    checks = [c for c in nb.cells if c.cell_type == "code" and re.search(r"q\d+\.check\(", c.source)]
    assert len(checks) == len(ANSWERS[lesson])
    for cell in checks:
        out = text_of(cell)
        assert out.startswith("Correct!"), (cell.source, out)
    if lesson.startswith("04"):
        last = text_of(nb.cells[-1])
        count = len(ANSWERS[lesson])
        assert re.match(rf"Progress: {count} of \d+ passed, {count} attempted", last), last
