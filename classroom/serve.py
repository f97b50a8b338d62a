"""`make classroom [N=4]`: a JupyterHub with N learners on a loopback port, until Ctrl-C.

The hub's database, cookie secret, log and the shared password live in classroom/state/ (0700, each
file 0600), the learners' homes in classroom/homes/ (each gets a copy of notebooks/ at its first
login, as nbgitpuller would bring it). The admin API token is made at each start and kept only in
memory and in the hub's environment. Ctrl-C stops the hub, which stops the learners' servers and its
proxy; anything of its process tree still alive afterwards is killed.

A demonstration: every learner's server runs as the user who ran this (root here), with no
isolation between learners: a learner's kernel can read and change whatever that user can (every
home, the state folder, the hub's environment). See docs/classroom.md for what a real class
uses.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time

from hub import Classroom, HubError, is_root, learners


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=4, help="number of learner accounts (default 4)")
    parser.add_argument("--port", type=int, default=None, help="the hub's port (default: a free one)")
    args = parser.parse_args()
    if args.learners < 1:
        parser.error("--learners must be at least 1 (make classroom N=4)")
    hub = Classroom(learners(args.learners), port=args.port)
    # Ctrl-C even when started in the background of a script (where SIGINT is ignored by default);
    # SIGTERM (a closed terminal, a service manager) stops the class the same way
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        hub.start()
        print(f"JupyterHub is up: {hub.url}/", flush=True)
        print(f"learners: {', '.join(hub.names)}")
        print(f"password (shared by every learner): {hub.password}")
        print(f"homes: {hub.homes}/<learner>/notebooks   log: {hub.log_path}")
        who = "root (--allow-root)" if is_root() else "you"
        print(f"a demonstration: every learner's server runs as {who}, with no isolation; a learner's "
              "kernel can read every home, the state folder and the hub's environment.")
        print("Ctrl-C stops the hub, the learners' servers and the proxy.", flush=True)
        while hub.running():
            time.sleep(0.5)
        print(f"the hub exited by itself:\n{hub.log_tail()}", file=sys.stderr)
        return 1
    except HubError as err:
        print(f"the classroom did not start: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopping the hub, the learners' servers and the proxy...", flush=True)
        return 0
    finally:
        hub.stop()
        print("stopped.")


if __name__ == "__main__":
    sys.exit(main())
