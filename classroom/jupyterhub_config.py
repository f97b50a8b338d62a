# JupyterHub configuration for `make classroom` (a demonstration class on one machine).
# Every path and port comes from the settings file that classroom/hub.py writes (CLASSROOM_SETTINGS),
# so the hub writes nothing outside the project's folder. The two secrets are in no file: the shared
# password and the admin API token come in the hub's environment, and are removed from it here, so
# that the proxy and the learners' servers, which the hub starts, never inherit them.
#
# A DEMONSTRATION: SimpleLocalProcessSpawner runs every learner's server as the user who started
# the hub (root here), so learners are not isolated from each other or from the machine: a learner's
# kernel can read what that user can, the hub's /proc entries included. A real class uses The
# Littlest JupyterHub (systemd spawner, one Unix user per learner) or Kubernetes (deploy/ in this
# repository).
import json
import os
import shutil
from pathlib import Path

c = get_config()  # type: ignore[name-defined]  # noqa: F821 - jupyterhub provides it
settings = json.loads(Path(os.environ["CLASSROOM_SETTINGS"]).read_text())
state = Path(settings["state"])
password = os.environ.pop("CLASSROOM_PASSWORD")
api_token = os.environ.pop("CLASSROOM_API_TOKEN")

c.JupyterHub.bind_url = f"http://127.0.0.1:{settings['port']}/"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings['hub_port']}"
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")

# The test authenticator: every learner logs in with the one shared password.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = password
c.Authenticator.allowed_users = set(settings["learners"])

# An admin token for the teacher's scripts (the benchmark, the test): start and stop servers, and
# reach the learners' servers' APIs (kernels) through the proxy.
c.JupyterHub.services = [{"name": "classroom", "api_token": api_token}]
c.JupyterHub.load_roles = [{
    "name": "classroom-admin",
    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"],
    "services": ["classroom"],
}]

# The learners' servers: the project's .venv (it has the lab and the python3 kernel), one home each.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(Path(settings["homes"]) / "{username}")
c.Spawner.cmd = [settings["singleuser"]]
c.Spawner.args = settings["singleuser_args"]
c.Spawner.environment = {"PATH": settings["venv_bin"] + os.pathsep + os.environ.get("PATH", "")}
c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
# torch takes seconds to import on a busy machine; the defaults (60 s, 30 s) are too tight for 30 logins
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120


def pull_course(spawner):
    """What nbgitpuller does on each login: bring the course into the learner's home, adding files
    that are new and never overwriting one the learner may have edited."""
    source = Path(settings["course"])
    target = Path(spawner.home_dir) / "notebooks"
    for path in sorted(source.rglob("*")):
        if ".ipynb_checkpoints" in path.parts or "__pycache__" in path.parts:
            continue
        dest = target / path.relative_to(source)
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)


c.Spawner.pre_spawn_hook = pull_course
