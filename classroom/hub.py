"""A JupyterHub for a class, on this machine: start it, drive it through its REST API, stop it.

Used by `make classroom` (serve.py), the hub test (tests/test_classroom.py) and the classroom
benchmark (bench/bench_classroom.py). Standard library only, so any Python can drive it.

Everything the hub writes stays under one state folder (database, cookie secret, pid files, log,
settings, the shared password) and the learners' homes folder; by default both are inside
classroom/. The state folder is 0700 and every file in it 0600: the hub and everything it starts run
with umask 077. The admin API token is made anew at each start and is in no file: it reaches the hub
in its environment (CLASSROOM_API_TOKEN), which jupyterhub_config.py reads and removes, so neither
the proxy nor a learner's server inherits it. The hub runs from its own venv (.classroom/), the
learners' servers from the project's .venv, which has the lab.

    hub = Classroom(learners(2))
    hub.start()                       # the hub, its proxy; waits until the REST API answers
    hub.start_server("learner1")      # through the REST API, as a teacher's script would
    hub.stop()                        # the hub stops the servers and the proxy; leftovers are killed
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import BinaryIO

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HUB = REPO / ".classroom" / "bin" / "jupyterhub"
SINGLEUSER = REPO / ".venv" / "bin" / "jupyterhub-singleuser"
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
CONFIG = HERE / "jupyterhub_config.py"
COURSE = REPO / "notebooks"


def learners(n: int) -> list[str]:
    """The learners' account names.

    >>> learners(3)
    ['learner1', 'learner2', 'learner3']
    """
    return [f"learner{i}" for i in range(1, n + 1)]


def missing_pieces() -> list[str]:
    """What `make classroom-env` has not installed yet (empty when the hub can start)."""
    pieces = {HUB: "JupyterHub in .classroom/", SINGLEUSER: "jupyterhub-singleuser in .venv/",
              PROXY: "configurable-http-proxy in classroom/node_modules/"}
    return [f"{what} ({path} is missing)" for path, what in pieces.items() if not os.access(path, os.X_OK)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_root() -> bool:
    return hasattr(os, "getuid") and os.getuid() == 0


# What the hub keeps in its state folder; each is made 0600 (the umask, and a chmod at each start for
# a file left by an older run).
STATE_FILES = ("jupyterhub.sqlite", "jupyterhub_cookie_secret", "jupyterhub.log", "jupyterhub.pid",
               "proxy.pid", "password", "settings.json")
# The hub's environment: the secrets it is given without a file (jupyterhub_config.py pops them).
TOKEN_VARIABLE = "CLASSROOM_API_TOKEN"
PASSWORD_VARIABLE = "CLASSROOM_PASSWORD"


class HubError(RuntimeError):
    """The hub did not start, or did not do what it was asked in time; the message has its log's tail."""


