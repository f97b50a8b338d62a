"""A class on one server (classroom/): a real JupyterHub with one learner, one lab cell run in that
learner's kernel through the hub, and everything stopped afterwards.

Skips with a message when the hub or its proxy is not installed (`make classroom-env` installs both;
`make test` tries it first); with AUTOGRAD_LAB_REQUIRE_CLASSROOM=1 (set by .ci/run) it fails instead.
Every wait has a timeout, and the hub is stopped in the fixture's teardown whatever happens.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "classroom"))

import hub as classroom  # noqa: E402

pytestmark = pytest.mark.timeout(420)

SEED = """%load_ext autograd_lab
import torch
x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)
y = x ** 2
z = y.mean()
%backward z"""


def not_installed(reason: str):
    if os.environ.get("AUTOGRAD_LAB_REQUIRE_CLASSROOM") == "1":
        pytest.fail(f"classroom test required (AUTOGRAD_LAB_REQUIRE_CLASSROOM=1) but {reason}", pytrace=False)
    pytest.skip(f"classroom test skipped: {reason} (make classroom-env installs JupyterHub and, with npm, "
                "its proxy)")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing = classroom.missing_pieces()
    if missing:
        not_installed("not installed: " + "; ".join(missing))
    if shutil.which("node") is None:
        not_installed("node is not on PATH (configurable-http-proxy runs on it)")
    base = tmp_path_factory.mktemp("classroom")
    room = classroom.Classroom(["learner1"], state=base / "state", homes=base / "homes")
    tree: list[tuple[int, int]] = []
    try:
        room.start(timeout=120)
        room.start_server("learner1", timeout=180)
        tree = classroom.descendants(room.proc.pid)
        yield room
    finally:
        tree += classroom.descendants(room.proc.pid) if room.running() else []
        room.stop()
        left = [pid for pid, started in tree if (classroom._stat(pid) or (0, None))[1] == started]
        assert not left, f"processes of the hub still alive after stop: {left}"


def test_the_course_is_in_the_learners_home(hub):
    home = hub.homes / "learner1"
    for lesson in (REPO / "notebooks").glob("*.ipynb"):
        assert (home / "notebooks" / lesson.name).is_file(), f"{lesson.name} was not copied into the home"


def test_a_lab_cell_runs_in_the_learners_kernel_through_the_hub(hub):
    from kernel import LearnerKernel, text_of

    with LearnerKernel(hub, "learner1", "notebooks/00_start_here.ipynb", timeout=120) as kernel:
        shown = text_of(kernel.execute(SEED, timeout=180))
        where = text_of(kernel.execute(
            "import os, sys\nprint(sys.prefix, os.environ['HOME'], os.environ['JUPYTERHUB_USER'], x.grad)"))
    assert "backward of z: 3 steps in the order the engine ran them" in shown, shown
    assert "1  MeanBackward0 (z)" in shown and "3  AccumulateGrad (x)" in shown, shown
    assert "gradients for the leaves: x: [0.6667, 1.3333, 2.0000]" in shown, shown
    prefix, home, user, grad = where.split()
    assert Path(prefix) == REPO / ".venv", "the learner's kernel must run in the project's .venv"
    assert Path(home) == hub.homes / "learner1" and user == "learner1"
    assert grad == "None", "the stepper must not change the learner's x.grad"


def test_the_admin_token_sees_the_learner_and_nobody_else(hub):
    users = {user["name"] for user in hub.api("users")}
    assert users == {"learner1"}


# -- deploy/: what can be checked without Kubernetes, Docker or a registry -------------------------
# Key paths of the zero-to-jupyterhub Helm chart "jupyterhub" 4.4.0, from its values schema
# (jupyterhub/values.schema.yaml at tag 4.4.0); only those deploy/values.yaml uses.
CHART_KEYS = {
    "singleuser.image.name", "singleuser.image.tag", "singleuser.memory.guarantee", "singleuser.memory.limit",
    "singleuser.cpu.guarantee", "singleuser.cpu.limit", "singleuser.lifecycleHooks.postStart",
    "singleuser.defaultUrl", "singleuser.startTimeout", "singleuser.storage.capacity",
    "hub.config", "cull.enabled", "cull.timeout", "cull.every",
}
# objects the schema passes through as they are (KubeSpawner's lifecycle hooks, JupyterHub's config)
FREE_FORM = {"singleuser.lifecycleHooks.postStart", "hub.config"}
UNITS = {"K": 1e3, "M": 1e6, "G": 1e9}


def key_paths(tree: dict, prefix: str = "") -> list[str]:
    paths = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path not in FREE_FORM:
            paths.extend(key_paths(value, path + "."))
        else:
            paths.append(path)
    return paths


def size(text: str) -> float:
    """A KubeSpawner byte size such as '640M' or '1.5G', in bytes."""
    return float(text[:-1]) * UNITS[text[-1]]


def test_the_helm_values_parse_and_name_only_keys_the_chart_documents():
    import yaml

    values = yaml.safe_load((REPO / "deploy" / "values.yaml").read_text())
    unknown = sorted(set(key_paths(values)) - CHART_KEYS)
    assert not unknown, f"keys the chart 4.4.0 does not document: {unknown}"
    single = values["singleuser"]
    assert size(single["memory"]["guarantee"]) <= size(single["memory"]["limit"])
    command = single["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert command[0] == "gitpuller" and len(command) == 4, "gitpuller REPOSITORY BRANCH FOLDER"
    assert single["defaultUrl"].startswith(f"/lab/tree/{Path(command[3]).name}/notebooks/")


def test_the_image_installs_the_lab_as_the_tests_do():
    dockerfile = (REPO / "deploy" / "Dockerfile").read_text()
    assert "RUN pip install -c constraints.txt .\n" in dockerfile
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), f"the Dockerfile copies {source}, which is not in the repository"
    pins = dict(line.split("==") for line in (REPO / "deploy" / "constraints-image.txt").read_text().splitlines()
                if "==" in line)
    assert pins["jupyterhub"] == "5.5.0", "the image's jupyterhub-singleuser must match chart 4.4.0's hub"
