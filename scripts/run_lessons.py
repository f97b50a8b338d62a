"""Re-execute lessons in place, so their stored outputs are what strict nbval compares against.

Widget state is dropped from the saved notebook: it holds model ids and PNG bytes that change on
every run and is rebuilt whenever the learner runs the cell. So are outputs that are nothing but a
widget (the profiler's progress bar): without the widget they would only show its Python repr,
"IntProgress(value=0, ...)", to a reader of the stored lesson. Every view of the lab keeps its text
and HTML faces, picture included.

    .venv/bin/python scripts/run_lessons.py                    # every notebook under notebooks/
    .venv/bin/python scripts/run_lessons.py notebooks/01_*.ipynb notebooks/teachers/solutions.ipynb
"""
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    strip_widget_state(nb)
    nbformat.write(nb, path)
    print(f"ran {path.relative_to(ROOT)}")


WIDGET = "application/vnd.jupyter.widget-view+json"


def strip_widget_state(nb) -> None:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # when it ran: a diff on every run, and nothing to read
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not widget_only(o)]


def widget_only(output) -> bool:
    """A displayed widget with no face of its own beyond its repr (a progress bar, a bare slider)."""
    data = output.get("data", {})
    return WIDGET in data and set(data) <= {WIDGET, "text/plain"}


def lessons(root: Path = ROOT / "notebooks") -> list[Path]:
    """Every notebook under root, teachers' material included, but not Jupyter's autosaved copies."""
    return sorted(p for p in root.glob("**/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


if __name__ == "__main__":
    paths = [Path(p).resolve() for p in sys.argv[1:]] or lessons()
    # one kernel per notebook, as many at once as there are cores (each lesson is run on its own)
    with ProcessPoolExecutor(max_workers=min(len(paths), os.cpu_count() or 1)) as pool:
        list(pool.map(run, paths))
