"""The release as a learner gets it (`make test-release`; skipped unless AUTOGRAD_LAB_RELEASE names the
folder the target built into, .release/ in the checkout).

The target clones the repository afresh and builds the sdist and the wheel with `python -m build` (the
wheel from the sdist). Here: both artifacts hold the compiled catalogs, LICENSE and the learners'
lessons of both languages, and no teachers' notebook; the wheel goes into a clean venv outside the
repository (torch from the local disk through constraints.txt); from an empty folder the learner runs
`python -m autograd_lab course` (both languages) and a small notebook of every magic runs through a
kernel of that venv, in English and in Chinese. An editable install of another fresh clone speaks
Chinese too.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
RELEASE = os.environ.get("AUTOGRAD_LAB_RELEASE")
pytestmark = pytest.mark.skipif(not RELEASE, reason="make test-release builds the artifacts this test reads")

NOTEBOOKS = ROOT / "notebooks"
LEARNERS = sorted(p.relative_to(ROOT).as_posix() for p in
                  [*NOTEBOOKS.glob("[0-9]*.ipynb"), *(NOTEBOOKS / "zh").glob("[0-9]*.ipynb")])
CATALOGS = sorted(p.with_suffix(".mo").relative_to(ROOT).as_posix()
                  for p in (ROOT / "autograd_lab" / "locale").glob("*/LC_MESSAGES/*.po"))
KERNEL = "autograd-lab-release"
CJK = re.compile(r"[\u4e00-\u9fff]")


def version() -> str:
    match = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "autograd_lab" / "__init__.py").read_text(), re.M)
    assert match
    return match.group(1)


def artifacts() -> tuple[Path, Path]:
    dist = Path(RELEASE or "") / "dist"
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    assert len(sdists) == len(wheels) == 1, f"expected one sdist and one wheel in {dist}"
    assert sdists[0].name == f"autograd_lab-{version()}.tar.gz"
    assert wheels[0].name == f"autograd_lab-{version()}-py3-none-any.whl"
    return sdists[0], wheels[0]


def test_the_sdist_holds_the_catalogs_the_licence_and_the_learners_lessons_only():
    sdist, _ = artifacts()
    top = f"autograd_lab-{version()}/"
    with tarfile.open(sdist) as tar:
        names = {n[len(top):] for n in tar.getnames() if n.startswith(top)}
    assert set(CATALOGS) <= names, f"compiled catalogs missing from the sdist: {sorted(set(CATALOGS) - names)}"
    assert {"LICENSE", "hatch_build.py", "pyproject.toml", "CITATION.cff", "CHANGELOG.md"} <= names
    assert sorted(n for n in names if n.endswith(".ipynb")) == LEARNERS
    assert "docs/teachers.md" in names and "README.md" in names  # the front door and the pages it links
    assert not [n for n in names if "teachers/" in n or "__pycache__" in n]  # no solutions


def test_the_wheel_holds_the_catalogs_the_licence_the_lessons_and_true_metadata():
    _, wheel = artifacts()
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"autograd_lab-{version()}.dist-info/METADATA").decode()
    assert set(CATALOGS) <= names, f"compiled catalogs missing from the wheel: {sorted(set(CATALOGS) - names)}"
    assert f"autograd_lab-{version()}.dist-info/licenses/LICENSE" in names
    assert sorted(n for n in names if n.endswith(".ipynb")) == ["autograd_lab/" + n for n in LEARNERS]
    assert not [n for n in names if "teachers/" in n or "__pycache__" in n]  # no solutions
    assert f"\nVersion: {version()}\n" in meta and "\nLicense-File: LICENSE\n" in meta
    for classifier in ("Framework :: Jupyter", "Intended Audience :: Education",
                       "License :: OSI Approved :: MIT License"):
        assert f"\nClassifier: {classifier}\n" in meta


# -- a learner's install -----------------------------------------------------------------------------

def run(args: list, cwd: Path, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A clean venv outside the repository with the wheel (and a kernel) installed, and an empty folder."""
    _, wheel = artifacts()
    home = tmp_path_factory.mktemp("learner")
    venv, folder = home / "venv", home / "work"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "AUTOGRAD_LAB_LANG",
                                                            "JUPYTER_PATH", "PYTHONHOME")}
    env.update(OMP_NUM_THREADS="1", MPLCONFIGDIR=str(home / "matplotlib"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               PATH=os.pathsep.join([str(venv / "bin")] + [p for p in env.get("PATH", "").split(os.pathsep)
                                                            if not p.startswith(str(ROOT))]))
    python = venv / "bin" / "python"
    started = time.monotonic()
    run([sys.executable, "-m", "venv", venv], home, env)
    run([python, "-m", "pip", "install", "-q", "-c", ROOT / "constraints.txt", wheel, "ipykernel", "nbclient",
         "nbformat"], home, env)
    run([python, "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL], home, env)
    run([python, "-c", "import matplotlib.font_manager"], home, env)  # the learner's font cache, made once
    print(f"learner's venv installed in {time.monotonic() - started:.0f} s")
    return python, folder, env


def test_the_installed_lab_speaks_chinese_and_is_not_the_checkout(learner):
    python, folder, env = learner
    done = run([python, "-c", "import autograd_lab, sys; print(autograd_lab.language('zh'));"
                "print(autograd_lab.__file__.startswith(sys.prefix))"], folder, env)
    assert done.stdout.split() == ["zh", "True"] and done.stderr == ""


def test_the_course_is_copied_from_the_wheel_in_both_languages(learner):
    python, folder, env = learner
    done = run([python, "-m", "autograd_lab", "course"], folder, env)
    assert f"Copied {len(LEARNERS) // 2} lessons of the course in English" in done.stdout and done.stderr == ""
    run([python, "-m", "autograd_lab", "course", "kurs_zh", "--lang", "zh"], folder, env)
    for name in LEARNERS:
        copied = folder / ("kurs_zh" if name.startswith("notebooks/zh/") else "autograd_lab_course") / Path(name).name
        assert copied.read_bytes() == (ROOT / name).read_bytes(), name
    record = json.loads((folder / "autograd_lab_course" / ".autograd_lab_course.json").read_text())
    assert record["version"] == version() and len(record["files"]) == len(LEARNERS) // 2
    again = run([python, "-m", "autograd_lab", "course"], folder, env)
    assert "already up to date" in again.stdout and "Copied" not in again.stdout


MAGIC_CELLS = [
    "x = torch.tensor([1., 2., 3.], requires_grad=True)\nz = (x ** 2).mean()\n"
    "print(autograd_lab.language(), autograd_lab.__file__.startswith(sys.prefix))",
    "%backward z",
    "%graph z",
    "y = x ** 2\n%jacobian y x --v torch.tensor([1., 0., 2.])",
    "a = torch.arange(4.)\n%storage a",
    "%exercise mean_square",
    "%%explain\nw = (x * 2).sum()\nw.backward()\nw.backward()",
    "%%record\nloss = (x * 3).sum()\nloss.backward()",
    "%%backward_profile --steps 3 --warmup 1 --budget 30\nloss = (x * x).sum()\nloss",
]
RUNNER = """import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=300, kernel_name=sys.argv[2], resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, sys.argv[1])
"""


def output_text(cell) -> str:
    parts = []
    for out in cell.outputs:
        parts.append(out.get("text", ""))
        for kind in ("text/plain", "text/html"):
            parts.append(out.get("data", {}).get(kind, ""))
    return "\n".join(parts)


@pytest.mark.parametrize("code, course", [("en", "autograd_lab_course"), ("zh", "kurs_zh")])
def test_a_notebook_of_every_magic_runs_in_a_kernel_of_the_learners_venv(learner, code, course):
    python, folder, env = learner
    if not (folder / course).is_dir():
        run([python, "-m", "autograd_lab", "course", course, "--lang", code], folder, env)
    first = next(c.source for c in nbformat.read(folder / course / "00_start_here.ipynb", as_version=4).cells
                 if c.cell_type == "code")
    assert first.startswith("import importlib.util\n") and "%load_ext autograd_lab" in first
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(first + "\nimport sys")] + [nbformat.v4.new_code_cell(s) for s in MAGIC_CELLS]
    path = folder / course / f"every_magic_{code}.ipynb"
    nbformat.write(nb, path)
    started = time.monotonic()
    run([python, "-c", RUNNER, path, KERNEL, folder / course], folder, env)
    print(f"every magic in {code}: {time.monotonic() - started:.0f} s")
    cells = nbformat.read(path, as_version=4).cells
    for cell in cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        assert not [o for o in cell.outputs if o.get("name") == "stderr"], (cell.source, output_text(cell))
    assert output_text(cells[1]).split() == [code, "True"], "the kernel did not run the installed lab"
    for cell in cells[2:]:
        assert [o for o in cell.outputs if o.output_type in ("display_data", "execute_result")], cell.source
        text = output_text(cell)
        assert bool(CJK.search(text)) == (code == "zh"), (code, cell.source, text[:500])
        assert "make catalogs" not in text and "not compiled" not in text


def test_an_editable_install_of_a_fresh_clone_speaks_chinese(learner, tmp_path):
    python, folder, env = learner
    clone = tmp_path / "checkout"
    run(["git", "clone", "-q", Path(RELEASE or "") / "clone", clone], tmp_path, env)
    assert not list(clone.glob("autograd_lab/locale/*/LC_MESSAGES/*.mo")), "a fresh clone has no compiled catalog"
    run([python, "-m", "pip", "install", "-q", "--no-deps", "-e", clone], tmp_path, env)
    done = run([python, "-c", "import autograd_lab; print(autograd_lab.language('zh'), autograd_lab.__file__)"],
               folder, env)
    said, where = done.stdout.split()
    assert said == "zh" and Path(where).is_relative_to(clone)
    assert sorted(p.relative_to(clone).as_posix() for p in clone.glob("autograd_lab/locale/*/LC_MESSAGES/*.mo")) \
        == CATALOGS
    course = run([python, "-m", "autograd_lab", "course", tmp_path / "from_checkout"], folder, env)
    assert "Copied" in course.stdout and (tmp_path / "from_checkout" / "00_start_here.ipynb").is_file()
