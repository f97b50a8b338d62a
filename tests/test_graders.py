"""The exercises graded by real graders, as a teacher would: an nbgrader course and an otter-grader
assignment built from lab exercises, with a right and a wrong student copy each, graded by the
graders' own command-line tools with AUTOGRAD_LAB_GRADING=1 in the grading environment.

The graders live in their own venv, `.graders/` (`make test` builds it before the tests), so that
the JupyterLab of `make lab` does not gain their extensions. Without it these tests skip, unless
AUTOGRAD_LAB_REQUIRE_GRADERS=1 (CI sets it), where they fail."""
from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from autograd_lab.practice.checking import NotCorrect

ROOT = Path(__file__).resolve().parents[1]
GRADERS = ROOT / ".graders"
BIN = GRADERS / "bin"

# The autograder cell the teachers' page (docs/teachers.md, docs/zh/teachers.md) shows, word for word
# (the last test below checks it). In grading mode a check that is not correct raises NotCorrect (an
# AssertionError) with its diagnosis; the assert fails the cell outside grading mode too, and keeps it
# silent (otter compares what a test prints with what it printed for the teacher).
CHECK_CELL = '''import autograd_lab
ex = autograd_lab.exercise("{name}")
assert ex.check(answer_{name})'''

# (exercise, points, the right student's typed answer, the wrong student's typed answer)
QUESTIONS = [
    ("mean_square", 2, "[0.667, 1.333, 2]", "[1/3, 1/3, 1/3]"),  # wrong: dz/dy, one node short
    ("sum_square", 1, "[2, 4, 6]", "[2, 4, 6]"),
]
STUDENTS = {"right": 2, "wrong": 3}  # which column of QUESTIONS each student typed
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


@pytest.fixture(scope="module")
def graders():
    """The graders' venv, or a skip (a failure when AUTOGRAD_LAB_REQUIRE_GRADERS=1) saying how to make it."""
    missing = [tool for tool in ("python", "nbgrader", "otter") if not (BIN / tool).exists()]
    if missing or not (GRADERS / ".installed").exists():
        why = (f"the graders' venv {GRADERS} is missing or incomplete (no {', '.join(missing) or '.installed'}): "
               "`make test` builds it, or `make .graders/.installed` alone")
        if os.environ.get("AUTOGRAD_LAB_REQUIRE_GRADERS") == "1":
            pytest.fail(why + " (AUTOGRAD_LAB_REQUIRE_GRADERS=1)")
        pytest.skip(why)
    return BIN


@pytest.fixture
def grading_env(tmp_path):
    """The environment a teacher grades in: the graders' venv first on PATH, grading mode on, and no
    Jupyter or IPython configuration of this machine's user."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["AUTOGRAD_LAB_GRADING"] = "1"
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter-config"), ("JUPYTER_DATA_DIR", "jupyter-data"),
                     ("IPYTHONDIR", "ipython")):
        env[var] = str(tmp_path / sub)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


def run(args: list[str], cwd: Path, env: dict) -> str:
    """Run one grader command; its output, or a failure that shows it."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=540)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{output[-6000:]}"
    return output


def diagnosis() -> str:
    """What the lab says to the wrong student's typed answer (asked outside grading mode)."""
    from autograd_lab.practice import bank

    result = bank.exercise("mean_square").check([1 / 3, 1 / 3, 1 / 3])
    assert result.status == "incorrect"
    # a first wrong answer gets a question pointing at the step to re-think, not the answer
    assert "chain rule" in result.message and "?" in result.message, result.message
    return result.message


