"""One JupyterLab server and one headless Chromium for the whole browser session.

The server runs from this venv (so the kernel is the venv's python3 with autograd_lab installed) on
a free loopback port with a random token. Its settings, data, runtime and workspace directories are
temporary, and its root is a temporary copy of notebooks/ plus tests/browser/fixtures/ (under
browser_fixtures/), so the tests never write into the repository. Both processes stop at the end of
the session, also when a test fails or the session is interrupted.

Without a Chromium the tests skip with the reason; with AUTOGRAD_LAB_REQUIRE_BROWSER=1 (set by
.ci/run) a missing browser is a failure instead; AUTOGRAD_LAB_CHROMIUM names another browser binary.

Run only these: `.venv/bin/python -m pytest tests -m browser`. Each test leaves a screenshot of its
page in tests/browser/artifacts/<test name>.png (git-ignored), also when it fails.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from labpage import LabPage

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ARTIFACTS = HERE / "artifacts"
FIXTURES_DIR = "browser_fixtures"  # where tests/browser/fixtures lands inside the server's root

# Flags checked to work on these machines; the sandbox needs privileges containers do not give.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]

# JupyterLab settings that keep the page quiet and every cell in the DOM.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


def find_chromium() -> str | None:
    """The system Chromium (Debian's package), or the one named by AUTOGRAD_LAB_CHROMIUM."""
    named = os.environ.get("AUTOGRAD_LAB_CHROMIUM")
    if named:
        candidates = [named]
    else:
        candidates = [shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium"]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def no_browser(reason: str):
    """Skip, or fail when CI demands the browser tests run."""
    if os.environ.get("AUTOGRAD_LAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required (AUTOGRAD_LAB_REQUIRE_BROWSER=1) but {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason} (install Debian's chromium: apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    """A `jupyter lab` subprocess in a temporary home; `url(path)` opens a notebook in a fresh workspace."""

    def __init__(self, base: Path):
        self.base = base
        self.root = base / "root"
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.log_path = base / "jupyter.log"
        self.proc = None
        self.log = None

    def prepare(self) -> None:
        shutil.copytree(REPO / "notebooks", self.root)
        shutil.copytree(HERE / "fixtures", self.root / FIXTURES_DIR)
        settings = self.base / "settings"
        for name, values in LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        for sub in ("config", "data", "runtime", "workspaces", "ipython"):
            (self.base / sub).mkdir()

    def env(self) -> dict:
        env = dict(os.environ)
        env.update({
            "JUPYTER_CONFIG_DIR": str(self.base / "config"),
            "JUPYTER_DATA_DIR": str(self.base / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.base / "runtime"),
            # the venv's kernelspec (python3, installed with --sys-prefix) comes first
            "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter"),
            "IPYTHONDIR": str(self.base / "ipython"),
            "PYTHONUNBUFFERED": "1",
        })
        # the kernel must be this venv's python: put it first on PATH for anything spawned by name
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        return env

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
               f"--LabApp.user_settings_dir={self.base / 'settings'}",
               f"--LabApp.workspaces_dir={self.base / 'workspaces'}",
               # lets the tests run Lab commands (run all cells) and read the notebook model
               "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True",
               "--ServerApp.open_browser=False", "--LabApp.news_url=None"]
        if hasattr(os, "getuid") and os.getuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self, timeout: float = 90) -> None:
        self.prepare()
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - the server writes to it until stop() closes it
        self.proc = subprocess.Popen(self.command(), env=self.env(), cwd=self.root, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.terminate()  # the server shuts its kernels down on SIGTERM
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, 9)  # its own session: the kernels go too
                    self.proc.wait(timeout=10)
        finally:
            if self.log is not None:
                self.log.close()

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """End every session, so one test's kernel does not eat the next test's CPU."""
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")

    def url(self, path: str, workspace: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/workspaces/{workspace}/tree/{path}?token={self.token}"

    def notebook7_url(self, path: str) -> str:
        """The same server, as Jupyter Notebook 7 (the notebook package's front end) shows a notebook."""
        return f"http://127.0.0.1:{self.port}/notebooks/{path}?token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@pytest.fixture(scope="session")
def chromium_path():
    path = find_chromium()
    if path is None:
        looked = os.environ.get("AUTOGRAD_LAB_CHROMIUM") or "chromium, chromium-browser, /usr/bin/chromium"
        no_browser(f"no Chromium found (looked for {looked})")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        no_browser("the Python package playwright is not installed")
    return path


def _server(tmp_path_factory, name: str):
    server = LabServer(tmp_path_factory.mktemp(name))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory):
    yield from _server(tmp_path_factory, "jupyterlab")


@pytest.fixture(scope="session")
def notebook7_server(chromium_path, tmp_path_factory):
    """A server of its own for Notebook 7: after a Notebook 7 page, JupyterLab pages on the same server
    asked for Notebook 7's font files under /static/lab/ and got 403s (console errors)."""
    yield from _server(tmp_path_factory, "notebook7")


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        chromium = pw.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        pw.stop()


@pytest.fixture
def lab(request, lab_server, browser):
    """A fresh browser page on the session's JupyterLab; a screenshot is saved when the test ends."""
    workspace = "w-" + request.node.name.replace("[", "-").replace("]", "").replace("_", "-")
    yield from _page(request, lab_server, browser, lambda path: lab_server.url(path, workspace))


@pytest.fixture
def notebook7(request, notebook7_server, browser):
    """A fresh browser page in Jupyter Notebook 7 (the same widgets, another shell)."""
    yield from _page(request, notebook7_server, browser, notebook7_server.notebook7_url)


def _page(request, lab_server, browser, url_for):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    driver = LabPage(page, url_for, FIXTURES_DIR)
    try:
        yield driver
    finally:
        with contextlib.suppress(Exception):
            driver.wait_idle(timeout=10_000)  # let the last redraw land before the picture
        try:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
        except Exception as err:  # a screenshot must never hide the test's own result
            print(f"screenshot failed: {err}")
        context.close()
        lab_server.shutdown_kernels()


@pytest.fixture
def lesson_path(lab_server):
    """lesson_path('01_x.ipynb') -> its path in the server's root; fails if the lesson is missing."""
    def find(name: str) -> str:
        if not (lab_server.root / name).is_file():
            pytest.fail(f"lesson notebooks/{name} is missing", pytrace=False)
        return name
    return find
