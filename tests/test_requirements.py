"""The requirements pyproject.toml declares are the ones that run (make test-colab and
make test-torch-next run the unit tests on the stacks named here).

- requires-python is the oldest Python the code parses on (tomllib is 3.11's), and ruff's target and
  the classifiers follow it;
- the IPython and ipywidgets floors admit Colab's stack as constraints-colab.txt pins it, and the
  torch floor admits every torch the lab's CI runs;
- every private torch name the lab looks up exists in the installed torch.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import torch
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
REQUIRES = {Requirement(r).name: Requirement(r).specifier for r in PYPROJECT["project"]["dependencies"]}


def pins(path: Path) -> dict[str, str]:
    """name -> version of each name==version line of a constraints file."""
    found = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", line)
        if m:
            found[m[1].lower().replace("_", "-")] = m[2]
    return found


def test_requires_python_is_the_oldest_that_runs_and_ruff_and_the_classifiers_follow_it():
    floor = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert "3.11" in floor and "3.10" not in floor  # the lab imports tomllib, new in 3.11
    assert any("tomllib" in p.read_text() for p in (ROOT / "autograd_lab").rglob("*.py"))
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"
    versions = [c.rsplit(":: ", 1)[1] for c in PYPROJECT["project"]["classifiers"]
                if re.match(r"Programming Language :: Python :: 3\.\d+$", c)]
    assert versions and all(v in floor for v in versions) and min(versions, key=Version) == "3.11"


def test_the_floors_admit_colabs_stack():
    colab = pins(ROOT / "constraints-colab.txt")
    assert (colab["ipython"], colab["ipykernel"], colab["ipywidgets"]) == ("7.34.0", "6.17.1", "7.7.1")
    for name in ("ipython", "ipywidgets", "torch", "matplotlib", "numpy"):
        assert colab[name] in REQUIRES[name], f"{name} {REQUIRES[name]} refuses Colab's {colab[name]}"


@pytest.mark.parametrize("version", ["2.10.0", "2.11.0", "2.13.0", "2.14.1"])
def test_the_torch_floor_admits_the_torches_declared_and_tested(version):
    assert version in REQUIRES["torch"]
    assert "2.9.1" not in REQUIRES["torch"]  # SavedTensor's unpack hook, which checkpoints need, is 2.10's


def test_the_tested_torches_are_pinned_where_ci_installs_them():
    assert pins(ROOT / "constraints.txt")["torch"] == "2.13.0"
    assert "torch==2.14.1" in (ROOT / "Makefile").read_text()


def test_every_private_torch_name_the_lab_looks_up_is_in_this_torch():
    import torch.utils.checkpoint as checkpoint

    saved = torch._C._autograd.SavedTensor if hasattr(torch._C._autograd, "SavedTensor") else None
    names = {
        "checkpoint._CheckpointFrame": hasattr(checkpoint, "_CheckpointFrame"),
        "checkpoint._CachedTorchDispatchMode": hasattr(checkpoint, "_CachedTorchDispatchMode"),
        "checkpoint._Holder": hasattr(checkpoint, "_Holder"),
        "_unsafe_set_version_counter": hasattr(torch._C._autograd, "_unsafe_set_version_counter"),
        "Variable._execution_engine": hasattr(torch.autograd.Variable, "_execution_engine"),
        "graph._engine_run_backward": hasattr(torch.autograd.graph, "_engine_run_backward"),
        "SavedTensor": saved is not None,
    }
    assert all(names.values()), [name for name, there in names.items() if not there]