def flat(text: str) -> str:
    """Text with tags, entities and ANSI colours removed and whitespace made single spaces."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", html.unescape(re.sub(r"<[^>]+>", "", text)))
    return " ".join(text.split())


# --- nbgrader ----------------------------------------------------------------------------------

def nbgrader_source() -> nbformat.NotebookNode:
    """The teacher's source notebook: per exercise, a solution cell and a locked autograder cell."""
    cells = [new_markdown_cell("# Problem set 1\nWork out each gradient by hand and type it.")]
    for name, points, right, _ in QUESTIONS:
        cells.append(new_markdown_cell(f'Exercise `{name}`: `autograd_lab.exercise("{name}")` states it.'))
        cells.append(new_code_cell(f"### BEGIN SOLUTION\nanswer_{name} = {right}\n### END SOLUTION", metadata={
            "nbgrader": {"grade": False, "grade_id": f"answer_{name}", "locked": False, "schema_version": 3,
                         "solution": True, "task": False}}))
        cells.append(new_code_cell(CHECK_CELL.format(name=name), metadata={
            "nbgrader": {"grade": True, "grade_id": f"check_{name}", "locked": True, "points": points,
                         "schema_version": 3, "solution": False, "task": False}}))
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def fill_in(released: Path, column: int) -> nbformat.NotebookNode:
    """A student's copy of the released notebook with their typed answers in the solution cells."""
    nb = nbformat.read(released, as_version=4)
    typed = {f"answer_{q[0]}": q[column] for q in QUESTIONS}
    filled = 0
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.metadata.get("nbgrader", {}).get("solution"):
            assert "BEGIN SOLUTION" not in cell.source, "the released copy still holds the solution"
            cell.source = f"{grade_id} = {typed[grade_id]}"
            filled += 1
    assert filled == len(QUESTIONS)
    return nb


SCORES = """
import json, sys
from nbgrader.api import Gradebook
out = {}
with Gradebook("sqlite:///gradebook.db") as gb:
    for student in sys.argv[1:]:
        submission = gb.find_submission("ps1", student)
        notebook = gb.find_submission_notebook("ps1", "ps1", student)
        out[student] = {"score": submission.score, "max_score": submission.max_score,
                        "cells": {grade.name: grade.score for grade in notebook.grades}}
print(json.dumps(out))
"""


def test_nbgrader_autograde_gives_full_marks_and_partial_with_the_diagnosis(graders, grading_env, tmp_path,
                                                                           fresh_progress):
    course = tmp_path / "course"
    (course / "source" / "ps1").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "autograd_lab"\n'
        "c.Execute.timeout = 300  # importing torch on a busy machine\n")
    nbformat.write(nbgrader_source(), course / "source" / "ps1" / "ps1.ipynb")

    run([str(graders / "nbgrader"), "generate_assignment", "ps1"], course, grading_env)
    released = course / "release" / "ps1" / "ps1.ipynb"
    for student, column in STUDENTS.items():
        (course / "submitted" / student / "ps1").mkdir(parents=True)
        nbformat.write(fill_in(released, column), course / "submitted" / student / "ps1" / "ps1.ipynb")
    run([str(graders / "nbgrader"), "autograde", "ps1"], course, grading_env)
    run([str(graders / "nbgrader"), "generate_feedback", "ps1"], course, grading_env)

    scores = json.loads(run([str(graders / "python"), "-c", SCORES, *STUDENTS], course, grading_env))
    assert scores["right"] == {"score": 3.0, "max_score": 3.0,
                               "cells": {"check_mean_square": 2.0, "check_sum_square": 1.0}}
    assert scores["wrong"] == {"score": 1.0, "max_score": 3.0,
                               "cells": {"check_mean_square": 0.0, "check_sum_square": 1.0}}

    wrong = flat((course / "feedback" / "wrong" / "ps1" / "ps1.html").read_text())
    assert issubclass(NotCorrect, AssertionError) and NotCorrect.__name__ in wrong
    assert flat(diagnosis()) in wrong
    right = flat((course / "feedback" / "right" / "ps1" / "ps1.html").read_text())
    assert NotCorrect.__name__ not in right and "Incorrect" not in right


# --- otter-grader -------------------------------------------------------------------------------

ASSIGNMENT_CONFIG = """# ASSIGNMENT CONFIG
name: ps1
export_cell: false
check_all_cell: false"""


