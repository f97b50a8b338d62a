"""The lessons' exercises with every blank filled in by a correct answer, typed as a learner types it:
every check says correct (the untouched lessons, stored with "not attempted", are tested by nbval).
Lesson 04 runs top to bottom; lessons 01, 02, 03 and 05 run their exercise cells (the ones that end
the lesson) after the imports every lesson has made by then."""
import ast
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
IMPORTS = "%load_ext autograd_lab\nimport torch\nimport autograd_lab"


def _python(source: str) -> ast.Module | None:
    """A code cell as Python (its magic lines left out); None for a cell that is not Python."""
    try:
        return ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                   for line in source.splitlines()))
    except SyntaxError:
        return None


def made(tree: ast.Module) -> dict[str, str]:
    """{variable: exercise name} for every `v = autograd_lab.exercise("name", ...)` of a cell."""
    found = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "exercise" and node.value.args
                and isinstance(node.value.args[0], ast.Constant)):
            found[node.targets[0].id] = node.value.args[0].value
    return found


def checked(tree: ast.Module) -> list[tuple[str, bool]]:
    """(variable, whether its answer is the blank ____) for every `v.check(...)` call of a cell."""
    return [(node.func.value.id, bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "____")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check"
            and isinstance(node.func.value, ast.Name)]


def defined_with_blank(tree: ast.Module) -> str | None:
    """The function a code task asks for: a def in the cell whose body holds the blank ____."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.Name) and n.id == "____"
                                                     for n in ast.walk(node)):
            return node.name
    return None


def filled(lesson: str):
    """The lesson with its blanks filled, the exercises and functions filled, and its check cells."""
    nb = nbformat.read(NOTEBOOKS / f"{lesson}.ipynb", as_version=4)
    answers, names, done = ANSWERS[lesson], {}, []
    keep = [] if lesson.startswith("04") else [nbformat.v4.new_code_cell(IMPORTS)]
    for cell in nb.cells:
        mine = lesson.startswith("04") or str(cell.get("id", "")).startswith(f"l{lesson[:2]}-ex")
        tree = _python(cell.source) if cell.cell_type == "code" else None
        if tree is None or not mine:
            continue
        keep.append(cell)
        names.update(made(tree))
        blanks = [var for var, blank in checked(tree) if blank]
        task = defined_with_blank(tree)
        for var in blanks:
            cell.source = cell.source.replace("____", answers[names[var]], 1)
            done.append(names[var])
        if task and not blanks:
            cell.source = cell.source.replace("____", answers[task], 1)
            done.append(task)
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
    checks = [c for c in nb.cells if c.cell_type == "code" and (tree := _python(c.source)) is not None
              and checked(tree)]
    assert len(checks) == len(ANSWERS[lesson])
    for cell in checks:
        out = text_of(cell)
        assert out.startswith("Correct!"), (cell.source, out)
    if lesson.startswith("04"):
        last = text_of(nb.cells[-1])
        count = len(ANSWERS[lesson])
        assert re.match(rf"Progress: {count} of \d+ passed, {count} attempted", last), last


def test_check_cells_are_found_whatever_their_names():
    """A check cell is found by what it does, not by a naming pattern (q2b, answer_1, ex)."""
    tree = _python('%load_ext autograd_lab\nq2b = autograd_lab.exercise("mean_cube", seed=2)\nq2b.check(____)\n'
                   "ex.check([1, 2])")
    assert made(tree) == {"q2b": "mean_cube"}
    assert checked(tree) == [("q2b", True), ("ex", False)]
    assert defined_with_blank(_python("def fixed_step(h):\n    return ____\n")) == "fixed_step"
