"""A class on one server (classroom/): a real JupyterHub with one learner, one lab cell run in that
learner's kernel through the hub, and everything stopped afterwards.

Skips with a message when the hub or its proxy is not installed (`make classroom-env` installs both;
`make test` tries it first); with AUTOGRAD_LAB_REQUIRE_CLASSROOM=1 (set by .ci/run) it fails instead.
Every wait has a timeout, and the hub is stopped in the fixture's teardown whatever happens.
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import stat
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


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_state_folder_and_every_file_in_it_are_the_users_alone(hub):
    assert mode(hub.state) == 0o700, f"{hub.state} is {mode(hub.state):o}"
    assert mode(hub.homes) == 0o700, f"{hub.homes} is {mode(hub.homes):o}"
    present = {path.name for path in hub.state.iterdir()}
    assert set(classroom.STATE_FILES) <= present, f"missing: {set(classroom.STATE_FILES) - present}"
    loose = {str(path.relative_to(hub.state)): f"{mode(path):o}" for path in hub.state.rglob("*")
             if path.is_file() and mode(path) != 0o600}
    assert not loose, f"state files not 0600: {loose}"


def readable_files(*roots: Path):
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not {"node_modules", ".npm-cache"} & set(path.parts):
                yield path


def test_no_file_a_learners_server_can_read_holds_the_admin_token(hub):
    # The learner's server runs as the same Unix user as the hub: it can read every file under the
    # state folder, the homes and classroom/. None of them may hold the token (nor the settings the
    # password), and no process the hub started (proxy, server, kernel) has it in its environment.
    token = hub.token.encode()
    assert len(token) == 64
    holding = [str(path) for path in readable_files(hub.state, hub.homes, REPO / "classroom")
               if token in path.read_bytes()]
    assert not holding, f"files holding the admin token: {holding}"
    settings = (hub.state / "settings.json").read_text()
    assert hub.password not in settings and hub.token not in settings
    children = classroom.descendants(hub.proc.pid)
    assert len(children) >= 2, "the proxy and the learner's server should be running"
    inherited = []
    for pid, _ in children:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue  # gone in between
        if token in environ or hub.password.encode() in environ:
            inherited.append(pid)
    assert not inherited, f"processes of the hub holding the token or the password in their environment: {inherited}"


# -- the state folder without a hub: what the class writes before jupyterhub starts ----------------
def test_a_new_password_file_is_0600_and_an_old_loose_one_is_tightened(tmp_path):
    fresh = classroom.Classroom(["learner1"], state=tmp_path / "fresh", homes=tmp_path / "homes")
    assert mode(tmp_path / "fresh" / "password") == 0o600 and mode(tmp_path / "fresh") == 0o700
    assert (tmp_path / "fresh" / "password").read_text().strip() == fresh.password
    old = tmp_path / "old"
    old.mkdir(mode=0o755)
    (old / "password").write_text("kept-from-last-time\n")
    (old / "password").chmod(0o644)
    (old / "jupyterhub.log").write_text("an older run's log\n")
    (old / "jupyterhub.log").chmod(0o644)
    again = classroom.Classroom(["learner1"], state=old, homes=tmp_path / "homes")
    assert again.password == "kept-from-last-time"
    assert mode(old / "password") == 0o600 and mode(old / "jupyterhub.log") == 0o600 and mode(old) == 0o700


def test_the_settings_file_holds_no_secret_and_the_hub_gets_them_in_its_environment(tmp_path):
    room = classroom.Classroom(["learner1"], state=tmp_path / "state", homes=tmp_path / "homes")
    text = json.dumps(room.settings())
    assert room.token not in text and room.password not in text
    assert room.secrets() == {"CLASSROOM_API_TOKEN": room.token, "CLASSROOM_PASSWORD": room.password}
    config = (REPO / "classroom" / "jupyterhub_config.py").read_text()
    for variable in room.secrets():
        assert f'os.environ.pop("{variable}")' in config, f"jupyterhub_config.py must take {variable} out"


# -- deploy/: what can be checked without Kubernetes, Docker or a registry -------------------------
# Key paths of the zero-to-jupyterhub Helm chart "jupyterhub" 4.4.0, from its values schema
# (jupyterhub/values.schema.yaml at tag 4.4.0); only those deploy/values.yaml uses.
CHART_KEYS = {
    "singleuser.image.name", "singleuser.image.tag", "singleuser.memory.guarantee", "singleuser.memory.limit",
    "singleuser.cpu.guarantee", "singleuser.cpu.limit", "singleuser.lifecycleHooks.postStart",
    "singleuser.defaultUrl", "singleuser.startTimeout", "singleuser.storage.capacity",
    "hub.config", "cull.enabled", "cull.timeout", "cull.every",
}
CHART = ("4.4.0", "5.5.0")  # the chart's version, and the JupyterHub its hub image runs
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


def test_the_helm_values_let_nobody_in_until_the_teacher_signs_up():
    import yaml

    config = yaml.safe_load((REPO / "deploy" / "values.yaml").read_text())["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"] == "native", "the native authenticator, by its entry point"
    native = config["NativeAuthenticator"]
    assert native["open_signup"] is False, "a signed-up account waits for an admin's approval"
    assert native.get("enable_signup", True) is True, "the teacher signs up like everyone else"
    auth = config["Authenticator"]
    assert auth["admin_users"] == [], "shipped empty: deployed unchanged, nobody is approved, nobody gets in"
    # nothing else approves or lets in a name: no list of allowed users, no existing-user rule
    assert set(auth) == {"admin_users", "allow_all"}, sorted(auth)
    assert auth["allow_all"] is True, "JupyterHub 5 lets in nobody at all without an allow setting"
    assert "dummy" not in json.dumps(config).lower()
    assert set(config) == {"JupyterHub", "Authenticator", "NativeAuthenticator"}, sorted(config)


def helm_merge(defaults: dict, values: dict) -> dict:
    """What Helm validates: the chart's defaults with the user's values over them (maps merged key by
    key, anything else replaced, a null deleting the default)."""
    merged = copy.deepcopy(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def test_helm_merge_merges_maps_replaces_lists_and_deletes_with_null():
    defaults = {"a": {"b": 1, "c": [1, 2]}, "d": 4, "e": {"f": 5}}
    assert helm_merge(defaults, {"a": {"c": [3]}, "d": None, "e": {"g": 6}}) == \
        {"a": {"b": 1, "c": [3]}, "e": {"f": 5, "g": 6}}
    assert defaults == {"a": {"b": 1, "c": [1, 2]}, "d": 4, "e": {"f": 5}}, "the defaults are not changed"


def chart_folder() -> Path:
    """The chart's folder, AUTOGRAD_LAB_Z2JH_CHART: values.yaml and values.schema.json (or .yaml)."""
    folder = os.environ.get("AUTOGRAD_LAB_Z2JH_CHART")
    if not folder:
        pytest.skip("the chart's values schema is not in this repository: to check deploy/values.yaml "
                    "against it, `helm pull jupyterhub/jupyterhub --version 4.4.0 --untar --untardir "
                    "DIR` and set AUTOGRAD_LAB_Z2JH_CHART=DIR/jupyterhub")
    return Path(folder)


