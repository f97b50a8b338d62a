"""Memory in a live kernel: re-running a %backward cell twenty times keeps the kernel's memory within
20% of what it held after the second run (a real ipykernel, started here with jupyter_client; the
leaf is 4 MB, so twenty kept recordings would add hundreds of MB)."""
import queue
import sys

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

SETUP = """
%load_ext autograd_lab
import gc, torch
def rss_mb():
    # live memory, not what the allocator keeps cached: collect, then hand freed heap back
    import ctypes
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open('/proc/self/statm') as f:
        pages = int(f.read().split()[1])
    import os
    return pages * os.sysconf('SC_PAGE_SIZE') / 2**20
"""
CELL = """
x = torch.randn(1_000_000, requires_grad=True)
z = (x * 2).sin().sum()
%backward z
"""


def run(kc, code, cell_id="setup"):
    """Execute code as the cell cell_id (JupyterLab sends the cell's id in the metadata)."""
    msg = kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                             "user_expressions": {}, "allow_stdin": False,
                                             "stop_on_error": True}, metadata={"cellId": cell_id})
    kc.shell_channel.send(msg)
    out, errors = [], []
    while True:
        try:
            reply = kc.get_iopub_msg(timeout=120)
        except queue.Empty:  # pragma: no cover - a stuck kernel
            raise AssertionError("the kernel did not answer") from None
        if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        kind, content = reply["msg_type"], reply["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            errors.append(content["ename"] + ": " + content["evalue"])
        elif kind == "status" and content["execution_state"] == "idle":
            break
    assert not errors, errors
    return "".join(out)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_rerunning_a_backward_cell_keeps_memory_bounded():
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(extra_arguments=["--HistoryManager.enabled=False"])
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        run(kc, SETUP)
        sizes = []
        for _ in range(20):
            run(kc, CELL, cell_id="the-backward-cell")
            sizes.append(float(run(kc, "print(rss_mb())")))
        assert sizes[-1] <= 1.2 * sizes[1], f"kernel memory grew: {sizes[1]:.0f} MB -> {sizes[-1]:.0f} MB"
        # one live stepper for the cell: each re-run released the one before
        assert run(kc, "from autograd_lab.stepper import live_view as view\n"
                       "print(len(view._current), list(view._current.values())[0].released)").split() == ["1", "False"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
