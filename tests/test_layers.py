"""The layering of the package, checked on the source: imports only flow downward.

model (torch, stdlib, numpy, networkx, sympy) < rendering (+ matplotlib) < front ends (+ ipywidgets,
IPython) < package face (__init__). A module's layer is read from its file name (faces, draw,
picture, text, fonts: rendering; view, display, magics: front end), which import-linter cannot express;
its contracts in pyproject.toml (no cycles, layers inside each room) run in `make lint`, and the
last test here checks that they bite."""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograd_lab"
FRONT = {"display.py", "magics.py", "magic_spec.py"}  # and every *view.py
RENDERING = {"draw.py", "picture.py", "text.py", "faces.py", "fonts.py"}
LEVEL = {"model": 0, "rendering": 1, "front": 2, "face": 3}
THIRD_PARTY = {
    "torch": "model", "wcwidth": "model", "numpy": "model", "networkx": "model", "sympy": "model",
    "matplotlib": "rendering", "PIL": "rendering", "ipywidgets": "front", "IPython": "front",
}


def layer_of(path: Path) -> str:
    if path == PACKAGE / "__init__.py":
        return "face"
    if path.name in FRONT or path.name.endswith("view.py"):
        return "front"
    if path.name in RENDERING or path.stem.startswith("draw_") or path.name.endswith("_faces.py"):
        return "rendering"
    return "model"


def module_path(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] != "autograd_lab":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py")
    if (base / "__init__.py").exists():
        return base / "__init__.py"
    return None


def imports(path: Path):
    package = ".".join(("autograd_lab",) + path.relative_to(PACKAGE).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0]
    package_parts = package.split(".")
    if path.name != "__init__.py":
        package_parts = package_parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    for alias in node.names:
                        yield node.lineno, f"{target}.{alias.name}"
                    continue
                yield node.lineno, target
            else:
                yield node.lineno, node.module


SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_downward(path):
    mine = LEVEL[layer_of(path)]
    for lineno, name in imports(path):
        top = name.split(".")[0]
        if top == "autograd_lab":
            target = module_path(name) or module_path(name.rsplit(".", 1)[0])
            if target is None or (target.name == "__init__.py" and target != PACKAGE / "__init__.py"):
                continue  # a room's __init__ holds only its docstring
            theirs = LEVEL[layer_of(target)]
        elif top in THIRD_PARTY:
            theirs = LEVEL[THIRD_PARTY[top]]
        elif top in sys.stdlib_module_names or top == "__future__":
            continue
        else:
            pytest.fail(f"{path.name}:{lineno} imports {name}, which is neither stdlib nor an allowed dependency")
        where = f"{path.relative_to(PACKAGE)}:{lineno} ({layer_of(path)})"
        assert theirs <= mine, f"{where} imports {name} from a higher layer"


def test_rooms_have_no_code_in_their_init():
    for init in PACKAGE.glob("*/__init__.py"):
        tree = ast.parse(init.read_text())
        assert all(isinstance(n, ast.Expr) for n in tree.body), f"{init} should hold only a docstring"


def test_only_the_graph_module_walks_next_functions():
    """One walker (graph.walk) for every room: no other module reads next_functions."""
    readers = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "next_functions":
                readers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert readers and all(r.startswith("graph.py:") for r in readers), readers


def test_import_contracts_bite(tmp_path):
    """A copy of the package with a cycle (graph -> stepper.view -> ... -> graph) breaks the contracts."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed in this environment (make test installs it)")
    root = PACKAGE.parent
    shutil.copytree(PACKAGE, tmp_path / "autograd_lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def run():
        return subprocess.run([str(lint), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True)

    assert run().returncode == 0
    with open(tmp_path / "autograd_lab" / "graph.py", "a") as f:
        f.write("\nfrom autograd_lab.stepper import view  # noqa\n")
    broken = run()
    assert broken.returncode != 0 and "BROKEN" in broken.stdout


def test_layering_test_bites(tmp_path):
    """A model module that imports ipywidgets is caught."""
    assert LEVEL[layer_of(PACKAGE / "graph.py")] < LEVEL[THIRD_PARTY["ipywidgets"]]
    assert layer_of(PACKAGE / "stepper" / "view.py") == "front"


def test_no_module_is_over_250_lines():
    """A newcomer reads a module in one sitting: one that grows past 250 lines is split by what its
    parts are."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 250}
    assert not long, f"modules over 250 lines: {long}"