def test_the_helm_values_validate_against_the_charts_own_values_schema():
    import jsonschema
    import yaml

    chart = chart_folder()
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    # a packaged chart says 4.4.0; a checkout of the chart's tag 4.4.0 keeps the release tool's placeholder
    assert meta["version"] in (CHART[0], "0.0.1-set.by.chartpress") and meta["appVersion"] == CHART[1], meta
    schema_path = chart / "values.schema.json"
    schema = (json.loads(schema_path.read_text()) if schema_path.is_file()
              else yaml.safe_load((chart / "values.schema.yaml").read_text()))
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    ours = yaml.safe_load((REPO / "deploy" / "values.yaml").read_text())
    validator = jsonschema.Draft7Validator(schema)
    assert not list(validator.iter_errors(defaults)), "the chart's own defaults should pass its schema"
    errors = [f"{'.'.join(map(str, error.path))}: {error.message[:200]}"
              for error in validator.iter_errors(helm_merge(defaults, ours))]
    assert not errors, errors
    # the check can fail: a misspelt key and a lower-case hub.config section are refused
    broken = helm_merge(ours, {"singleuser": {"imag": {}}, "hub": {"config": {"nativeAuthenticator": {}}}})
    assert len(list(validator.iter_errors(helm_merge(defaults, broken)))) == 2


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
    # the authenticator runs in the hub, whose image (the chart's own) ships it; the learners' has no use for it
    assert "nativeauthenticator" not in dockerfile and "nativeauthenticator" not in pins