def otter_master() -> nbformat.NotebookNode:
    """The teacher's master notebook in otter assign's format: per question a solution and a test."""
    cells = [new_raw_cell(ASSIGNMENT_CONFIG),
             new_markdown_cell("# Problem set 1\nWork out each gradient by hand and type it.")]
    for name, points, right, _ in QUESTIONS:
        cells += [
            new_raw_cell(f"# BEGIN QUESTION\nname: {name}\npoints: {points}"),
            new_markdown_cell(f'Exercise `{name}`: `autograd_lab.exercise("{name}")` states it.'),
            new_raw_cell("# BEGIN SOLUTION"),
            new_code_cell(f"answer_{name} = {right}  # SOLUTION"),
            new_raw_cell("# END SOLUTION"),
            new_raw_cell("# BEGIN TESTS"),
            new_code_cell(CHECK_CELL.format(name=name)),
            new_raw_cell("# END TESTS"),
            new_raw_cell("# END QUESTION"),
        ]
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def otter_student_copy(student_nb: Path, column: int) -> nbformat.NotebookNode:
    """A student's copy of otter's student notebook with their typed answers."""
    nb = nbformat.read(student_nb, as_version=4)
    filled = 0
    for cell in nb.cells:
        for q in QUESTIONS:
            if cell.cell_type == "code" and cell.source.startswith(f"answer_{q[0]} ="):
                assert q[2] not in cell.source, "the student's copy still holds the solution"
                cell.source = f"answer_{q[0]} = {q[column]}"
                filled += 1
    assert filled == len(QUESTIONS)
    return nb


def test_otter_run_gives_full_marks_and_partial_with_the_diagnosis(graders, grading_env, tmp_path, fresh_progress):
    work = tmp_path / "otter"
    work.mkdir()
    nbformat.write(otter_master(), work / "ps1.ipynb")
    # otter assign also grades the solutions with the autograder it made, and fails if they lose points
    run([str(graders / "otter"), "assign", "ps1.ipynb", "dist"], work, grading_env)
    (autograder,) = (work / "dist" / "autograder").glob("*.zip")

    results = {}
    for student, column in STUDENTS.items():
        (work / student).mkdir()
        nbformat.write(otter_student_copy(work / "dist" / "student" / "ps1.ipynb", column),
                       work / student / "ps1.ipynb")
        output = run([str(graders / "otter"), "run", "-a", str(autograder), "-o", str(work / student),
                      str(work / student / "ps1.ipynb")], work, grading_env)
        results[student] = (json.loads((work / student / "results.json").read_text()), output)

    def scores(student):  # results.json is Gradescope's format: one entry per question, plus "Public Tests"
        return {test["name"]: (test["score"], test["max_score"]) for test in results[student][0]["tests"]
                if "score" in test}

    assert scores("right") == {"mean_square": (2.0, 2.0), "sum_square": (1.0, 1.0)}
    assert scores("wrong") == {"mean_square": (0.0, 2.0), "sum_square": (1.0, 1.0)}
    public = {student: [t for t in results[student][0]["tests"] if t["name"] == "Public Tests"]
              for student in STUDENTS}
    assert public["right"][0]["status"] == "passed" and public["wrong"][0]["status"] == "failed"

    (failed,) = [test for test in results["wrong"][0]["tests"] if test["name"] == "mean_square"]
    assert NotCorrect.__name__ in failed["output"]
    assert flat(diagnosis()) in flat(failed["output"])
    assert flat(diagnosis()) in flat(public["wrong"][0]["output"])  # what the student is shown
    assert NotCorrect.__name__ not in json.dumps(results["right"][0])


def test_the_graders_stay_out_of_the_labs_venv():
    """nbgrader and otter bring JupyterLab extensions of their own: they belong in .graders/ only."""
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not running in the lab's venv {ROOT / '.venv'}")
    assert importlib.util.find_spec("nbgrader") is None
    assert importlib.util.find_spec("otter") is None


@pytest.mark.parametrize("page", ["docs/teachers.md", "docs/zh/teachers.md"])
def test_the_teachers_page_shows_the_cell_these_tests_grade_with(page):
    """The cell a teacher copies from the page is the one graded above, word for word, as a code block."""
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"```python\n{CHECK_CELL.format(name=QUESTIONS[0][0])}\n```" in text, (
        f"{page} does not show the autograder cell of tests/test_graders.py (CHECK_CELL)")
    name, _points, right, _wrong = QUESTIONS[0]
    assert f"`answer_{name} = {right}`" in text, f"{page} does not show the right student's answer cell"
