"""Run code in a learner's kernel through the hub: the single-user server's kernels API over the
proxy, the way JupyterLab talks to it (a session for a notebook, then the kernel's websocket).

Needs websocket-client (in the project's .venv). Messages that carry binary buffers (a widget's
PNG) arrive as binary frames; they are neither outputs nor status, so they are skipped.

    with LearnerKernel(hub, "learner1", "notebooks/01_backward_step_by_step.ipynb") as kernel:
        outputs = kernel.execute("1 + 1")      # [{'output_type': 'execute_result', ...}]
"""
from __future__ import annotations

import contextlib
import datetime
import json
import time
import uuid

import websocket


class KernelError(RuntimeError):
    """A cell raised, or the kernel did not answer in time."""


class LearnerKernel:
    """A kernel started for `notebook` (a path in the learner's home) in `name`'s server."""

    def __init__(self, hub, name: str, notebook: str, timeout: float = 120):
        self.hub, self.name, self.notebook, self.timeout = hub, name, notebook, timeout
        self.session_id = self.kernel_id = None
        self.ws = None
        self.client_session = uuid.uuid4().hex

    def __enter__(self) -> LearnerKernel:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        session = self.hub.server_api(self.name, "sessions", method="POST", body={
            "path": self.notebook, "name": self.notebook.rsplit("/", 1)[-1], "type": "notebook",
            "kernel": {"name": "python3"}})
        self.session_id, self.kernel_id = session["id"], session["kernel"]["id"]
        self.ws = websocket.create_connection(
            self.hub.ws_url(self.name, f"kernels/{self.kernel_id}/channels?session_id={self.client_session}"),
            header=[f"Authorization: token {self.hub.token}"], timeout=self.timeout)
        self.execute("None")  # the kernel is up and answering

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(OSError):
                self.ws.close()
            self.ws = None
        if self.session_id is not None:
            # the server may already be gone; the hub's stop kills what is left
            with contextlib.suppress(Exception):
                self.hub.server_api(self.name, f"sessions/{self.session_id}", method="DELETE")
            self.session_id = None

    def execute(self, code: str, timeout: float | None = None) -> list[dict]:
        """Run code; its outputs as nbformat-like dicts. Raises KernelError if it raised."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.client_session,
                       "username": self.name, "version": "5.3",
                       "date": datetime.datetime.now(datetime.UTC).isoformat()},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        outputs, idle, replied = [], False, False
        deadline = time.monotonic() + (timeout or self.timeout)
        while not (idle and replied):
            if time.monotonic() > deadline:
                raise KernelError(f"no answer within {timeout or self.timeout:.0f} s to: {code[:80]!r}")
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                frame = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            if isinstance(frame, bytes):
                continue
            msg = json.loads(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                idle = True
            elif kind == "execute_reply":
                replied = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append({"output_type": kind, **content})
        errors = [o for o in outputs if o["output_type"] == "error"]
        if errors:
            raise KernelError(f"{errors[0]['ename']}: {errors[0]['evalue']} in: {code[:80]!r}")
        return outputs


def text_of(outputs: list[dict]) -> str:
    """The text a terminal would show: streams and the text/plain of displays and results.

    >>> text_of([{"output_type": "stream", "name": "stdout", "text": "y = 1\\n"},
    ...          {"output_type": "display_data", "data": {"text/plain": "step"}}])
    'y = 1\\nstep'
    """
    parts = []
    for out in outputs:
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "".join(parts)
