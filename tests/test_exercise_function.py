"""autograd_lab.exercise(...) shows what %exercise shows: in a live kernel its answer box, Check, Hint
and Solution buttons and the feedback, with the exercise's own API (ex.check(...), ex.hint(), ...)
kept. In this process a live kernel is simulated; one test asks a real kernel."""
import json
import queue

import pytest
import torch
from IPython.utils.capture import capture_output

import autograd_lab
from autograd_lab import display, magic_spec
from autograd_lab.practice.bank import exercise as model
from helpers import part

pytestmark = pytest.mark.usefixtures("fresh_progress")

CLASSES = ["agl-answer", "agl-check", "agl-feedback", "agl-hint", "agl-solution", "agl-statement"]


@pytest.fixture
def kernel_like(monkeypatch):
    """Views are displayed as in a live kernel (their widget), with the bookkeeping of live views
    of this test only."""
    monkeypatch.setattr(display, "live", lambda: True)
    monkeypatch.setattr(display, "_LIVE", display._Live())
    monkeypatch.setattr(display, "_SLOTS", {})


def test_the_function_shows_the_answer_box_in_a_live_kernel(ip, kernel_like):
    from IPython.display import display as show

    ex = autograd_lab.exercise("mean_square")
    with capture_output() as out:
        show(ex)
    [shown] = out.outputs
    assert shown.data[display.WIDGET_MIME]["model_id"] == ex.widget.model_id
    assert shown.data["text/plain"] == ex.text() and ex.text().startswith("Exercise mean_square")
    assert sorted(ex.parts) == CLASSES
    expected = model("mean_square").expected
    part(ex, "agl-answer").value = ", ".join(f"{v:.4f}" for v in expected.tolist())
    part(ex, "agl-check").click()
    assert "Correct" in part(ex, "agl-feedback").value
    part(ex, "agl-answer").value = "1, 1, 1"
    part(ex, "agl-check").click()
    assert "Incorrect" in part(ex, "agl-feedback").value
    assert out.stderr == ""


def faces(view) -> dict:
    """What the front end is sent of each control: its value, placeholder, label and classes."""
    keys = ("value", "placeholder", "description", "_dom_classes")
    return {css: {k: v for k, v in part(view, css).get_state().items() if k in keys} for css in CLASSES}


def test_the_function_and_the_magic_show_the_same(ip, kernel_like, monkeypatch):
    shown: list = []
    monkeypatch.setattr(magic_spec, "show", shown.append)
    ip.run_line_magic("exercise", "mean_square_random --seed 4")
    [by_magic] = shown
    by_function = autograd_lab.exercise("mean_square_random", seed=4)
    assert type(by_function) is type(by_magic)
    assert by_function.text() == by_magic.text() and by_function.html() == by_magic.html()
    assert faces(by_function) == faces(by_magic)
    assert sorted(by_function.parts) == CLASSES


def test_the_function_keeps_the_exercise_api():
    ex = autograd_lab.exercise("mean_square", seed=3)
    x = torch.tensor([-0.3, 0.8, 0.5], dtype=torch.double, requires_grad=True)
    (x ** 2).mean().backward()
    assert ex.check(autograd_lab.____).status == "not attempted"
    assert ex.check([round(v, 4) for v in x.grad.tolist()]).status == "correct"
    assert ex.seed == 3 and ex.name == "mean_square"
    torch.testing.assert_close(ex.expected, x.grad)
    assert ex.hint().title.startswith("Hint 1 of") and ex.solution().title == "Solution"
    assert ex.make_code == 'ex = autograd_lab.exercise("mean_square", seed=3)'
    assert repr(ex) == ex.text()  # outside a kernel: the text face, no widget
    assert ex._widget is None


# --- a real kernel ----------------------------------------------------------------------------------

jupyter_client = pytest.importorskip("jupyter_client")


def _run(kc, code):
    """Execute code in the kernel: (its display data, what it printed)."""
    msg_id = kc.execute(code, store_history=True)
    data, printed, errors = [], [], []
    while True:
        try:
            reply = kc.get_iopub_msg(timeout=120)
        except queue.Empty:  # pragma: no cover - a stuck kernel
            raise AssertionError("the kernel did not answer") from None
        if reply["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = reply["msg_type"], reply["content"]
        if kind in ("display_data", "execute_result"):
            data.append(content["data"])
        elif kind == "stream":
            printed.append((content["name"], content["text"]))
        elif kind == "error":
            errors.append(content["ename"] + ": " + content["evalue"])
        elif kind == "status" and content["execution_state"] == "idle":
            break
    assert not errors, errors
    return data, printed


@pytest.mark.xdist_group("processes")
def test_in_a_real_kernel_the_function_has_the_widget_of_the_magic():
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(extra_arguments=["--HistoryManager.enabled=False"], env={
        **__import__("os").environ, "OMP_NUM_THREADS": "1", "AUTOGRAD_LAB_LANG": "en"})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        _run(kc, "%load_ext autograd_lab\nimport autograd_lab")
        [function], printed = _run(kc, 'ex = autograd_lab.exercise("mean_square")\nex')
        [magic], printed2 = _run(kc, "%exercise mean_square")
        assert printed == printed2 == []
        for data in (function, magic):
            assert display.WIDGET_MIME in data and data["text/plain"].startswith("Exercise mean_square")
        assert function["text/plain"] == magic["text/plain"] and function["text/html"] == magic["text/html"]
        _, said = _run(kc, "import json\nprint(json.dumps([sorted(ex.parts), ex.widget.model_id, "
                           "ex.check([2/3, 4/3, 2.0]).status]))")
        parts, model_id, status = json.loads(said[0][1])
        assert parts == CLASSES and model_id == function[display.WIDGET_MIME]["model_id"] and status == "correct"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