class Classroom:
    """One JupyterHub with `names` as learners, all sharing `password`; `token` is an admin API token.

    `extra_args` go to every learner's single-user server (the benchmark exposes the Lab app to its
    browser with them)."""

    def __init__(self, names: list[str], state: Path = HERE / "state", homes: Path = HERE / "homes",
                 port: int | None = None, password: str | None = None, extra_args: tuple[str, ...] = ()):
        self.names = list(names)
        self.state = Path(state)
        self.homes = Path(homes)
        self.port = port or free_port()
        self.password = password or self._kept_secret("password", 12)
        self.token = secrets.token_hex(32)
        self.extra_args = list(extra_args)
        self.log_path = self.state / "jupyterhub.log"
        self.proc: subprocess.Popen | None = None
        self._log: BinaryIO | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _kept_secret(self, name: str, nbytes: int) -> str:
        """A secret made once per state folder, so that a restarted class keeps its password; the
        file is created 0600 (never readable by others, not even for a moment)."""
        path = self.state / name
        self._make_state_folder()  # and tightens what an older run left
        if path.is_file():
            return path.read_text().strip()
        value = secrets.token_urlsafe(nbytes)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(value + "\n")
        return value

    def _make_state_folder(self) -> None:
        self.state.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.state.chmod(0o700)
        for name in STATE_FILES:
            with contextlib.suppress(FileNotFoundError):
                (self.state / name).chmod(0o600)

    def settings(self) -> dict:
        """What jupyterhub_config.py reads: every path and port, so nothing falls back to a default
        outside the project (the hub's own defaults are 8000, 8001, 8081 and the current folder).
        No secret: the password and the admin token go in the hub's environment (secrets())."""
        args = ["--allow-root"] if is_root() else []
        return {
            "port": self.port, "hub_port": free_port(), "proxy_api_port": free_port(),
            "learners": self.names, "state": str(self.state), "homes": str(self.homes), "course": str(COURSE),
            "proxy": str(PROXY), "singleuser": str(SINGLEUSER), "venv_bin": str(SINGLEUSER.parent),
            "singleuser_args": args + self.extra_args,
        }

    def secrets(self) -> dict[str, str]:
        """The hub's environment variables that carry its secrets."""
        return {TOKEN_VARIABLE: self.token, PASSWORD_VARIABLE: self.password}

    # -- life cycle ------------------------------------------------------------------------
    def start(self, timeout: float = 120) -> None:
        missing = missing_pieces()
        if missing:
            raise HubError("not installed: " + "; ".join(missing) + ". Run: make classroom-env")
        self._make_state_folder()
        self.homes.mkdir(mode=0o700, parents=True, exist_ok=True)
        settings_path = self.state / "settings.json"
        with os.fdopen(os.open(settings_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            out.write(json.dumps(self.settings(), indent=1))
        env = dict(os.environ, CLASSROOM_SETTINGS=str(settings_path), PYTHONUNBUFFERED="1", **self.secrets())
        # the hub writes it until stop() closes it
        self._log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        # its own session: Ctrl-C in the terminal reaches serve.py alone, which stops the hub in order;
        # umask 077: the database, the cookie secret, the pid files and whatever the proxy and the
        # learners' servers create are the user's alone
        self.proc = subprocess.Popen([str(HUB), "-f", str(CONFIG)], cwd=self.state, env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
                                     umask=0o077)
        self._wait(lambda: self.api("") is not None, timeout, "the hub's REST API to answer")

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM to the hub, which stops every single-user server and the proxy; then kill whatever
        of its process tree is still alive (servers run in sessions of their own)."""
        if self.proc is None:
            return
        tree = descendants(self.proc.pid)
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for pid, started in tree + children_of_tree(tree):
                kill_if_same(pid, started)
            if self._log is not None:
                self._log.close()
                self._log = None
            self.proc = None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _wait(self, done, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise HubError(f"jupyterhub exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if done():
                    return
            except (OSError, HubError):
                pass
            time.sleep(0.3)
        raise HubError(f"waited {timeout:.0f} s for {what}:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- REST API --------------------------------------------------------------------------
    def request(self, url: str, method: str = "GET", body: dict | None = None, timeout: float = 30):
        """A request with the admin token; the parsed JSON answer (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise HubError(f"{method} {url}: {err.code} {err.read()[:300]!r}") from None
        return json.loads(raw) if raw else None

    def api(self, path: str, method: str = "GET", body: dict | None = None):
        """The hub's REST API, e.g. api('users/learner1')."""
        return self.request(f"{self.url}/hub/api/{path}", method, body)

    def server_api(self, name: str, path: str, method: str = "GET", body: dict | None = None):
        """A learner's single-user server's API through the proxy, e.g. server_api(name, 'kernels')."""
        return self.request(f"{self.url}/user/{name}/api/{path}", method, body)

    def start_server(self, name: str, timeout: float = 180) -> None:
        """Start a learner's server through the REST API and wait until the hub says it is ready."""
        self.api(f"users/{name}/server", method="POST")
        self._wait(lambda: self.api(f"users/{name}")["servers"].get("", {}).get("ready"), timeout,
                   f"{name}'s server to be ready")

    def stop_server(self, name: str, timeout: float = 60) -> None:
        self.api(f"users/{name}/server", method="DELETE")
        self._wait(lambda: not self.api(f"users/{name}")["servers"], timeout, f"{name}'s server to stop")

    def ws_url(self, name: str, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}/user/{name}/api/{path}"


# -- processes (Linux /proc, so the standard library is enough) -----------------------------------
def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process, or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # the name in brackets may hold spaces
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> list[tuple[int, int]]:
    """Every process below root, as (pid, start time) so that a reused pid is never killed."""
    if not Path("/proc").is_dir():
        return []
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                table[int(entry.name)] = stat
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, started) in table.items():
            if ppid == parent:
                found.append((pid, started))
                todo.append(pid)
    return found


def children_of_tree(tree: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """What the tree's processes started after it was listed (a kernel started during shutdown)."""
    extra = []
    for pid, started in tree:
        stat = _stat(pid)
        if stat is not None and stat[1] == started:  # still that process, not a reused pid
            extra.extend(descendants(pid))
    return extra


def kill_if_same(pid: int, started: int) -> None:
    stat = _stat(pid)
    if stat is not None and stat[1] == started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
