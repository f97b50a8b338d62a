"""The layering of the package: imports only flow downward.

model (torch, stdlib, numpy, networkx, sympy) < rendering (+ matplotlib) < front ends (+ ipywidgets,
IPython) < package face (__init__). Each module's layer is declared in import-linter's contracts in
pyproject.toml (the rendering and front-end modules by name; every other module is the model),
which run in `make lint`; the tests here check that they bite, and that the package imports nothing
but the standard library and its declared dependencies."""
import ast
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograd_lab"
# the import name of each declared dependency that is not spelled as its package
IMPORT_NAME = {"pillow": "PIL", "ipython": "IPython"}


def dependencies() -> set[str]:
    """The import names of the dependencies pyproject.toml declares."""
    import tomllib

    declared = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].strip().lower() for d in declared}
    return {IMPORT_NAME.get(n, n) for n in names}


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
def test_imports_are_the_standard_library_or_declared_dependencies(path):
    allowed = dependencies()
    for lineno, name in imports(path):
        top = name.split(".")[0]
        if top == "autograd_lab" or top in sys.stdlib_module_names or top == "__future__":
            continue
        assert top in allowed, f"{path.name}:{lineno} imports {name}, which is neither stdlib nor a declared dependency"


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


# (module to edit, the import added to it): each breaks one layer contract
UPWARD = [
    ("graph.py", "from autograd_lab.stepper import view"),  # a cycle, and the model above a front end
    ("storage/experiments.py", "import ipywidgets"),  # the model importing a front-end library
    ("practice/checking.py", "from autograd_lab.practice import faces"),  # the model above the rendering
    ("stepper/draw.py", "from autograd_lab.stepper import view"),  # the rendering above a front end
]


@pytest.fixture(scope="module")
def lint():
    found = Path(sys.executable).with_name("lint-imports")
    if not found.exists():
        pytest.skip("import-linter is not installed in this environment (make test installs it)")
    return found


def run_lint(lint, root: Path):
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(lint), "--no-cache"], cwd=root, env=env, capture_output=True, text=True)


def test_import_contracts_hold(lint):
    assert run_lint(lint, PACKAGE.parent).returncode == 0


@pytest.mark.parametrize(("module", "line"), UPWARD, ids=[m for m, _ in UPWARD])
def test_import_contracts_bite(lint, tmp_path, module, line):
    """A copy of the package with one import that flows upward breaks the contracts."""
    shutil.copytree(PACKAGE, tmp_path / "autograd_lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PACKAGE.parent / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "autograd_lab" / module, "a") as f:
        f.write(f"\n{line}  # noqa\n")
    broken = run_lint(lint, tmp_path)
    assert broken.returncode != 0 and "BROKEN" in broken.stdout
