"""The layering of DESIGN.md, checked on the source: imports only flow downward.

model (torch, stdlib, numpy, networkx, sympy) < rendering (+ matplotlib) < front ends (+ ipywidgets,
IPython) < package face (__init__)."""
import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograd_lab"
FRONT = {"display.py", "magics.py"}  # and every *view.py
RENDERING = {"draw.py", "picture.py", "text.py", "faces.py"}
LEVEL = {"model": 0, "rendering": 1, "front": 2, "face": 3}
THIRD_PARTY = {
    "torch": "model", "numpy": "model", "networkx": "model", "sympy": "model",
    "matplotlib": "rendering", "PIL": "rendering", "ipywidgets": "front", "IPython": "front",
}


def layer_of(path: Path) -> str:
    if path == PACKAGE / "__init__.py":
        return "face"
    if path.name in FRONT or path.name.endswith("view.py"):
        return "front"
    if path.name in RENDERING:
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
            if target is None or target.name == "__init__.py" and target != PACKAGE / "__init__.py":
                continue  # a room's __init__ holds only its docstring
            theirs = LEVEL[layer_of(target)]
        elif top in THIRD_PARTY:
            theirs = LEVEL[THIRD_PARTY[top]]
        elif top in sys.stdlib_module_names or top == "__future__":
            continue
        else:
            pytest.fail(f"{path.name}:{lineno} imports {name}, which is neither stdlib nor an allowed dependency")
        assert theirs <= mine, f"{path.relative_to(PACKAGE)}:{lineno} ({layer_of(path)}) imports {name} from a higher layer"


def test_rooms_have_no_code_in_their_init():
    for init in PACKAGE.glob("*/__init__.py"):
        tree = ast.parse(init.read_text())
        assert all(isinstance(n, ast.Expr) for n in tree.body), f"{init} should hold only a docstring"


def test_layering_test_bites(tmp_path):
    """A model module that imports ipywidgets is caught."""
    assert LEVEL[layer_of(PACKAGE / "graph.py")] < LEVEL[THIRD_PARTY["ipywidgets"]]
    assert layer_of(PACKAGE / "stepper" / "view.py") == "front"
